// Tests of orchestrator/model/statistics against values from tables: the
// binomial order-statistic intervals of Le Boudec's table 2.1, Student's t
// quantiles, and the plain summaries.
#include "orchestrator/core/statistics.h"

#include <gtest/gtest.h>

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

// ---- error paths of statistics.cc follow ---------------------------------

TEST(StatisticsTest, EmptySamplesAndBadArgumentsAreRefused) {
  EXPECT_THROW(Median({}), std::invalid_argument);
  EXPECT_THROW(MedianConfidenceInterval({}), std::invalid_argument);
  EXPECT_THROW(StudentTQuantile(0.975, 0), std::invalid_argument);
  EXPECT_THROW(StudentTQuantile(1.0, 5), std::invalid_argument);
}

}  // namespace
}  // namespace dmlbench
