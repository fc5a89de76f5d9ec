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
  std::vector<double> run_medians;
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
    group.run_medians.push_back(Median(run.steady_epoch_s));
    group.warmup_included = group.warmup_included || run.warmup_included;
  }
  return groups;
}

SideSummary Summarise(const Group& group) {
  return {group.runs, MedianConfidenceInterval(group.sample, kCompareLevel), group.run_medians,
          group.warmup_included};
}

void SortParams(std::vector<RunParams>* params) {
  std::sort(params->begin(), params->end(), [](const RunParams& x, const RunParams& y) {
    return Before(x, ConfigurationJson(x), y, ConfigurationJson(y));
  });
}

Change Classify(bool enough_runs, double p_holm, double ratio, double factor) {
  if (!enough_runs) return Change::kTooFewRuns;
  if (p_holm >= kGateAlpha) return Change::kNotSignificant;
  if (ratio >= factor) return Change::kSlower;
  if (ratio <= 1 / factor) return Change::kFaster;
  return Change::kWithinFactor;
}

// The smallest p the trend test can give builds of these sizes: runs
// perfectly ordered, each build's beyond all earlier ones.
double SmallestTrendP(const std::vector<int>& runs) {
  std::vector<std::vector<double>> ordered;
  double next = 0;
  for (int n : runs) {
    ordered.emplace_back();
    for (int i = 0; i < n; ++i) ordered.back().push_back(next++);
  }
  return JonckheereTerpstra(ordered).p;
}

}  // namespace

std::string_view Text(Change change) {
  switch (change) {
    case Change::kSlower: return "slower";
    case Change::kFaster: return "faster";
    case Change::kWithinFactor: return "within factor";
    case Change::kNotSignificant: return "~";
    case Change::kTooFewRuns: return "too few runs";
  }
  return "?";
}

RunTest TestRuns(const std::vector<double>& a_run_medians, const std::vector<double>& b_run_medians, int tests) {
  RunTest test;
  test.runs_a = static_cast<int>(a_run_medians.size());
  test.runs_b = static_cast<int>(b_run_medians.size());
  test.ratio = Median(b_run_medians) / Median(a_run_medians);
  test.ratio_ci = RatioConfidenceInterval(a_run_medians, b_run_medians, kCompareLevel);
  test.u = MannWhitneyU(a_run_medians, b_run_medians);
  test.p_holm = test.u.p;
  test.enough_runs = tests * SmallestUTestP(test.runs_a, test.runs_b) < kGateAlpha;
  return test;
}

void AdjustAndClassify(const std::vector<RunTest*>& tests, double factor) {
  std::vector<double> p;
  for (const RunTest* test : tests) p.push_back(test->u.p);
  const std::vector<double> adjusted = HolmAdjust(p);
  for (std::size_t i = 0; i < tests.size(); ++i) {
    tests[i]->p_holm = adjusted[i];
    tests[i]->change = Classify(tests[i]->enough_runs, adjusted[i], tests[i]->ratio, factor);
  }
}

int RunsNeeded(int tests) {
  int n = 1;
  while (tests * SmallestUTestP(n, n) >= kGateAlpha) ++n;
  return n;
}

bool Fails(Change change, FailIf fail_if) {
  switch (fail_if) {
    case FailIf::kSlower: return change == Change::kSlower;
    case FailIf::kFaster: return change == Change::kFaster;
    case FailIf::kDifferent: return change == Change::kSlower || change == Change::kFaster;
  }
  return false;
}

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

Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b, double factor) {
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
  std::vector<RunTest*> tests;
  for (ConfigurationComparison& row : comparison.both) {
    row.test = TestRuns(row.a.run_median_s, row.b.run_median_s, static_cast<int>(comparison.both.size()));
    tests.push_back(&row.test);
  }
  AdjustAndClassify(tests, factor);
  SortParams(&comparison.only_a);
  SortParams(&comparison.only_b);
  return comparison;
}

History CompareHistory(const std::vector<std::pair<std::string, std::vector<RunSample>>>& builds,
                       double factor) {
  History history;
  std::map<std::string, ConfigurationHistory> by_configuration;
  std::map<std::string, std::vector<std::vector<double>>> run_medians;  // per configuration, per build
  for (std::size_t i = 0; i < builds.size(); ++i) {
    history.builds.push_back(builds[i].first);
    for (const auto& [key, group] : ByConfiguration(builds[i].second)) {
      auto [it, added] = by_configuration.try_emplace(key);
      if (added) {
        it->second.params = group.params;
        it->second.configuration = key;
        it->second.runs.assign(builds.size(), 0);
        it->second.median_s.assign(builds.size(), 0);
        run_medians[key].resize(builds.size());
      }
      it->second.runs[i] = group.runs;
      it->second.median_s[i] = Median(group.run_medians);
      run_medians[key][i] = group.run_medians;
    }
  }
  for (auto& [key, c] : by_configuration) {
    std::vector<double> medians;
    for (std::size_t i = 0; i < builds.size(); ++i) {
      if (c.runs[i] > 0) medians.push_back(c.median_s[i]);
    }
    if (medians.size() < 2) continue;
    c.ratio = medians.back() / medians.front();
    c.trend = JonckheereTerpstra(run_medians[key]);
    history.configurations.push_back(std::move(c));
  }
  std::sort(history.configurations.begin(), history.configurations.end(),
            [](const ConfigurationHistory& x, const ConfigurationHistory& y) {
              return Before(x.params, x.configuration, y.params, y.configuration);
            });
  std::vector<double> p;
  for (const ConfigurationHistory& c : history.configurations) p.push_back(c.trend.p);
  const std::vector<double> adjusted = HolmAdjust(p);
  const double tests = static_cast<double>(p.size());
  for (std::size_t i = 0; i < adjusted.size(); ++i) {
    ConfigurationHistory& c = history.configurations[i];
    c.p_holm = adjusted[i];
    c.enough_runs = tests * SmallestTrendP(c.runs) < kGateAlpha;
    c.change = Classify(c.enough_runs, c.p_holm, c.ratio, factor);
  }
  return history;
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
