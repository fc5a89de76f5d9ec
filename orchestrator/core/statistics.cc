#include "orchestrator/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dmlbench {
namespace {

// P(X <= k) for X ~ binomial(n, 1/2).
double BinomialHalfCdf(int n, int k) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  double sum = 0;
  // log C(n, i) summed in log space: n is at most a few thousand repetitions.
  for (int i = 0; i <= k; ++i) {
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  }
  return std::min(1.0, sum);
}

// The regularised incomplete beta function I_x(a, b) by its continued
// fraction (Lentz's method), the tool behind Student's t distribution.
double IncompleteBeta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - IncompleteBeta(1 - x, b, a);
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(1 - x)) / a;
  constexpr double kTiny = 1e-300;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 400; ++i) {
    const int m = i / 2;
    double numerator;
    if (i == 0) {
      numerator = 1;
    } else if (i % 2 == 0) {
      numerator = (m * (b - m) * x) / ((a + 2.0 * m - 1) * (a + 2.0 * m));
    } else {
      numerator = -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1));
    }
    d = 1 + numerator * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    d = 1 / d;
    c = 1 + numerator / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    const double step = c * d;
    f *= step;
    if (std::fabs(1 - step) < 1e-14) break;
  }
  return front * (f - 1);
}

// P(T <= t) for Student's t with `dof` degrees of freedom.
double StudentTCdf(double t, int dof) {
  const double x = dof / (dof + t * t);
  const double tail = 0.5 * IncompleteBeta(x, dof / 2.0, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

}  // namespace

double Median(std::vector<double> values) { return Quantile(std::move(values), 0.5); }

double Quantile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("quantile of an empty sample");
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(values.size() - 1, below + 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

MedianInterval MedianConfidenceInterval(const std::vector<double>& values, double level) {
  if (values.empty()) throw std::invalid_argument("median of an empty sample");
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const int n = static_cast<int>(sorted.size());
  MedianInterval interval;
  interval.n = n;
  interval.median = Median(sorted);
  // Symmetric ranks j and n+1-j (1-based): coverage = 1 - 2 P(X <= j-1).
  int best_j = 1;
  for (int j = 1; j <= (n + 1) / 2; ++j) {
    if (1 - 2 * BinomialHalfCdf(n, j - 1) >= level) best_j = j;
  }
  interval.low = sorted[best_j - 1];
  interval.high = sorted[n - best_j];
  interval.coverage = 1 - 2 * BinomialHalfCdf(n, best_j - 1);
  return interval;
}

std::optional<double> CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (mean == 0) return std::nullopt;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1)) / std::fabs(mean);
}

double StudentTQuantile(double q, int dof) {
  if (dof < 1 || !(q > 0 && q < 1)) throw std::invalid_argument("Student t quantile out of range");
  // The CDF is monotone: bisect on a bracket that holds any q we use.
  double low = -1e3, high = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double middle = (low + high) / 2;
    (StudentTCdf(middle, dof) < q ? low : high) = middle;
  }
  return (low + high) / 2;
}

}  // namespace dmlbench
