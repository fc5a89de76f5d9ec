#include "orchestrator/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace dmlbench {
namespace {

struct Group {
  RunParams params;
  int runs = 0;
  std::vector<double> sample;
  bool warmup_included = false;
};

// Sorts configurations as people scan them: architecture, servers, workers,
// batch size, then whatever else tells them apart.
bool Before(const RunParams& x, const std::string& x_key, const RunParams& y, const std::string& y_key) {
  return std::make_tuple(Text(x.architecture), x.servers, x.workers, x.batch_size, std::cref(x_key)) <
         std::make_tuple(Text(y.architecture), y.servers, y.workers, y.batch_size, std::cref(y_key));
}

std::map<std::string, Group> ByConfiguration(const std::vector<RunSample>& runs) {
  std::map<std::string, Group> groups;
  for (const RunSample& run : runs) {
    if (run.steady_epoch_s.empty()) continue;
    auto [it, added] = groups.try_emplace(ConfigurationJson(run.params));
    Group& group = it->second;
    if (added) group.params = run.params;
    ++group.runs;
    group.sample.insert(group.sample.end(), run.steady_epoch_s.begin(), run.steady_epoch_s.end());
    group.warmup_included = group.warmup_included || run.warmup_included;
  }
  return groups;
}

SideSummary Summarise(const Group& group) {
  return {group.runs, MedianConfidenceInterval(group.sample, kCompareLevel), group.warmup_included};
}

void SortParams(std::vector<RunParams>* params) {
  std::sort(params->begin(), params->end(), [](const RunParams& x, const RunParams& y) {
    return Before(x, ConfigurationJson(x), y, ConfigurationJson(y));
  });
}

}  // namespace

std::string_view Text(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kNoDifference: return "no significant difference";
    case Verdict::kTooFewEpochs: return "too few epochs";
  }
  return "?";
}

Verdict Judge(const MedianInterval& a, const MedianInterval& b) {
  if (a.coverage < kCompareLevel || b.coverage < kCompareLevel) return Verdict::kTooFewEpochs;
  if (b.low > a.high) return Verdict::kSlower;
  if (b.high < a.low) return Verdict::kFaster;
  return Verdict::kNoDifference;
}

Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b) {
  const std::map<std::string, Group> side_a = ByConfiguration(a);
  const std::map<std::string, Group> side_b = ByConfiguration(b);
  Comparison comparison;
  for (const auto& [key, group] : side_a) {
    const auto other = side_b.find(key);
    if (other == side_b.end()) {
      comparison.only_a.push_back(group.params);
      continue;
    }
    ConfigurationComparison row;
    row.params = group.params;
    row.configuration = key;
    row.a = Summarise(group);
    row.b = Summarise(other->second);
    row.ratio = row.b.epoch_s.median / row.a.epoch_s.median;
    row.verdict = Judge(row.a.epoch_s, row.b.epoch_s);
    comparison.both.push_back(std::move(row));
  }
  for (const auto& [key, group] : side_b) {
    if (!side_a.contains(key)) comparison.only_b.push_back(group.params);
  }
  std::sort(comparison.both.begin(), comparison.both.end(),
            [](const ConfigurationComparison& x, const ConfigurationComparison& y) {
              return Before(x.params, x.configuration, y.params, y.configuration);
            });
  SortParams(&comparison.only_a);
  SortParams(&comparison.only_b);
  return comparison;
}

std::vector<Shift> ShiftByArchitecture(const Comparison& comparison) {
  std::vector<std::pair<std::string, std::vector<double>>> groups;  // in the order of `both`
  for (const ConfigurationComparison& c : comparison.both) {
    const std::string architecture = ArchitectureLabel(c.params.architecture, c.params.servers);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == architecture; });
    if (it == groups.end()) it = groups.insert(groups.end(), {architecture, {}});
    it->second.push_back(std::fabs(c.ratio - 1));
  }
  std::vector<Shift> shifts;
  for (const auto& [architecture, values] : groups) {
    shifts.push_back({architecture, static_cast<int>(values.size()), Median(values), Quantile(values, 0.95),
                      *std::max_element(values.begin(), values.end())});
  }
  return shifts;
}

}  // namespace dmlbench
