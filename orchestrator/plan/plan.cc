#include "orchestrator/plan/plan.h"

#include <filesystem>
#include <map>

#include "orchestrator/core/sha256.h"
#include "orchestrator/launch/trainer_command.h"
#include "orchestrator/matrix/matrix.h"

namespace dmlbench {

std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir) {
  if (params.dataset == "synthetic") {
    return "synthetic:" + std::to_string(params.seed) + ":" + std::to_string(kSyntheticTrainSamples);
  }
  // Hashed once per directory: a sweep reads one, and 30 MB per run would
  // dominate `plan`.
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(dataset_dir); it != cache.end()) return it->second;
  std::vector<std::string> files;
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    std::string file = dataset_dir + "/" + base + ".gz";
    if (!std::filesystem::is_regular_file(file)) file = dataset_dir + "/" + base;
    if (!std::filesystem::is_regular_file(file)) {
      throw PlanError(dataset_dir + ": neither " + base + ".gz nor " + base + " found");
    }
    files.push_back(file);
  }
  try {
    return cache[dataset_dir] = Sha256FilesHex(files);
  } catch (const Sha256Error& e) {
    throw PlanError(e.what());
  }
}

std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const std::string& trainer_sha256,
                           const std::string& dataset_dir) {
  std::vector<PlanItem> items;
  items.reserve(experiment.runs.size());
  std::vector<std::string> keys;
  keys.reserve(experiment.runs.size());
  for (const PlannedRun& run : experiment.runs) {
    PlanItem item;
    item.run = run;
    item.dataset_sha256 = DatasetChecksum(run.params, dataset_dir);
    item.run_key = RunKey(run.params, trainer_sha256, item.dataset_sha256);
    keys.push_back(item.run_key);
    items.push_back(std::move(item));
  }
  const auto stored = store.FindRuns(keys);
  for (PlanItem& item : items) {
    auto it = stored.find(item.run_key);
    if (it == stored.end()) {
      item.state = RunState::kPending;
      continue;
    }
    const StoredRun& run = it->second;
    item.state = run.status;
    item.attempts = run.attempts;
    item.failure_reason = run.failure_reason;
    // The split was decided when the run was first planned and never changes.
    item.run.split = run.split;
  }
  return items;
}

}  // namespace dmlbench
