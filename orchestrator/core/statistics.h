// Statistics: the summaries every figure that decides something rests on
// (Hoefler & Belli, SC'15, rules 5-8): the median of repetitions and a
// distribution-free confidence interval for it from order statistics (Le
// Boudec, "Performance Evaluation of Computer and Communication Systems",
// section 2.2), the coefficient of variation, and Student's t quantile for
// the confidence intervals of fitted parameters. Pure functions; thread-safe.
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

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_STATISTICS_H_
