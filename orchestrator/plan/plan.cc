#include "orchestrator/plan/plan.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/trainer_command.h"
#include "orchestrator/matrix/matrix.h"

namespace dmlbench {
namespace {

constexpr double kChecksumTimeoutS = 300;
constexpr char kTrainerErrorPrefix[] = "dmlbench-trainer: error: ";

}  // namespace

std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir, const std::string& trainer) {
  if (params.dataset == "synthetic") {
    return "synthetic:" + std::to_string(params.seed) + ":" + std::to_string(kSyntheticTrainSamples);
  }
  // Computed once per directory: a sweep reads one, and 30 MB per run would
  // dominate `plan`.
  static std::map<std::pair<std::string, std::string>, std::string> cache;
  const auto key = std::make_pair(trainer, dataset_dir);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const CommandOutput output = RunCommand({trainer, "--dataset-sha256", dataset_dir}, kChecksumTimeoutS);
  std::string checksum = output.out.substr(0, output.out.find('\n'));
  if (output.exit_code != 0 || checksum.size() != 64) {
    std::string message = output.err.substr(0, output.err.find('\n'));
    if (message.rfind(kTrainerErrorPrefix, 0) == 0) {
      message.erase(0, std::string_view(kTrainerErrorPrefix).size());
    } else {
      message = "cannot compute the checksum of dataset " + dataset_dir + " with " + trainer + ": " +
                (message.empty() ? "exit status " + std::to_string(output.exit_code) : message);
    }
    throw PlanError(message);
  }
  return cache[key] = std::move(checksum);
}

std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const PlanInputs& inputs) {
  std::vector<PlanItem> items;
  items.reserve(experiment.runs.size());
  std::vector<std::string> keys;
  std::vector<std::string> legacy_keys;  // the keys of runs stored before systems were recorded
  keys.reserve(2 * experiment.runs.size());
  for (const PlannedRun& run : experiment.runs) {
    PlanItem item;
    item.run = run;
    item.dataset_sha256 = DatasetChecksum(run.params, inputs.dataset_dir, inputs.trainer);
    item.run_key = RunKey(run.params, inputs.trainer_sha256, item.dataset_sha256, inputs.system);
    legacy_keys.push_back(RunKey(run.params, inputs.trainer_sha256, item.dataset_sha256));
    item.experiments = {experiment.name};
    keys.push_back(item.run_key);
    items.push_back(std::move(item));
  }
  std::vector<std::string> looked_up = keys;
  if (!inputs.system.empty()) looked_up.insert(looked_up.end(), legacy_keys.begin(), legacy_keys.end());
  const auto stored = store.FindRuns(looked_up);
  for (std::size_t i = 0; i < items.size(); ++i) {
    PlanItem& item = items[i];
    auto it = stored.find(item.run_key);
    if (it == stored.end() && !inputs.system.empty()) {
      // Stored before systems were part of a key: it is that run, wherever it ran.
      it = stored.find(legacy_keys[i]);
      if (it != stored.end() && !it->second.system.empty()) it = stored.end();
      if (it != stored.end()) item.run_key = legacy_keys[i];
    }
    if (it == stored.end()) {
      item.state = RunState::kPending;
      continue;
    }
    const RunRecord& run = it->second;
    item.system = run.system;
    item.state = run.status;
    item.run_id = run.run_id;
    item.attempts = run.attempts;
    item.failures = run.failures;
    item.failure_reason = run.failure_reason;
    item.tags = run.tags;
    item.experiments = run.experiments;
    if (std::find(item.experiments.begin(), item.experiments.end(), experiment.name) == item.experiments.end()) {
      item.experiments.push_back(experiment.name);
    }
    // The split was decided when the run was first planned and never changes.
    item.run.split = run.split;
  }
  return items;
}

void CheckSlots(const std::vector<PlanItem>& plan, const HostSlots& hosts) {
  constexpr int kNamed = 3;
  std::vector<RunParams> params;
  for (const PlanItem& item : plan) params.push_back(item.run.params);
  const ShownParams shown = VaryingIn(params);
  int too_large = 0;
  std::string named;
  for (const PlanItem& item : plan) {
    const int ranks = item.run.params.ranks();
    if (item.state == RunState::kComplete || ranks <= hosts.slots) continue;
    if (too_large++ < kNamed) {
      named += (named.empty() ? "" : ", ") + Describe(item.run.params, shown) + " (" + std::to_string(ranks) +
               " ranks)";
    }
  }
  if (too_large == 0) return;
  if (too_large > kNamed) named += " and " + std::to_string(too_large - kNamed) + " more";
  throw PlanError(hosts.source + " has " + std::to_string(hosts.slots) + (hosts.slots == 1 ? " slot" : " slots") +
                  ", but " + std::to_string(too_large) + (too_large == 1 ? " run needs" : " runs need") +
                  " more ranks: " + named + "; remove such runs with [[exclude]] (or leave them out with --only) or " +
                  "add hosts");
}

std::vector<PlanItem> Select(std::vector<PlanItem> items, const Filter& filter, const std::string& experiment_name,
                             const std::string& trainer_sha256) {
  if (filter.empty()) return items;
  const size_t planned = items.size();
  std::erase_if(items, [&](const PlanItem& item) {
    return !filter.Matches({item.run.params, item.run_key, item.state, item.run.split, item.tags,
                            item.experiments, trainer_sha256});
  });
  if (items.empty()) {
    throw PlanError(filter.NoMatch("the " + std::to_string(planned) + (planned == 1 ? " run of " : " runs of ") +
                                   experiment_name));
  }
  return items;
}

}  // namespace dmlbench
