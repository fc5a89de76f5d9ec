// Params: the run parameters an experiment file may set, as the matrix
// stage handles them before expansion — their names, one value as read
// (Value), and how a value is put into and read out of RunParams. Also what
// the file declares (MatrixSpec) for expansion to turn into runs. Internal
// to orchestrator/matrix; pure, thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MATRIX_PARAMS_H_
#define DMLBENCH_ORCHESTRATOR_MATRIX_PARAMS_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <toml++/toml.h>

#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// In expansion order: the first varies slowest (schemas/matrix.md,
// "Expansion order"). Network comes first so that runs sharing a link
// shaping are consecutive.
enum class Param {
  kNetwork,
  kArchitecture,
  kServers,
  kWorkers,
  kBatchSize,
  kLearningRate,
  kHidden,
  kEpochs,
  kMaxIterationsPerEpoch,
  kWarmupIterations,
  kOverlap,
  kBucketBytes,
  kPartitionBytes,
  kPullsInTurn,
  kDataset,
  kEvaluate,
};
inline constexpr std::array<std::string_view, 16> kParamNames = {
    "network", "architecture", "servers", "workers", "batch_size", "learning_rate",
    "hidden", "epochs", "max_iterations_per_epoch", "warmup_iterations", "overlap", "bucket_bytes",
    "partition_bytes", "pulls_in_turn", "dataset", "evaluate"};

std::string_view Name(Param param);
std::optional<Param> FindParam(std::string_view name);

// One parameter value as read from the file. Integers stay 64-bit until they
// are stored into RunParams (after the range check); architecture, dataset
// and network are their text.
using Value = std::variant<std::int64_t, double, bool, std::string, std::vector<int>>;

// The parameter values of one point of a dimension, or of an include,
// exclude or split entry.
using Assignment = std::vector<std::pair<Param, Value>>;

// One axis of the cartesian product: a [matrix] list (one parameter) or a
// [[zip]] group (several parameters varying together).
struct Dimension {
  std::vector<Param> params;
  std::vector<std::vector<Value>> points;  // points[i][j]: value of params[j]
};

// [split] calibration: a run is calibration when every listed parameter
// has one of the listed values.
struct SplitRule {
  std::vector<std::pair<Param, std::vector<Value>>> allowed;
  toml::source_region where;
};

// What an experiment file declares, checked, before expansion.
struct MatrixSpec {
  std::map<std::string, NetworkProfile> profiles;  // [networks], by name
  RunParams defaults;                              // [defaults] over the built-in ones
  std::vector<Dimension> dimensions;               // in expansion order
  std::vector<std::pair<Assignment, const toml::table*>> includes;
  std::vector<std::pair<Assignment, toml::source_region>> excludes;
  std::optional<SplitRule> split;
  int repetitions = 1;
  std::uint64_t base_seed = 1;
};

// Sets `param` of `params` to `value` (profiles resolves a network name).
void Apply(const std::map<std::string, NetworkProfile>& profiles, RunParams& params, Param param,
           const Value& value);
// The value of `param` in `params`.
Value Get(const RunParams& params, Param param);
// True when `params` has every value of `assignment`.
bool Matches(const RunParams& params, const Assignment& assignment);
// Parameters that belong to some configurations alone take their neutral
// value elsewhere: servers belong to ps (other architectures get 0, ps
// without a servers value gets 1), pulls_in_turn to ps with one server
// exchanging whole without overlap (PullsInTurnApplies; elsewhere false),
// warmup_iterations to runs of 2 or more epochs (elsewhere 0: a sole epoch
// is measured, not warm-up).
void ResolveScopedParams(RunParams& params);
// Why `param`, set explicitly in `params` (an [[include]]'s or a command
// line's), does not apply there: servers beyond ps, pulls_in_turn = true
// where PullsInTurnApplies does not hold, warmup_iterations in a one-epoch
// run. "" when it applies.
std::string ScopeFault(const RunParams& params, Param param);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MATRIX_PARAMS_H_
