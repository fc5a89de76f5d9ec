#include "orchestrator/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
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

// The largest sample a side may have for U's exact distribution: its
// table has m n + 1 entries per (i, j) <= (m, n), about 1.6 million
// numbers at 50 and 50.
constexpr int kExactUSide = 50;

// P(U <= k) for k = 0 .. m n under the null hypothesis without ties. The
// number of arrangements with U = k is the coefficient of q^k in the
// Gaussian binomial [m + n choose m]_q = prod over i = 1..m of
// (1 - q^(n + i)) / (1 - q^i), built one factor at a time (each partial
// product is [n + i choose i]_q, a polynomial of positive coefficients);
// the total is C(m + n, m). Coefficients past m n are never needed: the
// division by (1 - q^i) is a running sum, which reads only lower ones.
std::vector<double> ExactUCdf(int m, int n) {
  const std::size_t size = static_cast<std::size_t>(m) * n + 1;
  std::vector<double> counts(size, 0.0);
  counts[0] = 1;
  for (int i = 1; i <= m; ++i) {
    const std::size_t up = static_cast<std::size_t>(n + i), down = static_cast<std::size_t>(i);
    for (std::size_t k = size; k-- > up;) counts[k] -= counts[k - up];  // times (1 - q^(n + i))
    for (std::size_t k = down; k < size; ++k) counts[k] += counts[k - down];  // over (1 - q^i)
  }
  std::vector<double> cdf = std::move(counts);
  const double total = std::accumulate(cdf.begin(), cdf.end(), 0.0);
  double running = 0;
  for (double& c : cdf) {
    running += c;
    c = running / total;
  }
  return cdf;
}

double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The sizes of the groups of equal values in `values` (sorted inside).
std::vector<double> TieSizes(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::vector<double> sizes;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (j - i > 1) sizes.push_back(static_cast<double>(j - i));
    i = j;
  }
  return sizes;
}

// U of b against a: pairs with b > a, ties one half.
double UStatistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a) {
    for (double y : b) u += y > x ? 1.0 : y == x ? 0.5 : 0.0;
  }
  return u;
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

UTest MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("U test of an empty sample");
  const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::vector<double> ties = TieSizes(pooled);
  UTest test;
  test.u = UStatistic(a, b);
  const double mn = static_cast<double>(m) * n;
  if (ties.empty() && m <= kExactUSide && n <= kExactUSide) {
    const std::vector<double> cdf = ExactUCdf(m, n);
    const auto k = static_cast<std::size_t>(test.u);
    const double below = cdf[k];                                           // P(U <= u)
    const double above = cdf[static_cast<std::size_t>(mn) - k];           // P(U >= u), by symmetry
    test.p = std::min(1.0, 2 * std::min(below, above));
    test.exact = true;
    return test;
  }
  const double size = m + n;
  double tie_term = 0;
  for (double t : ties) tie_term += t * t * t - t;
  const double variance = mn / 12 * ((size + 1) - tie_term / (size * (size - 1)));
  if (variance <= 0) return test;  // every value equal
  const double z = std::max(0.0, std::fabs(test.u - mn / 2) - 0.5) / std::sqrt(variance);
  test.p = std::min(1.0, 2 * NormalUpperTail(z));
  return test;
}

double SmallestUTestP(int m, int n) {
  // 2 / C(m + n, m) in log space.
  const double log_choose = std::lgamma(m + n + 1.0) - std::lgamma(m + 1.0) - std::lgamma(n + 1.0);
  return std::min(1.0, 2 * std::exp(-log_choose));
}

RatioInterval RatioConfidenceInterval(const std::vector<double>& a, const std::vector<double>& b, double level) {
  if (a.empty() || b.empty()) throw std::invalid_argument("ratio interval of an empty sample");
  std::vector<double> ratios;
  for (double x : a) {
    for (double y : b) {
      if (!(x > 0) || !(y > 0)) throw std::invalid_argument("ratio interval of a sample that is not positive");
      ratios.push_back(y / x);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
  const double mn = static_cast<double>(m) * n;
  // P(U <= k - 1) under the null: exact, or normal with a continuity correction.
  std::vector<double> cdf;
  if (m <= kExactUSide && n <= kExactUSide) cdf = ExactUCdf(m, n);
  const double sd = std::sqrt(mn * (m + n + 1) / 12);
  auto below = [&](int k) {
    return cdf.empty() ? NormalUpperTail((mn / 2 - (k - 1) - 0.5) / sd) : cdf[static_cast<std::size_t>(k - 1)];
  };
  // The k-th smallest and k-th largest ratios bound the interval; the
  // largest k whose two tails hold at most 1 - level between them.
  int best_k = 1;
  for (int k = 1; k <= static_cast<int>(ratios.size() + 1) / 2; ++k) {
    if (2 * below(k) <= 1 - level) best_k = k;
  }
  return {ratios[static_cast<std::size_t>(best_k - 1)], ratios[ratios.size() - static_cast<std::size_t>(best_k)],
          1 - 2 * below(best_k), Median(ratios)};
}

namespace {

// The largest n for W+'s exact distribution: its table has n(n + 1)/2 + 1
// entries, and the counts (at most 2^n) stay exact in a double.
constexpr int kExactSignedRankN = 50;

// P(W+ <= k) for k = 0 .. n(n + 1)/2 under the null hypothesis without
// ties: each rank 1..n is in the sum or not, with probability 1/2 each;
// the number of subsets with sum k is built one rank at a time.
std::vector<double> ExactSignedRankCdf(int n) {
  const std::size_t size = static_cast<std::size_t>(n) * (n + 1) / 2 + 1;
  std::vector<double> counts(size, 0.0);
  counts[0] = 1;
  for (std::size_t rank = 1; rank <= static_cast<std::size_t>(n); ++rank) {
    for (std::size_t k = size; k-- > rank;) counts[k] += counts[k - rank];
  }
  const double total = std::ldexp(1.0, n);
  double running = 0;
  for (double& c : counts) {
    running += c;
    c = running / total;
  }
  return counts;
}

}  // namespace

SignedRankTest WilcoxonSignedRank(const std::vector<double>& x) {
  std::vector<double> nonzero;
  for (double v : x) {
    if (v != 0) nonzero.push_back(v);
  }
  SignedRankTest test;
  test.n = static_cast<int>(nonzero.size());
  if (nonzero.empty()) return test;
  std::sort(nonzero.begin(), nonzero.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  double tie_term = 0;
  for (std::size_t i = 0; i < nonzero.size();) {
    std::size_t j = i;
    while (j < nonzero.size() && std::fabs(nonzero[j]) == std::fabs(nonzero[i])) ++j;
    const double mid_rank = (static_cast<double>(i + j) + 1) / 2;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (nonzero[k] > 0) test.w_plus += mid_rank;
    }
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double n = test.n;
  const double top = n * (n + 1) / 2;
  if (tie_term == 0 && test.n <= kExactSignedRankN) {
    const std::vector<double> cdf = ExactSignedRankCdf(test.n);
    const auto w = static_cast<std::size_t>(test.w_plus);
    const double below = cdf[w];                                       // P(W+ <= w)
    const double above = cdf[static_cast<std::size_t>(top) - w];       // P(W+ >= w), by symmetry
    test.p = std::min(1.0, 2 * std::min(below, above));
    test.exact = true;
    return test;
  }
  const double variance = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48;
  if (variance <= 0) return test;
  const double z = std::max(0.0, std::fabs(test.w_plus - top / 2) - 0.5) / std::sqrt(variance);
  test.p = std::min(1.0, 2 * NormalUpperTail(z));
  return test;
}

double SmallestSignedRankP(int n) { return std::min(1.0, std::ldexp(2.0, -n)); }

ShiftInterval SignedRankInterval(const std::vector<double>& x, double level) {
  if (x.empty()) throw std::invalid_argument("signed-rank interval of an empty sample");
  std::vector<double> walsh;
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t j = i; j < x.size(); ++j) walsh.push_back((x[i] + x[j]) / 2);
  }
  std::sort(walsh.begin(), walsh.end());
  const int n = static_cast<int>(x.size());
  const double top = static_cast<double>(walsh.size());  // n(n + 1)/2
  std::vector<double> cdf;
  if (n <= kExactSignedRankN) cdf = ExactSignedRankCdf(n);
  const double sd = std::sqrt(top * (2.0 * n + 1) / 12);
  // P(W+ <= k - 1) under the null: exact, or normal with a continuity correction.
  auto below = [&](std::size_t k) {
    return cdf.empty() ? NormalUpperTail((top / 2 - (static_cast<double>(k) - 1) - 0.5) / sd) : cdf[k - 1];
  };
  // The k-th smallest and k-th largest Walsh averages bound the interval;
  // the largest k whose two tails hold at most 1 - level between them.
  std::size_t best_k = 1;
  for (std::size_t k = 1; k <= (walsh.size() + 1) / 2; ++k) {
    if (2 * below(k) <= 1 - level) best_k = k;
  }
  return {Median(walsh), walsh[best_k - 1], walsh[walsh.size() - best_k], 1 - 2 * below(best_k)};
}

MeanInterval MeanConfidenceInterval(const std::vector<double>& x, double level) {
  if (x.size() < 2) throw std::invalid_argument("mean interval of fewer than two values");
  const double n = static_cast<double>(x.size());
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  double squares = 0;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double half = StudentTQuantile((1 + level) / 2, static_cast<int>(x.size()) - 1) * std::sqrt(squares / (n - 1) / n);
  return {mean, mean - half, mean + half, static_cast<int>(x.size())};
}

std::vector<double> HolmAdjust(const std::vector<double>& p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(p.size());
  double running = 0;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const double scaled = std::min(1.0, static_cast<double>(p.size() - rank) * p[order[rank]]);
    running = std::max(running, scaled);
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

TrendTest JonckheereTerpstra(const std::vector<std::vector<double>>& groups) {
  std::vector<double> pooled;
  double sum_sq = 0, sizes_a = 0, sizes_b = 0, sizes_c = 0;  // the group-size sums of the variance
  int nonempty = 0;
  TrendTest test;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double n = static_cast<double>(groups[i].size());
    if (n > 0) ++nonempty;
    pooled.insert(pooled.end(), groups[i].begin(), groups[i].end());
    sum_sq += n * n;
    sizes_a += n * (n - 1) * (2 * n + 5);
    sizes_b += n * (n - 1) * (n - 2);
    sizes_c += n * (n - 1);
    for (std::size_t j = i + 1; j < groups.size(); ++j) {
      if (!groups[i].empty() && !groups[j].empty()) test.j += UStatistic(groups[i], groups[j]);
    }
  }
  if (nonempty < 2) throw std::invalid_argument("trend test of fewer than two groups");
  const double size = static_cast<double>(pooled.size());
  double ties_a = 0, ties_b = 0, ties_c = 0;
  for (double t : TieSizes(pooled)) {
    ties_a += t * (t - 1) * (2 * t + 5);
    ties_b += t * (t - 1) * (t - 2);
    ties_c += t * (t - 1);
  }
  // Hollander & Wolfe (6.19): the variance of J with ties.
  double variance = (size * (size - 1) * (2 * size + 5) - sizes_a - ties_a) / 72 +
                    sizes_c * ties_c / (8 * size * (size - 1));
  if (size > 2) variance += sizes_b * ties_b / (36 * size * (size - 1) * (size - 2));
  if (variance <= 0) return test;
  test.z = (test.j - (size * size - sum_sq) / 4) / std::sqrt(variance);
  test.p = std::min(1.0, 2 * NormalUpperTail(std::fabs(test.z)));
  return test;
}

namespace {

// The regularized upper incomplete gamma function Q(a, x) (Numerical
// Recipes 6.2): by its series below a + 1, by its continued fraction above.
double UpperGammaQ(double a, double x) {
  if (x <= 0) return 1;
  const double log_front = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 500 && std::fabs(term) > 1e-15 * std::fabs(sum); ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return std::max(0.0, 1 - sum * std::exp(log_front));
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 500; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-15) break;
  }
  return std::exp(log_front) * h;
}

}  // namespace

GroupTest KruskalWallis(const std::vector<std::vector<double>>& groups) {
  std::vector<std::pair<double, std::size_t>> pooled;  // (value, group)
  int nonempty = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].empty()) ++nonempty;
    for (double value : groups[g]) pooled.push_back({value, g});
  }
  if (nonempty < 2) throw std::invalid_argument("Kruskal-Wallis test of fewer than two groups");
  std::sort(pooled.begin(), pooled.end());
  const double n = static_cast<double>(pooled.size());
  std::vector<double> rank_sums(groups.size(), 0);
  double ties = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = (static_cast<double>(i + j) + 1) / 2;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) rank_sums[pooled[k].second] += mid_rank;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  GroupTest test;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].empty()) test.h += rank_sums[g] * rank_sums[g] / static_cast<double>(groups[g].size());
  }
  test.h = 12 / (n * (n + 1)) * test.h - 3 * (n + 1);
  const double correction = 1 - ties / (n * n * n - n);
  if (correction <= 0) return {0, 1};  // every value the same
  test.h /= correction;
  test.p = UpperGammaQ((nonempty - 1) / 2.0, test.h / 2);
  return test;
}

std::optional<double> KendallTau(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("Kendall's tau of samples of different lengths");
  double concordant_less_discordant = 0, untied_x = 0, untied_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const int order_x = (x[i] < x[j]) - (x[j] < x[i]);
      const int order_y = (y[i] < y[j]) - (y[j] < y[i]);
      concordant_less_discordant += order_x * order_y;
      untied_x += order_x != 0;
      untied_y += order_y != 0;
    }
  }
  if (untied_x == 0 || untied_y == 0) return std::nullopt;
  return concordant_less_discordant / std::sqrt(untied_x * untied_y);
}

}  // namespace dmlbench
