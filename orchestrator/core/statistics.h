// Statistics: the summaries every figure that decides something rests on
// (Hoefler & Belli, SC'15, rules 5-8): the median of repetitions and a
// distribution-free confidence interval for it from order statistics (Le
// Boudec, "Performance Evaluation of Computer and Communication Systems",
// section 2.2), the coefficient of variation, Student's t quantile for the
// confidence intervals of fitted parameters and of a mean, and the rank
// tests a regression gate rests on: Mann-Whitney's U with the ratio interval
// it implies, Wilcoxon's signed-rank test with the interval of the centre it
// implies, Holm's adjustment for many configurations, and
// Jonckheere-Terpstra's test of a trend over ordered groups (Hollander &
// Wolfe, "Nonparametric Statistical Methods", sections 3.1-3.2, 4.1-4.3 and
// 6.2), and Kendall's rank correlation of a predicted order against a
// measured one (section 8.1). Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_STATISTICS_H_
#define DMLBENCH_ORCHESTRATOR_CORE_STATISTICS_H_

#include <optional>
#include <vector>

namespace dmlbench {

// The median (mean of the two middle values for an even count). Requires a
// non-empty sample.
double Median(std::vector<double> values);

// The p-quantile (0 <= p <= 1) by linear interpolation between order
// statistics (type 7, as R and NumPy do). Requires a non-empty sample.
double Quantile(std::vector<double> values, double p);

// A confidence interval of the median from order statistics: [x(j), x(k)]
// with j, k the ranks whose binomial(n, 1/2) mass between them is at least
// `level`, as narrow and as centred as possible. `coverage` is the exact
// probability that the interval holds the true median. For small samples
// no such interval reaches the level (n <= 5 at 95%): then the widest one,
// [min, max], is returned with its lower coverage, so a caller can flag it.
struct MedianInterval {
  double median = 0;
  double low = 0;
  double high = 0;
  double coverage = 0;  // exact, e.g. 0.9375 for n = 5
  int n = 0;
};
MedianInterval MedianConfidenceInterval(const std::vector<double>& values, double level = 0.95);

// Sample standard deviation over mean; nullopt for fewer than two values or
// a zero mean.
std::optional<double> CoefficientOfVariation(const std::vector<double>& values);

// The q-quantile of Student's t distribution with `dof` degrees of freedom
// (dof >= 1, 0 < q < 1), e.g. StudentTQuantile(0.975, 10) = 2.228.
double StudentTQuantile(double q, int dof);

// Mann-Whitney's U test of B against A, two-sided. `u` counts the pairs
// (a, b) with b > a, a tie counting one half: 0 when every B value lies
// below every A value, |A| |B| when every one lies above. The p-value is
// from U's exact distribution when there is no tie and |A|, |B| <= 50,
// else from the normal approximation with the tie-corrected variance and a
// continuity correction (as R's wilcox.test and SciPy's mannwhitneyu).
// Requires both samples non-empty.
struct UTest {
  double u = 0;
  double p = 1;
  bool exact = false;
};
UTest MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p-value the exact U test can give with samples of
// m and n values (every B value beyond every A value): 2 / C(m + n, m),
// e.g. 0.1 for 3 and 3, 0.0079 for 5 and 5.
double SmallestUTestP(int m, int n);

// A confidence interval of the ratio B/A of two positive samples' typical
// values: the interval of the shift of log B against log A that inverts
// the U test (Moses; Hollander & Wolfe 4.3), from the order statistics of
// the |A| |B| ratios b/a, exponentiated. `coverage` is exact from U's
// distribution (normal approximation above 50 a side); like
// MedianConfidenceInterval, samples too small for `level` get the widest
// interval, [min b/a, max b/a], with its lower coverage. `estimate` is the
// Hodges-Lehmann estimate the interval is centred on, the median of the
// ratios.
struct RatioInterval {
  double low = 0;
  double high = 0;
  double coverage = 0;
  double estimate = 0;
};
RatioInterval RatioConfidenceInterval(const std::vector<double>& a, const std::vector<double>& b,
                                      double level = 0.95);

// Wilcoxon's signed-rank test of whether values (each a difference, such as
// the log of a ratio) are centred on 0, two-sided. Zeros are dropped, as
// Wilcoxon, R's wilcox.test and SciPy's default do; `n` counts the rest.
// `w_plus` sums the ranks of |x| (ties mid-ranked) of the positive values.
// The p-value is from W+'s exact distribution when there is no tie and
// n <= 50, else from the normal approximation with the tie-corrected
// variance and a continuity correction. No value left: p = 1.
struct SignedRankTest {
  double w_plus = 0;
  int n = 0;
  double p = 1;
  bool exact = false;
};
SignedRankTest WilcoxonSignedRank(const std::vector<double>& x);

// The smallest two-sided p-value the exact signed-rank test can give n
// values (all of one sign): 2 / 2^n, e.g. 0.0625 for 5, 0.0039 for 9.
double SmallestSignedRankP(int n);

// The interval of the centre of a symmetric sample that inverts the
// signed-rank test (Tukey; Hollander & Wolfe 3.2): order statistics of the
// n(n + 1)/2 Walsh averages (x_i + x_j)/2, i <= j, around their median, the
// Hodges-Lehmann estimate. `coverage` is exact from W+'s distribution
// (normal approximation above 50 values); a sample too small for `level`
// gets the widest interval with its lower coverage. Requires a non-empty
// sample.
struct ShiftInterval {
  double estimate = 0;
  double low = 0;
  double high = 0;
  double coverage = 0;
};
ShiftInterval SignedRankInterval(const std::vector<double>& x, double level = 0.95);

// The mean of a sample with Student's t interval at `level`: mean +- t
// s / sqrt(n). Requires two values or more.
struct MeanInterval {
  double mean = 0;
  double low = 0;
  double high = 0;
  int n = 0;
};
MeanInterval MeanConfidenceInterval(const std::vector<double>& x, double level = 0.95);

// Holm's step-down adjustment of p-values tested together: the i-th
// smallest becomes max over j <= i of min(1, (K - j + 1) p(j)), in the
// input's order. Rejecting where the adjusted p < alpha keeps the chance of
// any false rejection among the K at most alpha, whatever their dependence.
std::vector<double> HolmAdjust(const std::vector<double>& p);

// Jonckheere-Terpstra's test of an ordered trend: are values of later
// groups (builds in time order) larger, or smaller, than those of earlier
// ones? J = the sum over group pairs i < j of U of group j against group i;
// z standardises it (its variance corrected for ties); p is two-sided from
// the normal distribution. Needs at least two non-empty groups; throws
// std::invalid_argument otherwise.
struct TrendTest {
  double j = 0;
  double z = 0;
  double p = 1;
};
TrendTest JonckheereTerpstra(const std::vector<std::vector<double>>& groups);

// Kruskal-Wallis' test of whether groups come from one distribution: H
// from the ranks of all values pooled (ties mid-ranked, H corrected for
// them), p from the chi-square distribution with (groups - 1) degrees of
// freedom. Needs at least two non-empty groups; throws
// std::invalid_argument otherwise.
struct GroupTest {
  double h = 0;
  double p = 1;
};
GroupTest KruskalWallis(const std::vector<std::vector<double>>& groups);

// Kendall's tau-b of the pairs (x[i], y[i]): over every two pairs, the
// concordant (x and y in the same order) less the discordant, over the
// geometric mean of the numbers of two pairs not tied in x and not tied in
// y. 1: y in x's order, -1: in the reverse order; a pair tied in x or in y
// counts for neither. Nullopt when every two pairs are tied in x or in y
// (fewer than two pairs, say). Throws std::invalid_argument when x and y
// differ in length.
std::optional<double> KendallTau(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_STATISTICS_H_
