// Tests of orchestrator/model/least_squares: exact and noisy lines against
// their formula, weights, coefficients on very different scales, and the
// fits that cannot be made.
#include "orchestrator/model/least_squares.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dmlbench {
namespace {

TEST(LeastSquaresTest, ExactLineIsRecoveredWithZeroWidthIntervals) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (double x : {1.0, 2.0, 3.0, 5.0}) {
    rows.push_back({1.0, x});
    y.push_back(2 + 3 * x);
  }
  const LeastSquaresFit fit = FitLeastSquares({"a", "b"}, rows, y);
  EXPECT_NEAR(fit.coefficients[0].value, 2, 1e-12);
  EXPECT_NEAR(fit.coefficients[1].value, 3, 1e-12);
  EXPECT_NEAR(fit.coefficients[1].ci_high - fit.coefficients[1].ci_low, 0, 1e-9);
  EXPECT_EQ(fit.degrees_of_freedom, 2);
  EXPECT_NEAR(fit.residual_rms, 0, 1e-12);
}

TEST(LeastSquaresTest, NinetyFivePercentIntervalsCoverTheTruthNinetyFivePercentOfTheTime) {
  // Seconds and seconds per byte side by side, as in the corrected model;
  // 400 independent noisy data sets of 12 observations (10 degrees of
  // freedom, so Student's t matters).
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1e-5);
  int covered_overhead = 0, covered_slope = 0;
  constexpr int kTrials = 400;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (int i = 0; i < 12; ++i) {
      const double bytes = 1e5 * (1 + i % 7);
      rows.push_back({1.0, bytes});
      y.push_back(2e-4 + 3e-9 * bytes + noise(rng));
    }
    const LeastSquaresFit fit = FitLeastSquares({"overhead_s", "per_byte_s"}, rows, y);
    covered_overhead += fit.coefficients[0].ci_low <= 2e-4 && 2e-4 <= fit.coefficients[0].ci_high;
    covered_slope += fit.coefficients[1].ci_low <= 3e-9 && 3e-9 <= fit.coefficients[1].ci_high;
    EXPECT_EQ(fit.degrees_of_freedom, 10);
  }
  // Binomial(400, 0.95): 380 +- 4.4; a normal interval (z = 1.96) would
  // still cover ~92%, a wrong standard error far less or far more.
  EXPECT_NEAR(covered_overhead, 0.95 * kTrials, 14);
  EXPECT_NEAR(covered_slope, 0.95 * kTrials, 14);
}

TEST(LeastSquaresTest, WeightsDecideBetweenInconsistentObservations) {
  // Two observations of one constant; weight 9:1 pulls it to 0.9 of the way.
  const LeastSquaresFit fit = FitLeastSquares({"c"}, {{1.0}, {1.0}}, {0.0, 1.0}, {1.0, 9.0});
  EXPECT_NEAR(fit.coefficients[0].value, 0.9, 1e-12);
}

// ---- error paths of least_squares.cc follow ------------------------------

TEST(LeastSquaresTest, TooFewObservations) {
  try {
    FitLeastSquares({"a", "b"}, {{1.0, 2.0}}, {3.0});
    FAIL() << "fitted two coefficients to one observation";
  } catch (const FitError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot fit 2 coefficients to 1 observations");
  }
}

TEST(LeastSquaresTest, ColumnsThatCannotBeToldApartAreNamed) {
  try {
    FitLeastSquares({"a", "twice_a"}, {{1.0, 2.0}, {2.0, 4.0}, {3.0, 6.0}}, {1.0, 2.0, 3.0});
    FAIL() << "fitted two proportional columns";
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("the calibration data cannot tell these coefficients from the others: "),
              std::string::npos)
        << e.what();
  }
}

TEST(LeastSquaresTest, ColumnWithoutDataIsNamed) {
  try {
    FitLeastSquares({"a", "b"}, {{1.0, 0.0}, {2.0, 0.0}}, {1.0, 2.0});
    FAIL() << "fitted a coefficient without data";
  } catch (const FitError& e) {
    EXPECT_EQ(std::string(e.what()), "coefficient b has no data: its column is zero");
  }
}

}  // namespace
}  // namespace dmlbench

namespace dmlbench {
namespace {

// y = a (x^p + c^p)^(1/p), the corrected model's p-norm in one variable,
// with 1% noise: the nonlinear fit finds a, c and p inside its intervals.
TEST(NonlinearLeastSquaresTest, PNormIsRecoveredWithIntervalsAroundTheTruth) {
  const double a = 2, c = 3, p = 2.5;
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(1.0, 0.01);
  std::vector<double> x, y;
  for (int i = 1; i <= 40; ++i) {
    x.push_back(0.25 * i);
    y.push_back(a * std::pow(std::pow(x.back(), p) + std::pow(c, p), 1 / p) * noise(rng));
  }
  const LeastSquaresFit fit = FitNonlinearLeastSquares(
      {"a", "c", "p"}, {1, 1, 1.5}, x.size(), [&](const std::vector<double>& b, std::vector<double>& r) {
        for (std::size_t i = 0; i < x.size(); ++i) {
          r[i] = b[0] * std::pow(std::pow(x[i], b[2]) + std::pow(b[1], b[2]), 1 / b[2]) / y[i] - 1;
        }
      });
  ASSERT_EQ(fit.coefficients.size(), 3u);
  const double truth[] = {a, c, p};
  for (int j = 0; j < 3; ++j) {
    EXPECT_LE(fit.coefficients[j].ci_low, truth[j]) << fit.coefficients[j].name;
    EXPECT_GE(fit.coefficients[j].ci_high, truth[j]) << fit.coefficients[j].name;
    EXPECT_LT(fit.coefficients[j].ci_high - fit.coefficients[j].ci_low, 0.5 * truth[j]) << fit.coefficients[j].name;
  }
  EXPECT_EQ(fit.degrees_of_freedom, 37);
  EXPECT_LT(fit.residual_rms, 0.02);
}

TEST(NonlinearLeastSquaresTest, TooFewObservationsAndCoefficientsThatCannotBeToldApart) {
  EXPECT_THROW(FitNonlinearLeastSquares({"a", "b"}, {1, 1}, 1,
                                        [](const std::vector<double>& b, std::vector<double>& r) { r[0] = b[0]; }),
               FitError);
  // Only a + b matters: the Jacobian's columns are equal.
  try {
    FitNonlinearLeastSquares({"a", "b"}, {1, 1}, 3, [](const std::vector<double>& b, std::vector<double>& r) {
      for (int i = 0; i < 3; ++i) r[static_cast<std::size_t>(i)] = (b[0] + b[1]) * (i + 1) - 6.0 * (i + 1);
    });
    FAIL() << "fitted two coefficients only their sum decides";
  } catch (const FitError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the calibration data cannot tell these coefficients of the nonlinear fit from the others: a");
  }
}

// A coefficient that moves the residuals twelve orders of magnitude less
// than another (in the corrected model: a wire factor where every run is
// CPU-bound, held by its weak prior alone) is still told apart: the rank is
// decided on the Jacobian's columns scaled to unit norm, not on their
// product, where the smaller read as zero beside the larger.
TEST(NonlinearLeastSquaresTest, CoefficientsOfVeryDifferentScalesAreToldApart) {
  const LeastSquaresFit fit =
      FitNonlinearLeastSquares({"a", "b"}, {1, 1}, 4, [](const std::vector<double>& b, std::vector<double>& r) {
        for (int i = 0; i < 3; ++i) r[static_cast<std::size_t>(i)] = 1e8 * (b[0] - 3) * (i + 1) + 1e-3 * (i % 2);
        r[3] = 1e-4 * (b[1] - 5);
      });
  ASSERT_EQ(fit.coefficients.size(), 2u);
  EXPECT_NEAR(fit.coefficients[0].value, 3, 1e-9);
  EXPECT_NEAR(fit.coefficients[1].value, 5, 1e-3);
  for (const Coefficient& c : fit.coefficients) {
    EXPECT_TRUE(std::isfinite(c.ci_low) && std::isfinite(c.ci_high)) << c.name;
    EXPECT_LT(c.ci_low, c.value) << c.name;
    EXPECT_GT(c.ci_high, c.value) << c.name;
  }
}

}  // namespace
}  // namespace dmlbench
