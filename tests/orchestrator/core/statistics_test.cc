// Tests of orchestrator/core/statistics against values from tables: the
// binomial order-statistic intervals of Le Boudec's table 2.1, Student's t
// quantiles and interval of a mean, the plain summaries, and the rank tests
// (U, signed-rank and their intervals) against R's, SciPy's and Hollander &
// Wolfe's documented examples and against enumeration of every arrangement.
#include "orchestrator/core/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace dmlbench {
namespace {

TEST(StatisticsTest, MedianAndQuantiles) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Quantile({1, 2, 3, 4, 5}, 0.95), 4.8);
  EXPECT_EQ(Quantile({7}, 0.95), 7);
}

TEST(StatisticsTest, MedianIntervalFromOrderStatistics) {
  // n = 10 at 95%: ranks 2 and 9 (Le Boudec, table 2.1), coverage 97.9%.
  const MedianInterval ten = MedianConfidenceInterval({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_EQ(ten.low, 2);
  EXPECT_EQ(ten.high, 9);
  EXPECT_NEAR(ten.coverage, 1 - 2 * 11.0 / 1024, 1e-12);
  EXPECT_EQ(ten.median, 5.5);
  EXPECT_EQ(ten.n, 10);
  // n = 6: the extremes, 96.9%.
  const MedianInterval six = MedianConfidenceInterval({6, 5, 4, 3, 2, 1});
  EXPECT_EQ(six.low, 1);
  EXPECT_EQ(six.high, 6);
  EXPECT_NEAR(six.coverage, 1 - 2.0 / 64, 1e-12);
}

TEST(StatisticsTest, FiveRepetitionsCannotReachNinetyFivePercent) {
  const MedianInterval five = MedianConfidenceInterval({1, 2, 3, 4, 5});
  EXPECT_EQ(five.low, 1);
  EXPECT_EQ(five.high, 5);
  EXPECT_NEAR(five.coverage, 0.9375, 1e-12);
  EXPECT_LT(five.coverage, 0.95);
}

TEST(StatisticsTest, CoefficientOfVariation) {
  EXPECT_NEAR(*CoefficientOfVariation({2, 4, 4, 4, 5, 5, 7, 9}), 2.138089935 / 5, 1e-9);
  EXPECT_FALSE(CoefficientOfVariation({3}).has_value());
  EXPECT_FALSE(CoefficientOfVariation({0, 0}).has_value());
}

TEST(StatisticsTest, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.228, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.042, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.5, 7), 0, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.025, 10), -2.228, 1e-3);
}

// R's ?wilcox.test example (Hollander & Wolfe, p. 110): W = 35, exact
// one-sided p 0.1272, two-sided 0.2544.
TEST(MannWhitneyTest, MatchesRsExactExample) {
  const std::vector<double> x = {0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46};
  const std::vector<double> y = {1.15, 0.88, 0.90, 0.74, 1.21};
  const UTest test = MannWhitneyU(y, x);
  EXPECT_EQ(test.u, 35);
  EXPECT_TRUE(test.exact);
  EXPECT_NEAR(test.p, 0.2544122544, 1e-9);
  EXPECT_EQ(MannWhitneyU(x, y).u, 15) << "U of A against B is |A| |B| - U of B against A";
  EXPECT_NEAR(MannWhitneyU(x, y).p, test.p, 1e-12);
}

// SciPy's mannwhitneyu example: U = 17, exact p 0.1111.
TEST(MannWhitneyTest, MatchesSciPysExactExample) {
  const UTest test = MannWhitneyU({20, 11, 17, 12}, {19, 22, 16, 29, 24});
  EXPECT_EQ(test.u, 17);
  EXPECT_NEAR(test.p, 1.0 / 9, 1e-12);
}

// The exact distribution against every arrangement of 4 A and 5 B values
// over the ranks 0..8: each arrangement's p is the share of arrangements
// whose U is at least as far out, on its side, doubled.
TEST(MannWhitneyTest, ExactPValuesMatchEnumeration) {
  const int m = 4, n = 5;
  std::vector<bool> is_a(m + n, false);
  std::fill(is_a.begin(), is_a.begin() + m, true);
  std::vector<std::pair<std::vector<double>, std::vector<double>>> arrangements;
  std::map<double, int> count_of_u;
  do {
    std::vector<double> a, b;
    for (int rank = 0; rank < m + n; ++rank) (is_a[rank] ? a : b).push_back(rank);
    double u = 0;
    for (double x : a) {
      for (double y : b) u += y > x ? 1 : 0;
    }
    ++count_of_u[u];
    arrangements.emplace_back(a, b);
  } while (std::prev_permutation(is_a.begin(), is_a.end()));
  ASSERT_EQ(arrangements.size(), 126u);
  for (const auto& [a, b] : arrangements) {
    const UTest test = MannWhitneyU(a, b);
    double below = 0, above = 0;
    for (const auto& [u, count] : count_of_u) {
      if (u <= test.u) below += count;
      if (u >= test.u) above += count;
    }
    EXPECT_NEAR(test.p, std::min(1.0, 2 * std::min(below, above) / 126), 1e-12) << "U = " << test.u;
  }
  EXPECT_NEAR(SmallestUTestP(4, 5), 2.0 / 126, 1e-12);
  EXPECT_NEAR(SmallestUTestP(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(SmallestUTestP(5, 5), 2.0 / 252, 1e-12);
}

// Ties take the normal approximation with the tie-corrected variance and
// the continuity correction (as R's wilcox.test(correct = TRUE)): by hand,
// U = 11, variance 12/12 (8 - 30/42), z = 4.5 / 2.6992, p = 0.095483.
TEST(MannWhitneyTest, TiesTakeTheCorrectedNormalApproximation) {
  const UTest test = MannWhitneyU({1, 2, 2}, {2, 3, 3, 4});
  EXPECT_EQ(test.u, 11);
  EXPECT_FALSE(test.exact);
  EXPECT_NEAR(test.p, 0.0954832321, 1e-9);
  const UTest equal = MannWhitneyU({5, 5}, {5, 5, 5});
  EXPECT_EQ(equal.p, 1);
}

// Above 50 a side, the normal approximation without ties, with the
// continuity correction.
TEST(MannWhitneyTest, LargeSamplesTakeTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 51; ++i) a.push_back(2 * i), b.push_back(2 * i + 1);  // B just above A: U = 51 x 52 / 2
  const UTest test = MannWhitneyU(a, b);
  EXPECT_FALSE(test.exact);
  EXPECT_EQ(test.u, 51 * 52 / 2);
  const double mn = 51.0 * 51, z = (test.u - mn / 2 - 0.5) / std::sqrt(mn * 103 / 12);
  EXPECT_NEAR(test.p, std::erfc(z / std::sqrt(2.0)), 1e-12);
}

// Moses' interval for m = n = 6 at 95%: U's null counts for 0..6 are the
// partitions 1, 1, 2, 3, 5, 7, 11, so P(U <= 5) = 19/924 <= 2.5% <
// P(U <= 6) = 30/924: the 6th smallest and 6th largest of the 36 ratios,
// coverage 1 - 38/924.
TEST(RatioIntervalTest, OrderStatisticsOfTheRatiosThatInvertTheUTest) {
  const std::vector<double> a = {1.0, 1.3, 1.1, 0.9, 1.05, 1.2};
  const std::vector<double> b = {1.5, 1.1, 1.4, 1.25, 1.33, 1.6};
  std::vector<double> ratios;
  for (double x : a) {
    for (double y : b) ratios.push_back(y / x);
  }
  std::sort(ratios.begin(), ratios.end());
  const RatioInterval interval = RatioConfidenceInterval(a, b, 0.95);
  EXPECT_DOUBLE_EQ(interval.low, ratios[5]);
  EXPECT_DOUBLE_EQ(interval.high, ratios[30]);
  EXPECT_NEAR(interval.coverage, 1 - 38.0 / 924, 1e-12);
  EXPECT_DOUBLE_EQ(interval.estimate, (ratios[17] + ratios[18]) / 2) << "Hodges-Lehmann: the median ratio";
  // Three a side cannot reach 95%: the widest interval, 1 - 2/20.
  const RatioInterval three = RatioConfidenceInterval({1, 2, 3}, {2, 4, 6}, 0.95);
  EXPECT_DOUBLE_EQ(three.low, 2.0 / 3);
  EXPECT_DOUBLE_EQ(three.high, 6);
  EXPECT_NEAR(three.coverage, 0.9, 1e-12);
}

// Hollander & Wolfe's example 3.1 (R's wilcox.test(x, y, paired = TRUE)):
// the differences' two negative ones have ranks 2 and 3 of 9, so V = 40;
// P(V >= 40) = P(V <= 5) = 10/512, two-sided 0.0390625.
TEST(SignedRankTest, TheExampleOfHollanderAndWolfe) {
  const std::vector<double> x = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
  const std::vector<double> y = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
  std::vector<double> d;
  for (size_t i = 0; i < x.size(); ++i) d.push_back(x[i] - y[i]);
  const SignedRankTest test = WilcoxonSignedRank(d);
  EXPECT_EQ(test.w_plus, 40);
  EXPECT_EQ(test.n, 9);
  EXPECT_TRUE(test.exact);
  EXPECT_NEAR(test.p, 20.0 / 512, 1e-12);
  EXPECT_NEAR(SmallestSignedRankP(9), 2.0 / 512, 1e-15);
  EXPECT_EQ(SmallestSignedRankP(1), 1);
}

// Every sign pattern of the values 1..6: the exact p against the count of
// patterns whose W+ lies as far out.
TEST(SignedRankTest, ExactPValuesMatchEnumeration) {
  std::map<int, int> count_of_w;
  for (int signs = 0; signs < 64; ++signs) {
    int w = 0;
    for (int i = 0; i < 6; ++i) w += (signs >> i & 1) ? i + 1 : 0;
    ++count_of_w[w];
  }
  for (int signs = 0; signs < 64; ++signs) {
    std::vector<double> x;
    for (int i = 0; i < 6; ++i) x.push_back((signs >> i & 1) ? i + 1 : -(i + 1));
    const SignedRankTest test = WilcoxonSignedRank(x);
    double below = 0, above = 0;
    for (const auto& [w, count] : count_of_w) {
      if (w <= test.w_plus) below += count;
      if (w >= test.w_plus) above += count;
    }
    EXPECT_NEAR(test.p, std::min(1.0, 2 * std::min(below, above) / 64), 1e-12) << "W+ = " << test.w_plus;
  }
}

// Zeros are dropped and ties mid-ranked, with the normal approximation:
// {1, -1, 2, 2, 3} ranked 1.5, 1.5, 3.5, 3.5, 5, W+ = 13.5, mean 7.5,
// variance 5 x 6 x 11 / 24 - 12/48 = 13.5, z = 5.5 / sqrt(13.5).
TEST(SignedRankTest, ZerosAreDroppedAndTiesTakeTheCorrectedNormalApproximation) {
  const SignedRankTest test = WilcoxonSignedRank({0, 1, -1, 2, 2, 3});
  EXPECT_EQ(test.n, 5);
  EXPECT_EQ(test.w_plus, 13.5);
  EXPECT_FALSE(test.exact);
  EXPECT_NEAR(test.p, 0.13441657417036035, 1e-12);
  const SignedRankTest none = WilcoxonSignedRank({0, 0, 0});
  EXPECT_EQ(none.n, 0);
  EXPECT_EQ(none.p, 1);
}

// Ten values at 95%: P(W+ <= 8) = 25/1024 <= 2.5% < P(W+ <= 9) = 33/1024,
// so the 9th smallest and 9th largest of the 55 Walsh averages, coverage
// 1 - 50/1024; three values cannot reach 95%: the widest, 1 - 2/8.
TEST(SignedRankTest, TheIntervalIsOfTheWalshAverages) {
  const std::vector<double> x = {-0.3, 0.1, 0.4, 0.45, 0.7, 0.9, 1.2, 1.25, 1.6, 2.5};
  std::vector<double> walsh;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i; j < x.size(); ++j) walsh.push_back((x[i] + x[j]) / 2);
  }
  std::sort(walsh.begin(), walsh.end());
  const ShiftInterval interval = SignedRankInterval(x, 0.95);
  EXPECT_DOUBLE_EQ(interval.estimate, walsh[27]);
  EXPECT_DOUBLE_EQ(interval.low, walsh[8]);
  EXPECT_DOUBLE_EQ(interval.high, walsh[46]);
  EXPECT_NEAR(interval.coverage, 1 - 50.0 / 1024, 1e-12);
  const ShiftInterval three = SignedRankInterval({1, 2, 4}, 0.95);
  EXPECT_DOUBLE_EQ(three.estimate, 2.25);  // of 1, 1.5, 2, 2.5, 3, 4
  EXPECT_DOUBLE_EQ(three.low, 1);
  EXPECT_DOUBLE_EQ(three.high, 4);
  EXPECT_NEAR(three.coverage, 0.75, 1e-12);
}

// 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445.
TEST(MeanIntervalTest, StudentsIntervalOfTheMean) {
  const MeanInterval interval = MeanConfidenceInterval({5, 1, 4, 2, 3}, 0.95);
  EXPECT_EQ(interval.n, 5);
  EXPECT_DOUBLE_EQ(interval.mean, 3);
  EXPECT_NEAR(interval.low, 3 - 1.9632431614775607, 1e-6);
  EXPECT_NEAR(interval.high, 3 + 1.9632431614775607, 1e-6);
  const MeanInterval flat = MeanConfidenceInterval({2, 2}, 0.95);
  EXPECT_EQ(flat.low, 2);
  EXPECT_EQ(flat.high, 2);
}

TEST(HolmTest, StepDownAdjustmentKeepsTheInputOrder) {
  const std::vector<double> adjusted = HolmAdjust({0.01, 0.04, 0.03, 0.005});
  // Sorted: 0.005 x 4, 0.01 x 3, 0.03 x 2, 0.04 x 1 -> 0.02, 0.03, 0.06, max(0.06, 0.04).
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_NEAR(adjusted[0], 0.03, 1e-12);
  EXPECT_NEAR(adjusted[1], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[2], 0.06, 1e-12);
  EXPECT_NEAR(adjusted[3], 0.02, 1e-12);
  EXPECT_EQ(HolmAdjust({0.6, 0.7})[1], 1) << "capped at 1";
  EXPECT_TRUE(HolmAdjust({}).empty());
}

// Three ordered groups of two: J = 12, E = (36 - 12)/4 = 6, variance
// (6 x 5 x 17 - 3 x 2 x 1 x 9)/72 = 6.333, z = 2.3842, p = 0.017118.
TEST(JonckheereTerpstraTest, JonckheereTerpstraOfOrderedGroups) {
  const TrendTest up = JonckheereTerpstra({{1, 2}, {3, 4}, {5, 6}});
  EXPECT_EQ(up.j, 12);
  EXPECT_NEAR(up.z, 2.384158243, 1e-8);
  EXPECT_NEAR(up.p, 0.0171182397, 1e-9);
  const TrendTest down = JonckheereTerpstra({{5, 6}, {3, 4}, {1, 2}});
  EXPECT_NEAR(down.z, -up.z, 1e-12);
  EXPECT_NEAR(down.p, up.p, 1e-12);
  // An empty group (a build without runs of it) is skipped.
  EXPECT_NEAR(JonckheereTerpstra({{1, 2}, {}, {3, 4}, {5, 6}}).p, up.p, 1e-12);
}

// With ties, the variance is the exact one over every arrangement of the
// pooled values into groups of these sizes: enumerated, mean 8 and
// variance 8.742857 for {1, 1, 2, 2, 2, 3, 4} into 2, 2 and 3.
TEST(JonckheereTerpstraTest, TheTieCorrectedVarianceIsTheExactOne) {
  const TrendTest test = JonckheereTerpstra({{1, 2}, {1, 3}, {2, 2, 4}});
  EXPECT_EQ(test.j, 11.5);
  EXPECT_NEAR(test.z, (11.5 - 8) / std::sqrt(8.742857142857142), 1e-12);
  EXPECT_NEAR(test.p, 0.2365321566, 1e-9);
}

// ---- error paths of statistics.cc follow ---------------------------------

TEST(StatisticsTest, EmptySamplesAndBadArgumentsAreRefused) {
  EXPECT_THROW(Median({}), std::invalid_argument);
  EXPECT_THROW(MedianConfidenceInterval({}), std::invalid_argument);
  EXPECT_THROW(StudentTQuantile(0.975, 0), std::invalid_argument);
  EXPECT_THROW(StudentTQuantile(1.0, 5), std::invalid_argument);
  EXPECT_THROW(MannWhitneyU({}, {1}), std::invalid_argument);
  EXPECT_THROW(RatioConfidenceInterval({1}, {}), std::invalid_argument);
  EXPECT_THROW(RatioConfidenceInterval({1, 0}, {1}), std::invalid_argument);
  EXPECT_THROW(JonckheereTerpstra({{1, 2}, {}}), std::invalid_argument);
  EXPECT_THROW(SignedRankInterval({}), std::invalid_argument);
  EXPECT_THROW(MeanConfidenceInterval({1}), std::invalid_argument);
}

// H computed by hand from the ranks; with 3 groups (2 degrees of freedom)
// the chi-square tail is e^(-H/2), so p is known in closed form.
TEST(KruskalWallisTest, KruskalWallisOfThreeGroups) {
  const GroupTest test = KruskalWallis({{2.9, 3.0, 2.5, 2.6, 3.2}, {3.8, 2.7, 4.0, 2.4}, {2.8, 3.4, 3.7, 2.2, 2.0}});
  EXPECT_NEAR(test.h, 0.771428571, 1e-6);
  EXPECT_NEAR(test.p, 0.6799648, 1e-6);
  // Groups apart: every value of one above every value of the others.
  const GroupTest apart = KruskalWallis({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}});
  EXPECT_NEAR(apart.h, 9.846153846, 1e-6);
  EXPECT_NEAR(apart.p, std::exp(-9.846153846 / 2), 1e-9);  // chi-square with 2 dof
  // Ties: mid-ranks (1.5, 3.5, 6, 8.5) and H over 1 - 42/720.
  const GroupTest tied = KruskalWallis({{1, 1, 2}, {2, 3, 3}, {3, 4, 4}});
  EXPECT_NEAR(tied.h, 6.442477876, 1e-6);
  EXPECT_NEAR(tied.p, 0.039905587, 1e-8);
  EXPECT_EQ(KruskalWallis({{1, 1}, {1, 1}}).p, 1);
  EXPECT_THROW(KruskalWallis({{1, 2}, {}}), std::invalid_argument);
}

// Pairs counted by hand: y = (3, 1, 2, 5, 4) against x = 1..5 puts 7 of the
// 10 pairs in x's order and 3 against it.
TEST(KendallTauTest, KendallTauCountsConcordantPairs) {
  EXPECT_EQ(KendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_EQ(KendallTau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
  EXPECT_NEAR(*KendallTau({1, 2, 3, 4, 5}, {3, 1, 2, 5, 4}), 0.4, 1e-12);
  // tau-b: a pair tied in x counts for neither; 5 concordant of 5 untied in
  // x and 6 untied in y.
  EXPECT_NEAR(*KendallTau({1, 2, 2, 3}, {1, 3, 2, 4}), 5 / std::sqrt(30.0), 1e-12);
}

TEST(KendallTauTest, KendallTauOfNoOrderIsNone) {
  EXPECT_EQ(KendallTau({}, {}), std::nullopt);
  EXPECT_EQ(KendallTau({1}, {2}), std::nullopt);
  EXPECT_EQ(KendallTau({1, 1, 1}, {1, 2, 3}), std::nullopt);
  EXPECT_EQ(KendallTau({1, 2, 3}, {5, 5, 5}), std::nullopt);
  EXPECT_THROW(KendallTau({1, 2}, {1}), std::invalid_argument);
}

}  // namespace
}  // namespace dmlbench
