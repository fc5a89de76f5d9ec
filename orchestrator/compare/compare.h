// Compare: two sets of complete runs, configuration by configuration — what
// `dmlbench compare A B` reports (after asv's `compare`, Google Benchmark's
// compare.py and benchstat). It owns the pairing of configurations (also
// across a factor, --by), the per-configuration and study-level tests and
// the labels; not the grouping of runs (grouping.h), the choice of runs
// (sides.h and the command line), the statistics (core/statistics.h, the
// project's one implementation) nor the gate's decision (gate.h). Pure
// functions; thread-safe. docs/compare.md and docs/ci.md are the manual.
//
// A configuration is every parameter of a run but its seed and repetition
// (ConfigurationJson): the trainer build and the dataset are not part of it,
// so that two builds can be compared. A side's sample for one configuration
// is the steady epoch times of all its runs (warm-up excluded, as in the
// steady_epochs view), summarised by the median and the rank-based 95%
// confidence interval of the median, and each run's median of them.
//
// The test a regression gate trusts: Mann-Whitney's U on the runs' medians.
// The run, not the epoch, is the independent unit: the epochs of one run
// share its process placement, its memory layout, its shuffle seed and
// whatever else loads the machine while it runs, so they sit closer to each
// other than to another run's (pooling them would count one lucky run's
// five epochs as five pieces of evidence); separate runs start afresh. The
// effect is the ratio of the medians of the runs' medians, B/A, with the
// interval that inverts the same test. Beside them, one test of the study
// as a whole: Wilcoxon's signed-rank test of every configuration's log
// ratio, with their geometric mean, which sees a slowdown spread over every
// configuration that no configuration's few runs can show alone. The
// p-values of all these tests are adjusted together by Holm's method, so
// that the chance of flagging anything when nothing changed is at most
// kGateAlpha. A test says changed when its adjusted p < kGateAlpha and its
// ratio lies beyond the factor (the smallest change that matters).
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {

// What compare refuses: a --by key that is no parameter, a side that holds
// two values of it for one configuration, a gate that cannot judge.
class CompareError : public Error {
 public:
  using Error::Error;
};

// The confidence level of every interval `compare` shows.
inline constexpr double kCompareLevel = 0.95;

// The family-wise false-positive rate of the tests' verdicts.
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

// B against A from their pooled epochs' intervals: slower when B's lies
// wholly above A's, faster when wholly below, no significant difference
// when they overlap (touching counts as overlap); too few epochs when
// either covers less than kCompareLevel. A description for --csv and
// --json; the gate does not read it.
Verdict Judge(const MedianInterval& a, const MedianInterval& b);

// What a test says of B against A.
enum class Change { kSlower, kFaster, kWithinFactor, kNotSignificant, kTooFewRuns };
// "slower", "faster", "within factor" (significant, but by less than the
// factor), "~" (not significant, as benchstat writes it), "too few runs".
std::string_view Text(Change change);

// What a test with runs enough (`enough`), an adjusted p and a ratio B/A
// says, given the factor: kTooFewRuns without runs enough, then
// kNotSignificant unless p_holm < kGateAlpha, then by the ratio.
Change Classify(bool enough, double p_holm, double ratio, double factor);

// The U test of B's runs against A's, before and after the adjustment.
struct RunTest {
  int runs_a = 0, runs_b = 0;
  double ratio = 0;              // median of B's run medians / median of A's
  RatioInterval ratio_ci;        // at kCompareLevel
  UTest u;
  double p_holm = 1;             // adjusted over the tests of one comparison
  bool enough_runs = false;      // even all of B beyond all of A could reach kGateAlpha
  Change change = Change::kTooFewRuns;
  // The smallest slowdown (speed-up) B/A (A/B) this test would call
  // significant at its first Holm step, had B's runs been A's spread
  // shifted by it: the Hodges-Lehmann ratio over the lower (upper) end of
  // the interval at level 1 - kGateAlpha / tests. Infinity without runs
  // enough.
  double detectable_slower = 0, detectable_faster = 0;
};

// The U test of `b_run_medians` against `a_run_medians`; p_holm is the raw
// p, and `tests` (how many are adjusted together) sets enough_runs and
// the detectable changes.
RunTest TestRuns(const std::vector<double>& a_run_medians, const std::vector<double>& b_run_medians, int tests);

// The fewest runs a side needs (the same on both) for the U test to reach
// kGateAlpha with `tests` tested together: 4 for one, 6 for ten.
int RunsNeeded(int tests);

// The study as a whole: every configuration compared contributes the log
// of its ratio of run medians (RunTest::ratio). Wilcoxon's signed-rank test
// asks whether they are centred on 0; the geometric mean of the ratios,
// with Student's t interval on the mean log ratio, is the effect, as
// benchstat and asv summarise a suite.
struct StudyTest {
  int configurations = 0;
  double ratio = 1;              // geometric mean of the configurations' ratios
  double ratio_ci_low = 0, ratio_ci_high = 0;  // at kCompareLevel; 0 with fewer than two configurations
  SignedRankTest signed_rank;
  double p_holm = 1;
  // Ratios all of one sign could reach kGateAlpha among the tests adjusted
  // together: 9 configurations or more. Without, the study is not tested
  // (change kTooFewRuns) and not counted among the tests.
  bool enough_configurations = false;
  Change change = Change::kTooFewRuns;
  // As RunTest's, for every configuration changed by the same ratio: from
  // the Walsh averages' interval around their Hodges-Lehmann centre.
  double detectable_slower = 0, detectable_faster = 0;
};

struct ConfigurationComparison {
  RunParams params;              // of A's first run of it: seed and repetition mean nothing here
  RunParams params_b;            // of B's; differs from params only in the --by keys
  std::string configuration;     // ConfigurationJson of A's
  std::string configuration_b;   // of B's
  SideSummary a, b;
  double ratio = 0;              // median of B / median of A, pooled epochs
  Verdict verdict = Verdict::kNoDifference;  // from the pooled epochs' intervals
  RunTest test;                  // on the runs' medians
};

struct Comparison {
  std::string by;                // the --by keys, separated by commas; "" = configurations equal on both sides
  // The configurations with runs on both sides, by architecture, servers,
  // workers, batch size, then the rest of the configuration.
  std::vector<ConfigurationComparison> both;
  std::vector<RunParams> only_a, only_b;  // on one side only, in the same order
  StudyTest study;
  int tests = 0;                 // adjusted together: one per configuration, and the study's when tested
};

// The parameters `--by` takes, the configuration's keys as filters name
// them: architecture, workers, servers, batch_size, ...
const std::vector<std::string>& ByKeys();

// Compares B against A; `factor` (> 1) is the smallest ratio, either way,
// that counts as a change. Runs without a steady epoch are left out. With
// `by` (keys of ByKeys(), separated by commas), a configuration of A is
// paired with the one of B that differs from it in those parameters alone.
// Throws CompareError for a `by` that names no key, or a side with two
// values of it for one configuration.
Comparison Compare(const std::vector<RunSample>& a, const std::vector<RunSample>& b,
                   double factor = kDefaultFactor, const std::string& by = "");

// The keys (of ByKeys()) that, given to --by, would pair some
// configuration of A with one of B: for a hint when they have none in
// common. When no one key does, the pairs of keys that do
// ("batch_size,max_iterations_per_epoch").
std::vector<std::string> KeysThatPair(const std::vector<RunSample>& a, const std::vector<RunSample>& b);

// Why `comparison` has nothing to compare (no configuration on both
// sides), with the --by keys that would pair some (KeysThatPair) when it
// was not paired already.
std::string NothingInCommon(const Comparison& comparison, const std::vector<std::string>& keys_that_pair);

// Labels of configurations, naming the parameters that vary among them:
// "ring w=4 b=100", "ps k=2 w=4 b=100 net=1gbit".
std::vector<std::string> Labels(const std::vector<RunParams>& params);
// The labels of `comparison.both`; paired --by, the key's two values:
// "ring w=4 b=50->200", "ring->mpi w=4 b=100", "ring w=4 b=100 +overlap".
std::vector<std::string> Labels(const Comparison& comparison);

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

// The methods in one line each, for the text and the JSON.
inline constexpr const char* kEpochMethod =
    "median of the steady epochs (warm-up excluded) with its rank-based 95% confidence interval; B is slower or "
    "faster than A when the two intervals do not overlap";
std::string TestMethod(double factor);
std::string StudyMethod();

// `value` with printf's `format`: Format(1.5, "%.3f") = "1.500".
std::string Format(double value, const char* format);
// A p-value as people read one: "0.0043", "<0.0001".
std::string PValue(double p);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_COMPARE_H_
