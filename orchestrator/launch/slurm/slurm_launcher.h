// SlurmLauncher: the Launcher of provider "slurm". It asks Slurm for nodes
// with `salloc --no-shell` — one allocation for the rest of the sweep, sized
// to the largest run it has still to run, or one per run — and starts each
// run inside it: a job step
// (`srun --jobid=J --mpi=pmix`), or mpirun, which starts its daemons as a
// step. After each run it reads how the run ended from Slurm (sacct where
// the cluster keeps accounting, else srun's report and `scontrol show job`)
// and gives up an allocation Slurm ended. Every Slurm command is an argv
// vector (core/subprocess.h), never a shell line, so the [slurm] strings
// reach Slurm literally; SLURM_CONF is taken from the environment as every
// Slurm client does. It owns its allocation and releases it (scancel) when
// destroyed. Launch() from one thread at a time.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/launch/launcher.h"

namespace dmlbench {

class LocalLauncher;

struct SlurmLauncherOptions {
  SlurmOptions slurm;
  // The name of every job it submits (SlurmJobName). Jobs of this name that
  // Prepare() finds were left by an orchestrator of the same database that
  // stopped without releasing them: it cancels them.
  std::string job_name = "dmlbench";
  std::ostream* notes = nullptr;  // what it cancelled at Prepare(); nullptr = std::cerr
  std::string trainer;         // on a filesystem every node sees at this path
  // The trainer's --dataset-cache on the nodes (with a dataset only): the
  // dataset decoded once per node, or once per shared home; "" = decoded at
  // every run.
  std::string dataset_cache_dir;
  std::string mpirun = "mpirun";
  double kill_grace_s = 5;     // SIGTERM to srun, then SIGKILL
};

// How a job step ended, read from what srun printed on its standard error
// (Slurm's own lines: "launching StepId=12.3 on host n1, ...", "*** STEP 12.3
// ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"). Works without accounting.
struct StepReport {
  std::string step_id;             // "12.3"; "" when srun never launched it
  std::vector<std::string> nodes;  // where its tasks were launched, in order
  std::vector<std::string> failed_nodes;  // "srun: error: Node failure on n2"
  // "" (no Slurm state printed: the step's tasks decided), "TIMEOUT",
  // "CANCELLED", "NODE_FAIL" (also when srun only names a failed node),
  // "PREEMPTED" or "OUT_OF_MEMORY".
  std::string state;
  // A node could not start the program ("slurmstepd: error: execve():
  // /x/dmlbench-trainer: No such file or directory"): "<path>: <cause>",
  // and the node whose task exited first ("srun: error: n1: task 0:
  // Exited with exit code 2"); "" otherwise.
  std::string cannot_execute;
  std::string exited_node;
};
StepReport ReadStepReport(std::string_view srun_stderr);

// Whether a line of srun's standard error is one of its verbose (-v)
// progress lines, left out of the stderr kept for the attempt.
bool IsSrunProgressLine(std::string_view line);

// "dmlbench-" and 12 hex digits of the SHA-256 of this machine's name and
// the database's absolute path: the job name of the sweeps of one database
// (its run lock makes them one at a time), so that the next sweep finds
// the jobs of one that was killed.
std::string SlurmJobName(const std::string& db_path);

class SlurmLauncher : public Launcher {
 public:
  explicit SlurmLauncher(SlurmLauncherOptions options);
  // Releases the allocation still held (scancel), waiting for scancel.
  ~SlurmLauncher() override;
  SlurmLauncher(const SlurmLauncher&) = delete;
  SlurmLauncher& operator=(const SlurmLauncher&) = delete;

  // Cancels the jobs an earlier sweep of the same database left (named
  // job_name), then returns the nodes of the partition (`sinfo`) with the
  // facts `scontrol show node` gives (CPUs, memory, OS, features). Throws
  // LaunchError when the trainer is missing or Slurm cannot be reached.
  // Needs no allocation.
  std::vector<HostFacts> Prepare() override;
  std::string TrainerSha256() const override;
  // After Prepare(): the partition's CPUs (its nodes, with ranks =
  // "per-node"): no allocation can hold a run of more ranks.
  std::optional<LaunchCapacity> Capacity() const override;
  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override;

 private:
  class Allocation;
  // Holds an allocation for `spec` (its ranks; per sweep, also the
  // sweep_ranks to come), or says why not in `result`; while Slurm keeps the
  // request pending, tells spec.on_status why every few seconds.
  bool EnsureAllocation(const LaunchSpec& spec, LaunchResult& result, const std::atomic<bool>& cancel);
  // The trainer and its arguments, as the step or mpirun starts it.
  std::vector<std::string> TrainerArgv(const LaunchSpec& spec) const;
  std::vector<std::string> StepArgv(const LaunchSpec& spec) const;
  std::vector<std::string> MpirunArgv(const LaunchSpec& spec) const;
  std::vector<std::string> Environment() const;
  // The attempt's status and reason from how Slurm says the run ended;
  // drops the allocation when Slurm ended it.
  void ReadEnd(const LaunchSpec& spec, const std::string& stderr_text, int wait_status, LaunchResult& result);

  SlurmLauncherOptions options_;
  std::unique_ptr<LocalLauncher> local_;  // hashes the trainer
  std::unique_ptr<Allocation> allocation_;
  std::optional<LaunchCapacity> capacity_;  // found by Prepare()
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_
