#include "orchestrator/matrix/expand.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <tuple>
#include <variant>

namespace dmlbench {
namespace {

// Orders points by the parameters that identify a run (CanonicalJson's, but
// the seed, which is the same for all points before repetitions).
struct SamePoint {
  bool operator()(const RunParams& a, const RunParams& b) const {
    auto identity = [](const RunParams& p) {
      return std::tie(p.architecture, p.workers, p.servers, p.batch_size, p.epochs, p.hidden, p.learning_rate,
                      p.overlap, p.bucket_bytes, p.partition_bytes, p.pulls_in_turn, p.max_iterations_per_epoch,
                      p.dataset, p.network.bandwidth_bits_per_s, p.network.latency_s);
    };
    return identity(a) < identity(b);
  }
};

bool InSplit(const SplitRule& split, const RunParams& params) {
  return std::all_of(split.allowed.begin(), split.allowed.end(), [&](const auto& entry) {
    const Value actual = Get(params, entry.first);
    return std::find(entry.second.begin(), entry.second.end(), actual) != entry.second.end();
  });
}

// A value as the experiment file writes it.
std::string ValueText(const Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  if (const auto* number = std::get_if<double>(&value)) {
    char buffer[64];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, *number).ptr);
  }
  if (const auto* flag = std::get_if<bool>(&value)) return *flag ? "true" : "false";
  if (const auto* text = std::get_if<std::string>(&value)) return Quoted(*text);
  std::string list;
  for (int size : std::get<std::vector<int>>(value)) list += (list.empty() ? "" : ", ") + std::to_string(size);
  return "[" + list + "]";
}

// "architecture = \"p2p\", workers = 4".
std::string AssignmentText(const Assignment& assignment) {
  std::string text;
  for (const auto& [param, value] : assignment) {
    text += (text.empty() ? "" : ", ") + std::string(Name(param)) + " = " + ValueText(value);
  }
  return text;
}

// The points of the cartesian product minus the excluded ones, without
// duplicates: points that differ only in values a parameter does not use
// (servers of a non-ps architecture, pulls_in_turn where it does not
// apply) are one point. Counts in `matched`
// the points each exclude matches.
std::vector<RunParams> ProductPoints(const MatrixSpec& spec, std::set<RunParams, SamePoint>& seen,
                                     std::vector<int>& matched) {
  matched.assign(spec.excludes.size(), 0);
  std::vector<RunParams> points;
  std::vector<std::size_t> index(spec.dimensions.size(), 0);
  for (bool done = false; !done;) {
    RunParams params = spec.defaults;
    for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
      const Dimension& dimension = spec.dimensions[d];
      for (std::size_t j = 0; j < dimension.params.size(); ++j) {
        Apply(spec.profiles, params, dimension.params[j], dimension.points[index[d]][j]);
      }
    }
    ResolveScopedParams(params);
    bool excluded = false;
    for (std::size_t e = 0; e < spec.excludes.size(); ++e) {
      if (!Matches(params, spec.excludes[e].first)) continue;
      excluded = true;
      ++matched[e];
    }
    if (!excluded && seen.insert(params).second) points.push_back(params);
    // Advance the odometer: the last dimension varies fastest.
    done = true;
    for (std::size_t d = spec.dimensions.size(); d-- > 0;) {
      if (++index[d] < spec.dimensions[d].points.size()) {
        done = false;
        break;
      }
      index[d] = 0;
    }
  }
  return points;
}

}  // namespace

std::string TooManyRuns(std::int64_t runs) {
  return "the matrix must expand to at most " + std::to_string(kMaxRuns) + " runs (points x repetitions), got " +
         (runs == std::numeric_limits<std::int64_t>::max() ? "more than " : "") + std::to_string(runs);
}

std::vector<PlannedRun> Expand(const MatrixSpec& spec, const TomlReader& reader) {
  std::set<RunParams, SamePoint> seen;
  std::vector<int> matched;
  std::vector<RunParams> points = ProductPoints(spec, seen, matched);
  for (std::size_t e = 0; e < spec.excludes.size(); ++e) {
    if (matched[e] != 0) continue;
    reader.Fail(spec.excludes[e].second, "[[exclude]] matches no point of the matrix (" +
                                             AssignmentText(spec.excludes[e].first) +
                                             "); remove it or correct its values");
  }
  if (points.empty() && spec.includes.empty()) {
    reader.Fail(spec.excludes.front().second,
                "expected at least one run, got none: [[exclude]] removes every point of the matrix");
  }
  for (const auto& [assignment, table] : spec.includes) {
    RunParams params = spec.defaults;
    for (const auto& [param, value] : assignment) Apply(spec.profiles, params, param, value);
    for (const auto& [param, value] : assignment) {
      const std::string fault = ScopeFault(params, param);
      if (!fault.empty()) reader.Fail(*table->get(Name(param)), fault);
    }
    ResolveScopedParams(params);
    if (!seen.insert(params).second) {
      reader.Fail(table->source(), "[[include]] must add a new run, got one already in the matrix: " +
                                       Describe(params));
    }
    points.push_back(params);
  }
  const std::int64_t total = static_cast<std::int64_t>(points.size()) * spec.repetitions;
  if (total > kMaxRuns) reader.Fail(spec.includes.back().second->source(), TooManyRuns(total));

  std::vector<PlannedRun> runs;
  runs.reserve(static_cast<std::size_t>(total));
  std::size_t calibration_runs = 0;
  for (int repetition = 0; repetition < spec.repetitions; ++repetition) {
    for (const RunParams& point : points) {
      PlannedRun run;
      run.params = point;
      run.params.repetition = repetition;
      run.params.seed = spec.base_seed + static_cast<std::uint64_t>(repetition);
      const bool calibration = spec.split.has_value() && InSplit(*spec.split, run.params);
      run.split = calibration ? "calibration" : "validation";
      calibration_runs += calibration;
      runs.push_back(std::move(run));
    }
  }
  if (spec.split.has_value() && calibration_runs == 0) {
    reader.Fail(spec.split->where,
                "calibration must match at least one run, got none of " + std::to_string(runs.size()));
  }
  return runs;
}

}  // namespace dmlbench
