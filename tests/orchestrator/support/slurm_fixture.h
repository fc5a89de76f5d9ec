// SlurmFixture: a private Slurm on this machine — munged, slurmctld and one
// slurmd (node "n1", 8 CPUs as configured) on free ports in a fresh temp
// directory, no accounting, finished jobs in a jobcomp file — with
// SLURM_CONF set in this process's environment for the Slurm clients it and
// its children run. The destructor stops the daemons in reverse order
// (slurmd, slurmctld, munged) and removes the directory. Usable only as root
// with the Slurm packages installed (Available()). No GoogleTest; failures
// throw std::runtime_error. One per process, one thread.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_

#include <memory>
#include <string>

namespace dmlbench {
class Child;
}

namespace dmlbench::testing {

class SlurmFixture {
 public:
  // "" when a fixture can start here, else why not ("not root", "slurmctld
  // is not installed").
  static std::string Unavailable();

  // Starts the daemons and waits until n1 is idle.
  SlurmFixture();
  ~SlurmFixture();
  SlurmFixture(const SlurmFixture&) = delete;
  SlurmFixture& operator=(const SlurmFixture&) = delete;

  const std::string& dir() const { return dir_; }
  std::string conf() const { return dir_ + "/etc/slurm.conf"; }
  std::string jobcomp() const { return dir_ + "/log/jobcomp.txt"; }
  std::string logs() const;  // the daemons' logs, for a failing test's message

 private:
  void Stop() noexcept;

  std::string dir_;
  pid_t munged_pid_ = -1;
  std::unique_ptr<Child> slurmctld_;
  std::unique_ptr<Child> slurmd_;
};

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SLURM_FIXTURE_H_
