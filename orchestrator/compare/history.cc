#include "orchestrator/compare/history.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "orchestrator/compare/grouping.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {
namespace {

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

HistorySpec ParseHistorySpec(const std::string& text) {
  if (text == "trainer") return {"trainer", "*", text};
  const size_t equals = text.find('=');
  if (equals != std::string::npos && equals + 1 < text.size()) {
    const std::string kind = text.substr(0, equals);
    if (kind == "tag" || kind == "experiment" || kind == "trainer") return {kind, text.substr(equals + 1), text};
  }
  throw CompareError("--history: expected tag=GLOB, experiment=GLOB, trainer=GLOB or trainer, got " + Quoted(text));
}

std::vector<std::pair<std::string, std::vector<RunRecord>>> RunsByBuild(const std::vector<RunRecord>& runs,
                                                                        const HistorySpec& spec,
                                                                        const std::string& db) {
  std::vector<std::pair<std::string, std::vector<RunRecord>>> builds;
  for (const RunRecord& run : runs) {  // by run id: the first run of each build comes first
    std::vector<std::string> names = spec.kind == "tag"          ? run.tags
                                     : spec.kind == "experiment" ? run.experiments
                                                                 : std::vector<std::string>{run.trainer_sha256.substr(0, 12)};
    for (const std::string& name : names) {
      if (fnmatch(spec.glob.c_str(), name.c_str(), 0) != 0) continue;
      auto it = std::find_if(builds.begin(), builds.end(), [&](const auto& build) { return build.first == name; });
      if (it == builds.end()) it = builds.insert(builds.end(), {name, {}});
      it->second.push_back(run);
    }
  }
  if (builds.size() < 2) {
    throw CompareError("--history " + spec.text + ": " + std::to_string(builds.size()) + " builds match in " + db + " (" +
                       (builds.empty() ? "none" : builds.front().first) + "); a history needs two or more");
  }
  return builds;
}

History CompareHistory(const std::vector<std::pair<std::string, std::vector<RunSample>>>& builds,
                       double factor) {
  History history;
  std::map<std::string, ConfigurationHistory> by_configuration;
  std::map<std::string, std::vector<std::vector<double>>> run_medians;  // per configuration, per build
  for (std::size_t i = 0; i < builds.size(); ++i) {
    history.builds.push_back(builds[i].first);
    for (const auto& [key, group] : GroupRuns(builds[i].second)) {
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
              return ScansBefore(x.params, x.configuration, y.params, y.configuration);
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

std::pair<std::string, double> LargestStep(const ConfigurationHistory& c, const std::vector<std::string>& builds) {
  std::pair<std::string, double> largest{"", 1};
  int previous = -1;
  for (size_t i = 0; i < builds.size(); ++i) {
    if (c.runs[i] == 0) continue;
    if (previous >= 0) {
      const double step = c.median_s[i] / c.median_s[static_cast<size_t>(previous)];
      if (std::fabs(step - 1) > std::fabs(largest.second - 1)) largest = {builds[i], step};
    }
    previous = static_cast<int>(i);
  }
  return largest;
}

std::string HistoryMethod(double factor) {
  return "a drift when the last build's median of run medians is beyond " + Format(factor, "%g") +
         " of the first's, either way, and Jonckheere-Terpstra's trend test over every build's run medians in "
         "time order gives p < " + Format(kGateAlpha, "%g") + " (two-sided, Holm-adjusted over the configurations)";
}

}  // namespace dmlbench
