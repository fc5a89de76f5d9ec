// TrainerCommand: the trainer's command-line contract as the orchestrator
// uses it — the arguments that make `dmlbench-trainer` run a RunParams, and
// the size of synthetic runs, and the arguments of one job that trains
// several runs in turn (`--run "OPTIONS"` each). Every launcher passes these unchanged (adding
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

// The arguments of one job that trains `runs` one after the other, in that
// order, each its own run_start ... run_end on the events stream. The runs
// must share their data (all `synthetic`, or all the dataset the launcher
// passes).
std::vector<std::string> TrainerArgs(const std::vector<const RunParams*>& runs);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_TRAINER_COMMAND_H_
