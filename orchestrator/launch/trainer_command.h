// TrainerCommand: the trainer's command-line contract as the orchestrator
// uses it — the arguments that make `dmlbench-trainer` run a RunParams, and
// the size of synthetic runs. Every launcher passes these unchanged (adding
// only `--dataset DIR`). Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_TRAINER_COMMAND_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_TRAINER_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// Training samples of `dataset = "synthetic"` runs (--synthetic N).
inline constexpr std::int64_t kSyntheticTrainSamples = 10000;

// The trainer's command-line arguments for a run (the launcher adds
// `--dataset DIR` from LaunchSpec::dataset_dir).
std::vector<std::string> TrainerArgs(const RunParams& params);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_TRAINER_COMMAND_H_
