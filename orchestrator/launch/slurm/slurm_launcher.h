// SlurmLauncher: the Launcher of provider "slurm". It asks Slurm for nodes
// with `salloc --no-shell` — one allocation for the whole sweep, sized to its
// largest run, or one per run — and starts each run as a job step of that
// allocation (`srun --jobid=J --mpi=pmix`). Every Slurm
// command is an argv vector (core/subprocess.h), never a shell line, so the
// [slurm] strings reach Slurm literally; SLURM_CONF is taken from the
// environment as every Slurm client does. It owns its allocation and
// releases it (scancel) when destroyed. Launch() from one thread at a time.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_

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
  std::string trainer;         // on a filesystem every node sees at this path
  std::string mpirun = "mpirun";
  int largest_ranks = 1;       // ranks of the sweep's largest run: the size of a per-sweep allocation
  double kill_grace_s = 5;     // SIGTERM to srun, then SIGKILL
};

// How a job step ended, read from what srun printed on its standard error
// (Slurm's own lines: "launching StepId=12.3 on host n1, ...", "*** STEP 12.3
// ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"). Works without accounting.
struct StepReport {
  std::string step_id;             // "12.3"; "" when srun never launched it
  std::vector<std::string> nodes;  // where its tasks were launched, in order
  // "" (no Slurm state printed: the step's tasks decided), "TIMEOUT",
  // "CANCELLED", "NODE_FAIL", "PREEMPTED" or "OUT_OF_MEMORY".
  std::string state;
};
StepReport ReadStepReport(std::string_view srun_stderr);

// Whether a line of srun's standard error is one of its verbose (-v)
// progress lines, left out of the stderr kept for the attempt.
bool IsSrunProgressLine(std::string_view line);

class SlurmLauncher : public Launcher {
 public:
  explicit SlurmLauncher(SlurmLauncherOptions options);
  // Releases the allocation still held (scancel), waiting for scancel.
  ~SlurmLauncher() override;
  SlurmLauncher(const SlurmLauncher&) = delete;
  SlurmLauncher& operator=(const SlurmLauncher&) = delete;

  // The nodes of the partition (`sinfo`: name, CPUs, memory, features).
  // Throws LaunchError when the trainer is missing or Slurm cannot be
  // reached. Needs no allocation.
  std::vector<HostFacts> Prepare() override;
  std::string TrainerSha256() const override;
  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override;

 private:
  class Allocation;
  // Holds an allocation of at least `ranks` tasks, or says why not in `result`.
  bool EnsureAllocation(int ranks, LaunchResult& result, const std::atomic<bool>& cancel);
  std::vector<std::string> StepArgv(const LaunchSpec& spec) const;

  SlurmLauncherOptions options_;
  std::unique_ptr<LocalLauncher> local_;  // hashes the trainer
  std::unique_ptr<Allocation> allocation_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_LAUNCHER_H_
