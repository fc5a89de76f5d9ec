// Compare: two sets of complete runs, configuration by configuration — what
// `dmlbench compare A B` reports (after asv's `compare`, Google Benchmark's
// compare.py and benchstat) — and a configuration's runs over a history of
// builds. It owns the grouping, the verdicts and the gate's decision, not
// the choice of runs (the command line's) nor the statistics
// (core/statistics.h, the project's one implementation). Pure functions;
// thread-safe. docs/ci.md is the manual of the gate.
//
// A configuration is every parameter of a run but its seed and repetition
// (ConfigurationJson): the trainer build and the dataset are not part of it,
// so that two builds can be compared. A side's sample for one configuration
// is the steady epoch times of all its runs (warm-up excluded, as in the
// steady_epochs view), summarised by the median and the rank-based 95%
// confidence interval of the median. B is `slower` or `faster` than A only
// when the two intervals do not overlap; when either interval cannot reach
// 95% (5 epochs or fewer) the verdict is `too few epochs`.
//
// Beside that, the test a regression gate trusts: Mann-Whitney's U on the
// runs' medians. The run, not the epoch, is the independent unit: the
// epochs of one run share its process placement, its memory layout, its
// shuffle seed and whatever else loads the machine while it runs, so they
// sit closer to each other than to another run's (pooling them would count
// one lucky run's five epochs as five pieces of evidence); separate runs
// start afresh. The effect is the ratio of the medians of the runs'
// medians, B/A, with the interval that inverts the same test. The p-values
// of all configurations compared at once are adjusted by Holm's method, so
// that the chance of flagging any configuration that did not change is at
// most kGateAlpha. A configuration changed when its adjusted p < kGateAlpha
// and its ratio lies beyond the factor (the smallest change that matters).
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {

// The confidence level of every interval `compare` shows.
inline constexpr double kCompareLevel = 0.95;

// The family-wise false-positive rate of the U test's verdicts.
inline constexpr double kGateAlpha = 0.05;
// The smallest ratio that counts as a change, unless told otherwise: 5%,
// below the 8% slowdown a gate must catch and above the 1-3% by which the
// medians of repeated sweeps of one machine move (docs/ci.md).
inline constexpr double kDefaultFactor = 1.05;

// One complete run of a side: its parameters and its steady epoch times.
struct RunSample {
  RunParams params;
  std::vector<double> steady_epoch_s;
  bool warmup_included = false;  // a one-epoch run: its warm-up epoch is all there is
};

// One side's summary of one configuration.
struct SideSummary {
  int runs = 0;
  MedianInterval epoch_s;        // median, interval and its exact coverage, n epochs
  std::vector<double> run_median_s;  // each run's median steady epoch, in run order
  bool warmup_included = false;  // some run had a single epoch, which counts
};

enum class Verdict { kFaster, kSlower, kNoDifference, kTooFewEpochs };
// "faster", "slower", "no significant difference", "too few epochs".
std::string_view Text(Verdict verdict);

// B against A from their intervals: slower when B's lies wholly above A's,
// faster when wholly below, no significant difference when they overlap
// (touching counts as overlap); too few epochs when either covers less
// than kCompareLevel.
Verdict Judge(const MedianInterval& a, const MedianInterval& b);

// What the U test on the runs' medians says of B against A.
enum class Change { kSlower, kFaster, kWithinFactor, kNotSignificant, kTooFewRuns };
// "slower", "faster", "within factor" (significant, but by less than the
// factor), "~" (not significant, as benchstat writes it), "too few runs".
std::string_view Text(Change change);

// The U test of B's runs against A's, before and after the adjustment.
struct RunTest {
  int runs_a = 0, runs_b = 0;
  double ratio = 0;              // median of B's run medians / median of A's
  RatioInterval ratio_ci;        // at kCompareLevel
  UTest u;
  double p_holm = 1;             // adjusted over the configurations tested together
  bool enough_runs = false;      // even all of B beyond all of A could reach kGateAlpha
  Change change = Change::kTooFewRuns;
};

// The U test of `b_run_medians` against `a_run_medians`; p_holm is the raw
// p and `tests` (how many are adjusted together) sets enough_runs.
RunTest TestRuns(const std::vector<double>& a_run_medians, const std::vector<double>& b_run_medians, int tests);
// Sets each test's p_holm from the p of all of them (Holm), then its change.
void AdjustAndClassify(const std::vector<RunTest*>& tests, double factor);

// The fewest runs a side needs (the same on both) for the U test to reach
// kGateAlpha with `tests` tested together: 4 for one, 6 for ten.
int RunsNeeded(int tests);

struct ConfigurationComparison {
  RunParams params;              // of A's first run of it: seed and repetition mean nothing here
  std::string configuration;     // ConfigurationJson
  SideSummary a, b;
  double ratio = 0;              // median of B / median of A, pooled epochs
  Verdict verdict = Verdict::kNoDifference;  // from the pooled epochs' intervals
  RunTest test;                  // on the runs' medians
};

struct Comparison {
  // The configurations with runs on both sides, by architecture, servers,
  // workers, batch size, then the rest of the configuration.
  std::vector<ConfigurationComparison> both;
  std::vector<RunParams> only_a, only_b;  // on one side only, in the same order
};

// Compares B against A; `factor` (> 1) is the smallest ratio, either way,
// that counts as a change. Runs without a steady epoch are left out.
Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b,
                   double factor = kDefaultFactor);

// What a gate fails on (`compare --fail-if`).
enum class FailIf { kSlower, kFaster, kDifferent };
// Whether `change` is one the gate fails on.
bool Fails(Change change, FailIf fail_if);

// One configuration's runs over builds in time order (`compare
// --history`): the median of each build's run medians, and whether it
// drifted. A drift is judged from the first build with runs to the last:
// their ratio beyond the factor, and Jonckheere-Terpstra's trend test over
// every build's run medians in order (Holm-adjusted over configurations)
// below kGateAlpha. The trend test sees a slide of a few percent per build
// that no two neighbouring builds tell apart, and a single step as well.
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

// How far B's medians lie from A's over the configurations of one
// architecture ("ring", "ps k=2", ...): the median, 95th percentile (type 7)
// and maximum of |B/A - 1|. Between two sweeps of one study (another day,
// another machine of the same kind) it is the error that even a perfect
// model, fitted on one sweep, would show on the other.
struct Shift {
  std::string architecture;
  int configurations = 0;
  double median_abs = 0, p95_abs = 0, max_abs = 0;
};
// One per architecture of `comparison.both`, in its order.
std::vector<Shift> ShiftByArchitecture(const Comparison& comparison);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_
