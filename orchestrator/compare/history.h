// History: one configuration's runs over a history of builds in time order
// (`dmlbench compare --history SPEC`): the median of each build's run
// medians, and whether it drifted. It owns what --history groups runs by
// and the drift's test, not the reading of runs nor the statistics
// (core/statistics.h). Pure functions; thread-safe. docs/ci.md is the
// manual.
//
// A drift is judged from the first build with runs to the last: their
// ratio beyond the factor, and Jonckheere-Terpstra's trend test over every
// build's run medians in order (Holm-adjusted over configurations) below
// kGateAlpha. The trend test sees a slide of a few percent per build that
// no two neighbouring builds tell apart, and a single step as well.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_HISTORY_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_HISTORY_H_

#include <string>
#include <utility>
#include <vector>

#include "orchestrator/compare/compare.h"
#include "orchestrator/store/records.h"

namespace dmlbench {

// What --history groups runs by: kind "tag", "experiment" or "trainer",
// and the glob (fnmatch) a name must match.
struct HistorySpec {
  std::string kind;
  std::string glob;
  std::string text;  // as given
};
// "tag=GLOB", "experiment=GLOB", "trainer=GLOB" or "trainer". Throws
// CompareError otherwise.
HistorySpec ParseHistorySpec(const std::string& text);
// `runs` (of the database `db`) by the builds `spec` names — a run under
// each of its tags, experiments, or the first 12 digits of its trainer's
// sha256 that the glob matches — builds in the order their first run was
// recorded (run ids grow with time). Throws CompareError when fewer than
// two builds match.
std::vector<std::pair<std::string, std::vector<RunRecord>>> RunsByBuild(const std::vector<RunRecord>& runs,
                                                                        const HistorySpec& spec,
                                                                        const std::string& db);

struct ConfigurationHistory {
  RunParams params;
  std::string configuration;
  std::vector<int> runs;                 // per build; 0 = none
  std::vector<double> median_s;          // per build; 0 where it has no run
  double ratio = 0;                      // last build's median / first build's
  TrendTest trend;
  double p_holm = 1;
  bool enough_runs = false;              // a perfectly ordered history could reach kGateAlpha
  Change change = Change::kTooFewRuns;
};
struct History {
  std::vector<std::string> builds;       // as given, in time order
  std::vector<ConfigurationHistory> configurations;  // with runs in two builds or more
};
// `builds` are (name, runs) in time order.
History CompareHistory(const std::vector<std::pair<std::string, std::vector<RunSample>>>& builds,
                       double factor = kDefaultFactor);

// The largest step of `c` between neighbouring builds that have runs of
// it: the later build's name and the ratio of its median to the earlier's
// ("", 1 when there is none).
std::pair<std::string, double> LargestStep(const ConfigurationHistory& c, const std::vector<std::string>& builds);

// The drift's method in one line.
std::string HistoryMethod(double factor);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_HISTORY_H_
