// Compare: two sets of complete runs, configuration by configuration — what
// `dmlbench compare A B` reports (after asv's `compare` and ReFrame's
// --performance-compare). It owns the grouping and the verdict, not the
// choice of runs (the command line's) nor the statistics (model/statistics.h,
// the project's one implementation). Pure functions; thread-safe.
//
// A configuration is every parameter of a run but its seed and repetition
// (ConfigurationJson): the trainer build and the dataset are not part of it,
// so that two builds can be compared. A side's sample for one configuration
// is the steady epoch times of all its runs (warm-up excluded, as in the
// steady_epochs view), summarised by the median and the rank-based 95%
// confidence interval of the median. B is `slower` or `faster` than A only
// when the two intervals do not overlap; when either interval cannot reach
// 95% (5 epochs or fewer) the verdict is `too few epochs`.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {

// The confidence level of every interval `compare` shows.
inline constexpr double kCompareLevel = 0.95;

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

struct ConfigurationComparison {
  RunParams params;              // of A's first run of it: seed and repetition mean nothing here
  std::string configuration;     // ConfigurationJson
  SideSummary a, b;
  double ratio = 0;              // median of B / median of A
  Verdict verdict = Verdict::kNoDifference;
};

struct Comparison {
  // The configurations with runs on both sides, by architecture, servers,
  // workers, batch size, then the rest of the configuration.
  std::vector<ConfigurationComparison> both;
  std::vector<RunParams> only_a, only_b;  // on one side only, in the same order
};

// Compares B against A. Runs without a steady epoch are left out.
Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b);

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
