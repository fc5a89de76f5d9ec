// Launcher: the seam between the run loop and where trainer processes run
// (this machine, SSH hosts, the emulated cluster). A launcher prepares its
// hosts once, then starts one MPI job per call and streams the trainer's
// event lines (schemas/trainer-events.md) back as they arrive. It owns its
// connections; it does not touch the database. Launch() may be called from
// several threads at once when max_concurrent_runs() > 1, each job on the
// hosts its spec names (plan/schedule.h hands them out, disjoint).
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_LAUNCHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/slurm_job.h"

namespace dmlbench {

// Environment (NAME=value) of every mpirun dmlbench starts. Open MPI 4.1's
// daemons otherwise share the hardware topology through a shared-memory map
// placed at a hole they find by scanning their own address space; one orted
// crashed doing so (SIGSEGV in hwloc_shmem_topology_write) in a test run.
// mpirun forwards OMPI_MCA_* variables to the daemons it starts over ssh.
inline constexpr const char* kMpirunEnvironment[] = {"OMPI_MCA_rtc_hwloc_vmhole=none"};

// Thrown by Launcher::Prepare() when a host cannot be used; what() names the
// host and the cause.
class LaunchError : public Error {
 public:
  using Error::Error;
};

struct LaunchSpec {
  std::string run_key;                     // for naming work files and logs
  int ranks = 1;                           // MPI world size (workers + servers)
  std::vector<std::string> trainer_args;   // after the trainer binary; must include `--events -`
  int runs = 1;                            // runs the job trains in turn (--run each), a run_end each
  std::string dataset_dir;                 // local directory of IDX files to use; "" = none (synthetic)
  NetworkProfile network;
  double timeout_s = 600;                  // wall-clock limit of the whole mpirun
  // A local, existing, empty directory where Launch() leaves, before it
  // returns, what the job printed in the layout of job_output.h (each rank's
  // stdout and stderr, mpirun's stderr), however the job ended; output of a
  // host that was lost may be missing. "" = keep none.
  std::string output_dir;
  // The most ranks of any run the sweep has still to run, this one's
  // included (0: only this job's): what hosts held for the rest of the
  // sweep must hold.
  int sweep_ranks = 0;
  // The hosts the job runs on, none of them another running job's (from
  // Hosts()); empty = the launcher chooses (one job at a time).
  std::vector<std::string> hosts;
  // Told, from the calling thread, what the launch waits on before the job
  // runs (a Slurm request pending, and Slurm's reason), "" once it no
  // longer waits; for the progress line. May be empty.
  std::function<void(const std::string& waiting_on)> on_status;
};

// How many ranks one job can have on the hosts a launcher prepared, and
// what says so ("slurm partition \"debug\" (2 nodes, 16 CPUs)").
struct LaunchCapacity {
  int ranks = 0;
  std::string source;
};

// A host jobs can be given, and how many ranks it holds.
struct LaunchHost {
  std::string name;
  int slots = 1;
};

struct LaunchResult {
  int exit_code = -1;                      // of mpirun; -1 if it never ran
  bool timed_out = false;
  bool interrupted = false;                // the cancel flag was raised
  bool host_failure = false;               // a host was lost/unreachable: worth retrying elsewhere
  bool permanent = false;                  // the job cannot start as configured: every attempt fails alike
  std::string failure_reason;              // one line, empty on success
  std::string stderr_tail;                 // last ~8 KiB of mpirun's stderr
  std::string command_line;                // as executed (shell-quoted)
  std::vector<std::string> hosts;          // host names the ranks ran on
  double link_shaping_s = 0;               // of the call, shaping the links to spec.network before mpirun
  std::optional<SlurmJobFacts> slurm;      // the Slurm job and step the ranks ran in, if any
};

class Launcher {
 public:
  virtual ~Launcher() = default;

  // Connects to and provisions every host; returns their facts. Throws
  // LaunchError naming the host and the cause when a host cannot be used.
  virtual std::vector<HostFacts> Prepare() = 0;

  // sha256 (hex) of the trainer binary runs will execute (part of the run key).
  virtual std::string TrainerSha256() const = 0;

  // How many Launch() calls may run at once (disjoint hosts).
  virtual int max_concurrent_runs() const { return 1; }

  // After Prepare(): the hosts a LaunchSpec may name, in the order jobs
  // are given them; empty when the launcher places its jobs itself (this
  // machine, the emulated cluster, a Slurm allocation).
  virtual std::vector<LaunchHost> Hosts() const { return {}; }

  // The hosts of Hosts() lost in this sweep (a connection that failed):
  // no later job is given them.
  virtual std::vector<std::string> LostHosts() const { return {}; }

  // After Prepare(): how many ranks one job can have, when only the hosts
  // could say (a Slurm partition); nullopt when known before (an inventory)
  // or not bounded.
  virtual std::optional<LaunchCapacity> Capacity() const { return std::nullopt; }

  // Runs one job to completion. Each stdout line of the trainer is passed to
  // on_line (from the calling thread) as soon as it arrives. Returns when the
  // job ended, timed out (the process group is killed) or `cancel` became
  // true (the job is stopped). Never throws for a failing job: that is a
  // LaunchResult with a reason.
  virtual LaunchResult Launch(const LaunchSpec& spec,
                              const std::function<void(std::string_view line)>& on_line,
                              const std::atomic<bool>& cancel) = 0;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_LAUNCHER_H_
