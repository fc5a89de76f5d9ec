// SlurmFixture: a private Slurm on this machine — munged, slurmctld and one
// slurmd per node ("n1", "n2", ..., each its own port on 127.0.0.1, 8 CPUs
// unless told) on free ports in a fresh temp directory, no accounting,
// finished jobs in a jobcomp file — with SLURM_CONF set in this process's
// environment for the Slurm clients it and its children run. Several nodes
// share this machine's name, so Open MPI is told to use TCP on loopback
// between all ranks (its shared-memory files would collide); a node an
// administrator sets DOWN stays down (ReturnToService=1) until the test
// resumes it. The destructor stops the daemons in reverse order
// (slurmd, slurmctld, munged) and removes the directory. Usable only as root
// with the Slurm packages installed (Available()). No GoogleTest; failures
// throw std::runtime_error. One per process, one thread.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

namespace dmlbench {
class Child;
}

namespace dmlbench::testing {

class SlurmFixture {
 public:
  // "" when a fixture can start here, else why not ("not root", "slurmctld
  // is not installed").
  static std::string Unavailable();

  // Starts the daemons and waits until every node is idle.
  explicit SlurmFixture(int nodes = 1, int cpus_per_node = 8);
  ~SlurmFixture();
  SlurmFixture(const SlurmFixture&) = delete;
  SlurmFixture& operator=(const SlurmFixture&) = delete;

  const std::string& dir() const { return dir_; }
  std::string conf() const { return dir_ + "/etc/slurm.conf"; }
  std::string jobcomp() const { return dir_ + "/log/jobcomp.txt"; }
  std::string logs() const;  // the daemons' logs, for a failing test's message
  // Stops slurmctld and starts it again from its saved state, as an
  // administrator's restart does (running jobs are kept); returns once it
  // answers.
  void RestartController();

 private:
  void Stop() noexcept;
  void StartController(bool keep_state);

  std::string dir_;
  int nodes_;
  pid_t munged_pid_ = -1;
  std::unique_ptr<Child> slurmctld_;
  std::vector<std::unique_ptr<Child>> slurmds_;  // of n1, n2, ...
};

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_
