#include "orchestrator/matrix/params.h"

#include <algorithm>

#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

std::string_view Name(Param param) { return kParamNames[static_cast<std::size_t>(param)]; }

std::optional<Param> FindParam(std::string_view name) {
  for (std::size_t i = 0; i < kParamNames.size(); ++i) {
    if (kParamNames[i] == name) return static_cast<Param>(i);
  }
  return std::nullopt;
}

void Apply(const std::map<std::string, NetworkProfile>& profiles, RunParams& params, Param param,
           const Value& value) {
  switch (param) {
    case Param::kNetwork: params.network = profiles.at(std::get<std::string>(value)); break;
    case Param::kArchitecture: params.architecture = *FromText<Architecture>(std::get<std::string>(value)); break;
    case Param::kServers: params.servers = static_cast<int>(std::get<std::int64_t>(value)); break;
    case Param::kWorkers: params.workers = static_cast<int>(std::get<std::int64_t>(value)); break;
    case Param::kBatchSize: params.batch_size = static_cast<int>(std::get<std::int64_t>(value)); break;
    case Param::kLearningRate: params.learning_rate = std::get<double>(value); break;
    case Param::kHidden: params.hidden = std::get<std::vector<int>>(value); break;
    case Param::kEpochs: params.epochs = static_cast<int>(std::get<std::int64_t>(value)); break;
    case Param::kMaxIterationsPerEpoch: params.max_iterations_per_epoch = std::get<std::int64_t>(value); break;
    case Param::kWarmupIterations: params.warmup_iterations = std::get<std::int64_t>(value); break;
    case Param::kOverlap: params.overlap = std::get<bool>(value); break;
    case Param::kBucketBytes: params.bucket_bytes = std::get<std::int64_t>(value); break;
    case Param::kPartitionBytes: params.partition_bytes = std::get<std::int64_t>(value); break;
    case Param::kPullsInTurn: params.pulls_in_turn = std::get<bool>(value); break;
    case Param::kDataset: params.dataset = std::get<std::string>(value); break;
    case Param::kEvaluate: params.evaluate = std::get<bool>(value); break;
  }
}

Value Get(const RunParams& params, Param param) {
  switch (param) {
    case Param::kNetwork: return params.network.name;
    case Param::kArchitecture: return std::string(Text(params.architecture));
    case Param::kServers: return std::int64_t{params.servers};
    case Param::kWorkers: return std::int64_t{params.workers};
    case Param::kBatchSize: return std::int64_t{params.batch_size};
    case Param::kLearningRate: return params.learning_rate;
    case Param::kHidden: return params.hidden;
    case Param::kEpochs: return std::int64_t{params.epochs};
    case Param::kMaxIterationsPerEpoch: return params.max_iterations_per_epoch;
    case Param::kWarmupIterations: return params.warmup_iterations;
    case Param::kOverlap: return params.overlap;
    case Param::kBucketBytes: return params.bucket_bytes;
    case Param::kPartitionBytes: return params.partition_bytes;
    case Param::kPullsInTurn: return params.pulls_in_turn;
    case Param::kEvaluate: return params.evaluate;
    case Param::kDataset: break;
  }
  return params.dataset;
}

bool Matches(const RunParams& params, const Assignment& assignment) {
  return std::all_of(assignment.begin(), assignment.end(),
                     [&](const auto& entry) { return Get(params, entry.first) == entry.second; });
}

void ResolveScopedParams(RunParams& params) {
  if (params.architecture != Architecture::kPs) {
    params.servers = 0;
  } else if (params.servers == 0) {
    params.servers = 1;
  }
  if (!PullsInTurnApplies(params)) params.pulls_in_turn = false;
  if (params.epochs < 2) params.warmup_iterations = 0;
}

std::string ScopeFault(const RunParams& params, Param param) {
  if (param == Param::kServers && params.architecture != Architecture::kPs) {
    return "servers applies only to architecture \"ps\", got architecture " + Quoted(Text(params.architecture));
  }
  if (param == Param::kPullsInTurn && params.pulls_in_turn) {
    RunParams resolved = params;
    ResolveScopedParams(resolved);
    if (!resolved.pulls_in_turn) {
      return "pulls_in_turn applies only to architecture \"ps\" with 1 server, partition_bytes = 0 and overlap = "
             "false, got " + Describe(resolved, ShownParams{.partition_bytes = true, .repetition = false});
    }
  }
  if (param == Param::kWarmupIterations && params.warmup_iterations != 0 && params.epochs < 2) {
    return "warmup_iterations applies only to runs of 2 or more epochs (a sole epoch is measured, not warm-up), "
           "got epochs = " + std::to_string(params.epochs);
  }
  return "";
}

}  // namespace dmlbench
