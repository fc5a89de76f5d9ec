#include "orchestrator/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "orchestrator/compare/grouping.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

SideSummary Summarise(const ConfigurationGroup& group) {
  return {group.runs, MedianConfidenceInterval(group.sample, kCompareLevel), group.run_medians,
          group.warmup_included};
}

void SortParams(std::vector<RunParams>* params) {
  std::sort(params->begin(), params->end(), [](const RunParams& x, const RunParams& y) {
    return ScansBefore(x, ConfigurationJson(x), y, ConfigurationJson(y));
  });
}

// Whether `configurations` log ratios all of one sign could reach
// kGateAlpha at the first step of Holm's method over them and the study.
bool EnoughConfigurations(int configurations) {
  return configurations >= 2 && (configurations + 1) * SmallestSignedRankP(configurations) < kGateAlpha;
}

StudyTest TestStudy(const std::vector<ConfigurationComparison>& both, bool enough, int tests) {
  StudyTest study;
  study.configurations = static_cast<int>(both.size());
  study.enough_configurations = enough;
  study.detectable_slower = study.detectable_faster = kInfinity;
  if (both.empty()) return study;
  std::vector<double> logs;
  for (const ConfigurationComparison& c : both) logs.push_back(std::log(c.test.ratio));
  double mean = 0;
  for (double x : logs) mean += x;
  study.ratio = std::exp(mean / static_cast<double>(logs.size()));
  if (logs.size() >= 2) {
    const MeanInterval interval = MeanConfidenceInterval(logs, kCompareLevel);
    study.ratio_ci_low = std::exp(interval.low);
    study.ratio_ci_high = std::exp(interval.high);
  }
  study.signed_rank = WilcoxonSignedRank(logs);
  study.p_holm = study.signed_rank.p;
  if (enough) {
    const ShiftInterval centre = SignedRankInterval(logs, 1 - kGateAlpha / tests);
    study.detectable_slower = std::exp(centre.estimate - centre.low);
    study.detectable_faster = std::exp(centre.high - centre.estimate);
  }
  return study;
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string Unwords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// One label for A's and B's descriptions of a pair: where they differ word
// by word, "b=50->200" (one key) or "ring->mpi"; where one has words the
// other lacks, "+overlap" (B only) and "-overlap" (A only).
std::string PairLabel(const std::string& a, const std::string& b) {
  std::vector<std::string> x = Words(a), y = Words(b);
  if (x.size() == y.size()) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == y[i]) continue;
      const size_t equals = x[i].find('=');
      const bool same_key = equals != std::string::npos && y[i].compare(0, equals + 1, x[i], 0, equals + 1) == 0;
      x[i] += "->" + (same_key ? y[i].substr(equals + 1) : y[i]);
    }
    return Unwords(x);
  }
  size_t prefix = 0;
  while (prefix < x.size() && prefix < y.size() && x[prefix] == y[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < x.size() - prefix && suffix < y.size() - prefix &&
         x[x.size() - 1 - suffix] == y[y.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<std::string> words(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(prefix));
  for (size_t i = prefix; i < x.size() - suffix; ++i) words.push_back("-" + x[i]);
  for (size_t i = prefix; i < y.size() - suffix; ++i) words.push_back("+" + y[i]);
  words.insert(words.end(), x.end() - static_cast<std::ptrdiff_t>(suffix), x.end());
  return Unwords(words);
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

Change Classify(bool enough, double p_holm, double ratio, double factor) {
  if (!enough) return Change::kTooFewRuns;
  if (p_holm >= kGateAlpha) return Change::kNotSignificant;
  if (ratio >= factor) return Change::kSlower;
  if (ratio <= 1 / factor) return Change::kFaster;
  return Change::kWithinFactor;
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
  test.detectable_slower = test.detectable_faster = kInfinity;
  if (test.enough_runs) {
    const RatioInterval at_gate = RatioConfidenceInterval(a_run_medians, b_run_medians, 1 - kGateAlpha / tests);
    test.detectable_slower = at_gate.estimate / at_gate.low;
    test.detectable_faster = at_gate.high / at_gate.estimate;
  }
  return test;
}

int RunsNeeded(int tests) {
  int n = 1;
  while (tests * SmallestUTestP(n, n) >= kGateAlpha) ++n;
  return n;
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

const std::vector<std::string>& ByKeys() {
  static const std::vector<std::string> keys = {
      "architecture", "workers", "servers",  "batch_size",   "epochs",        "hidden",
      "learning_rate", "overlap", "bucket_bytes", "partition_bytes", "pulls_in_turn", "max_iterations_per_epoch",
      "dataset",       "network"};
  return keys;
}

Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b, double factor,
                   const std::string& by) {
  if (!by.empty() && ByKeysOf(by).empty()) throw CompareError("--by: expected a parameter, got " + Quoted(by));
  for (const std::string& key : ByKeysOf(by)) {
    if (std::find(ByKeys().begin(), ByKeys().end(), key) != ByKeys().end()) continue;
    std::string keys;
    for (const std::string& known : ByKeys()) keys += (keys.empty() ? "" : ", ") + known;
    throw CompareError("--by: " + Quoted(key) + " is no parameter of a configuration; expected one of " + keys);
  }
  const std::map<std::string, ConfigurationGroup> side_a = GroupRuns(a, by, "A");
  const std::map<std::string, ConfigurationGroup> side_b = GroupRuns(b, by, "B");
  Comparison comparison;
  comparison.by = by;
  for (const auto& [key, group] : side_a) {
    const auto other = side_b.find(key);
    if (other == side_b.end()) {
      comparison.only_a.push_back(group.params);
      continue;
    }
    ConfigurationComparison row;
    row.params = group.params;
    row.params_b = other->second.params;
    row.configuration = group.configuration;
    row.configuration_b = other->second.configuration;
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
              return ScansBefore(x.params, x.configuration, y.params, y.configuration);
            });
  SortParams(&comparison.only_a);
  SortParams(&comparison.only_b);

  // The configurations' U tests and the study's signed-rank test, adjusted
  // together: the study counts among them only when it can be tested.
  const int configurations = static_cast<int>(comparison.both.size());
  const bool study_tested = EnoughConfigurations(configurations);
  comparison.tests = configurations + (study_tested ? 1 : 0);
  std::vector<double> p;
  for (ConfigurationComparison& row : comparison.both) {
    row.test = TestRuns(row.a.run_median_s, row.b.run_median_s, comparison.tests);
    p.push_back(row.test.u.p);
  }
  comparison.study = TestStudy(comparison.both, study_tested, comparison.tests);
  if (study_tested) p.push_back(comparison.study.signed_rank.p);
  const std::vector<double> adjusted = HolmAdjust(p);
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    RunTest& test = comparison.both[i].test;
    test.p_holm = adjusted[i];
    test.change = Classify(test.enough_runs, test.p_holm, test.ratio, factor);
  }
  StudyTest& study = comparison.study;
  if (study_tested) study.p_holm = adjusted.back();
  study.change = Classify(study_tested, study.p_holm, study.ratio, factor);
  return comparison;
}

std::vector<std::string> KeysThatPair(const std::vector<RunSample>& a, const std::vector<RunSample>& b) {
  auto pairs = [&](const std::string& by) {
    std::set<std::string> paired;
    for (const RunSample& run : a) {
      if (!run.steady_epoch_s.empty()) paired.insert(PairingKey(run.params, by));
    }
    return std::any_of(b.begin(), b.end(), [&](const RunSample& run) {
      return !run.steady_epoch_s.empty() && paired.contains(PairingKey(run.params, by));
    });
  };
  std::vector<std::string> keys;
  for (const std::string& key : ByKeys()) {
    if (pairs(key)) keys.push_back(key);
  }
  for (size_t i = 0; keys.empty() && i < ByKeys().size(); ++i) {
    for (size_t j = i + 1; j < ByKeys().size(); ++j) {
      if (pairs(ByKeys()[i] + "," + ByKeys()[j])) keys.push_back(ByKeys()[i] + "," + ByKeys()[j]);
    }
  }
  return keys;
}

std::string NothingInCommon(const Comparison& comparison, const std::vector<std::string>& keys_that_pair) {
  std::string text = "A and B have no configuration in common" +
                     (comparison.by.empty() ? std::string() : ", even paired by " + comparison.by) + ": A has " +
                     std::to_string(comparison.only_a.size()) + ", B has " + std::to_string(comparison.only_b.size()) +
                     " (a configuration is every parameter but the seed and the repetition)";
  if (!comparison.by.empty() || keys_that_pair.empty()) return text;
  text += keys_that_pair[0].find(',') == std::string::npos ? "; to pair those that differ in one parameter: "
                                                           : "; to pair those that differ in two parameters: ";
  for (size_t i = 0; i < keys_that_pair.size(); ++i) text += (i == 0 ? "" : " or ") + ("--by " + keys_that_pair[i]);
  return text;
}

std::vector<std::string> Labels(const std::vector<RunParams>& params) {
  ShownParams shown = VaryingIn(params);
  shown.repetition = false;
  std::vector<std::string> labels;
  for (const RunParams& p : params) labels.push_back(Describe(p, shown));
  return labels;
}

std::vector<std::string> Labels(const Comparison& comparison) {
  std::vector<RunParams> params;
  for (const ConfigurationComparison& c : comparison.both) params.push_back(c.params);
  if (comparison.by.empty()) return Labels(params);
  for (const ConfigurationComparison& c : comparison.both) params.push_back(c.params_b);
  ShownParams shown = VaryingIn(params);
  shown.repetition = false;
  std::vector<std::string> labels;
  for (const ConfigurationComparison& c : comparison.both) {
    const std::string a = Describe(c.params, shown), b = Describe(c.params_b, shown);
    labels.push_back(a == b ? a : PairLabel(a, b));
  }
  return labels;
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

std::string TestMethod(double factor) {
  return "Mann-Whitney U test on each run's median steady epoch (the run is the independent unit), two-sided, "
         "p adjusted by Holm's method over the tests of this comparison; a change when p < " +
         Format(kGateAlpha, "%g") + " and the ratio of the medians of the run medians is beyond " +
         Format(factor, "%g") + " either way";
}

std::string StudyMethod() {
  return "Wilcoxon signed-rank test of the configurations' log ratios of run medians, two-sided, Holm-adjusted "
         "with the configurations' tests; the geometric mean of the ratios with Student's t 95% interval";
}

std::string PValue(double p) { return p < 1e-4 ? "<0.0001" : Format(p, "%.2g"); }

std::string Format(double value, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace dmlbench
