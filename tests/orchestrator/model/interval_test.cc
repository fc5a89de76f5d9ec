// Tests of the prediction intervals (interval.h): the split-conformal
// quantile's rank and its nominal coverage on exchangeable residuals, the
// per-regime scaling only where the residuals differ, leaving each
// calibration configuration out, leaving the largest worker count out, the
// interval beyond the calibration's workers, and an interval read back from
// a fit.
#include "orchestrator/model/interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "orchestrator/model/models.h"
#include "tests/orchestrator/model/model_data.h"

namespace dmlbench {
namespace {

using testing::CalibrationRun;
using testing::Configuration;
using testing::Probe;

TEST(IntervalTest, TheConformalQuantileIsTheScoreOfRankCeilNPlusOneTimesTheLevel) {
  std::vector<double> scores;
  for (int i = 19; i >= 1; --i) scores.push_back(i);
  // n = 19: rank ceil(20 · 0.9) = 18.
  EXPECT_EQ(ConformalQuantile(scores, 0.9), 18.0);
  // rank ceil(20 · 0.5) = 10.
  EXPECT_EQ(ConformalQuantile(scores, 0.5), 10.0);
  // n = 9 is the fewest for 0.9 (rank 9); 8 scores are too few.
  EXPECT_EQ(ConformalQuantile({5, 1, 2, 3, 4, 6, 7, 8, 9}, 0.9), 9.0);
  EXPECT_FALSE(ConformalQuantile({1, 2, 3, 4, 5, 6, 7, 8}, 0.9).has_value());
  EXPECT_FALSE(ConformalQuantile({}, 0.9).has_value());
}

// On exchangeable scores the interval holds a new one with probability
// between the level and the level + 1/(n+1): over many draws, the share
// held lies there within the draws' own noise.
TEST(IntervalTest, OnExchangeableResidualsTheIntervalReachesItsNominalCoverage) {
  std::mt19937 random(45);
  std::normal_distribution<double> residual(0, 0.05);
  for (const auto& [n, level] : {std::pair{40, 0.9}, std::pair{12, 0.9}, std::pair{40, 0.8}}) {
    const int trials = 4000;
    int held = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> scores;
      for (int i = 0; i < n; ++i) scores.push_back(std::fabs(residual(random)));
      const double q = *ConformalQuantile(scores, level);
      if (std::fabs(residual(random)) <= q) ++held;
    }
    const double coverage = static_cast<double>(held) / trials;
    const double noise = 3 * std::sqrt(level * (1 - level) / trials);
    EXPECT_GE(coverage, level - noise) << "n=" << n << " level " << level;
    EXPECT_LE(coverage, level + 1.0 / (n + 1) + noise) << "n=" << n << " level " << level;
  }
}

// A left-out point of `architecture` measured at `measured_s` and predicted
// at 1 s.
PointError LeftOutPoint(const std::string& architecture, double measured_s) {
  PointError point;
  point.architecture = architecture;
  point.split = "calibration";
  point.measured.median = measured_s;
  point.predicted_epoch_s = 1;
  point.relative_error = 1 - measured_s;
  return point;
}

TEST(IntervalTest, OneWidthServesEveryRegimeUnlessTheirResidualsDiffer) {
  std::mt19937 random(7);
  std::normal_distribution<double> small(0, 0.02), large(0, 0.2);
  std::vector<PointError> alike, apart;
  for (int i = 0; i < 12; ++i) {
    alike.push_back(LeftOutPoint("ring", std::exp(small(random))));
    alike.push_back(LeftOutPoint("mpi", std::exp(small(random))));
    apart.push_back(LeftOutPoint("ring", std::exp(small(random))));
    apart.push_back(LeftOutPoint("mpi", std::exp(large(random))));
  }
  const std::vector<ModelIntervalRow> one = IntervalRows(alike, 0.9);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].scope, "");
  EXPECT_EQ(one[0].level, 0.9);
  EXPECT_EQ(one[0].configurations, 24);
  EXPECT_GT(one[0].log_half_width, 0.01);
  EXPECT_LT(one[0].log_half_width, 0.1);

  const std::vector<ModelIntervalRow> per_regime = IntervalRows(apart, 0.9);
  ASSERT_EQ(per_regime.size(), 3u);
  EXPECT_EQ(per_regime[0].scope, "");
  EXPECT_EQ(per_regime[1].scope, "mpi");
  EXPECT_EQ(per_regime[2].scope, "ring");
  EXPECT_GT(per_regime[1].log_half_width, 4 * per_regime[2].log_half_width);

  // Too few left-out points for the level: no interval at all.
  EXPECT_TRUE(IntervalRows(std::vector<PointError>(alike.begin(), alike.begin() + 8), 0.9).empty());
}

TEST(IntervalTest, APredictionTakesItsRegimesRowElseTheRowOfEveryRegime) {
  ModelFitRecord fit;
  EXPECT_FALSE(IntervalOf(fit, Configuration(Architecture::kRing, 4, 0, 100, 1e9), 2.0).has_value());
  fit.intervals = {{"", 0.9, std::log(1.1), 20}, {"ring", 0.9, std::log(1.5), 5}};
  const std::optional<EpochInterval> ring = IntervalOf(fit, Configuration(Architecture::kRing, 4, 0, 100, 1e9), 2.0);
  ASSERT_TRUE(ring.has_value());
  EXPECT_DOUBLE_EQ(ring->low_s, 2.0 / 1.5);
  EXPECT_DOUBLE_EQ(ring->high_s, 3.0);
  EXPECT_DOUBLE_EQ(ring->level, 0.9);
  const std::optional<EpochInterval> mpi = IntervalOf(fit, Configuration(Architecture::kMpi, 4, 0, 100, 1e9), 2.0);
  ASSERT_TRUE(mpi.has_value());
  EXPECT_DOUBLE_EQ(mpi->high_s, 2.2);
  EXPECT_NEAR(RelativeHalfWidth(*mpi, 2.0), (1.1 - 1 / 1.1) / 2, 1e-12);
}

// A left-out point of `workers` workers measured at `measured_s` and
// predicted at 1 s.
PointError LargestLeftOutPoint(int workers, double measured_s) {
  PointError point = LeftOutPoint("ring", measured_s);
  point.config = Configuration(Architecture::kRing, workers, 0, 100, 1e9);
  return point;
}

TEST(IntervalTest, BeyondTheCalibrationsWorkersTheLargestCountLeftOutSetsTheInterval) {
  // 12 points at 4 workers, residuals log(1.01) ... log(1.12): at 0.9 the
  // quantile is the 12th, the largest.
  std::vector<PointError> largest;
  for (int i = 1; i <= 12; ++i) largest.push_back(LargestLeftOutPoint(4, 1 + 0.01 * i));
  const std::optional<ModelIntervalRow> row = BeyondWorkersRow(largest, 0.9);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->scope, "");
  EXPECT_EQ(row->beyond_workers, 4);
  EXPECT_EQ(row->configurations, 12);
  EXPECT_DOUBLE_EQ(row->level, 0.9);
  EXPECT_NEAR(row->log_half_width, std::log(1.12), 1e-12);
  // Too few for the level: none; and none without a point.
  EXPECT_FALSE(BeyondWorkersRow(std::vector<PointError>(largest.begin(), largest.begin() + 8), 0.9).has_value());
  EXPECT_FALSE(BeyondWorkersRow({}, 0.9).has_value());
}

TEST(IntervalTest, APredictionOfMoreWorkersTakesTheWiderOfItsRegimesRowAndTheRowBeyond) {
  ModelFitRecord fit;
  fit.intervals = {{"", 0.9, std::log(1.1), 20}, {"ring", 0.9, std::log(1.5), 5}, {"", 0.9, std::log(1.3), 12, 4}};
  const auto high = [&fit](Architecture architecture, int workers) {
    return IntervalOf(fit, Configuration(architecture, workers, 0, 100, 1e9), 2.0)->high_s;
  };
  EXPECT_DOUBLE_EQ(high(Architecture::kMpi, 3), 2.2);  // within the calibration's workers
  EXPECT_DOUBLE_EQ(high(Architecture::kMpi, 4), 2.2);
  EXPECT_DOUBLE_EQ(high(Architecture::kMpi, 5), 2.6);  // beyond: the wider
  EXPECT_DOUBLE_EQ(high(Architecture::kRing, 7), 3.0);  // its own row is wider still
  EXPECT_DOUBLE_EQ(IntervalOf(fit, Configuration(Architecture::kMpi, 5, 0, 100, 1e9), 2.0)->low_s, 2.0 / 1.3);
  EXPECT_EQ(BeyondWorkersRowOf(fit), &fit.intervals[2]);
  fit.intervals.pop_back();
  EXPECT_EQ(BeyondWorkersRowOf(fit), nullptr);
  EXPECT_DOUBLE_EQ(high(Architecture::kMpi, 5), 2.2);
}

// Epoch time exactly linear in the workers: each configuration left out is
// predicted by the line through the others, so every left-out error is 0,
// and the interval is as narrow.
TEST(IntervalTest, EachCalibrationConfigurationIsLeftOutAndPredictedByAFitOnTheOthers) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  std::int64_t id = 0;
  for (int workers = 1; workers <= 10; ++workers) {
    for (int repetition = 0; repetition < 2; ++repetition) {
      data.runs.push_back(CalibrationRun(++id, Configuration(Architecture::kRing, workers, 0, 100, 1e9),
                                         3.0 + 0.25 * workers));
    }
  }
  const PerformanceModel& linear = ModelNamed("linear");
  const LeftOut left_out = LeaveOneConfigurationOut(linear, data, {});
  ASSERT_EQ(left_out.points.size(), 10u);
  EXPECT_TRUE(left_out.skipped.empty());
  for (const PointError& point : left_out.points) {
    EXPECT_EQ(point.split, "calibration");
    EXPECT_NEAR(point.relative_error, 0, 1e-9) << point.label;
  }
  const ModelFitRecord fit = FitWithInterval(linear, data, {});
  ASSERT_EQ(fit.intervals.size(), 1u);
  EXPECT_NEAR(fit.intervals[0].log_half_width, 0, 1e-9);
  EXPECT_EQ(fit.intervals[0].configurations, 10);
}

// Ten lines in the workers (one per batch size), each exact but for a
// slower largest count: a fit on 1 to 3 workers predicts the 4-worker runs
// 20 % too fast, and the fit's interval beyond 4 workers says so, while
// leaving one configuration out (mostly inside the line) says less.
TEST(IntervalTest, AFitCarriesTheIntervalOfItsLargestWorkerCountLeftOut) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  std::int64_t id = 0;
  for (int batch = 10; batch <= 100; batch += 10) {
    for (int workers = 1; workers <= 4; ++workers) {
      const double epoch_s = (3.0 + 0.25 * workers) * (workers == 4 ? 1.2 : 1.0);
      for (int repetition = 0; repetition < 2; ++repetition) {
        data.runs.push_back(CalibrationRun(++id, Configuration(Architecture::kRing, workers, 0, batch, 1e9), epoch_s));
      }
    }
  }
  const ModelFitRecord fit = FitWithInterval(ModelNamed("linear"), data, {});
  const ModelIntervalRow* beyond = BeyondWorkersRowOf(fit);
  ASSERT_NE(beyond, nullptr);
  EXPECT_EQ(beyond->beyond_workers, 4);
  EXPECT_EQ(beyond->configurations, 10);
  EXPECT_NEAR(beyond->log_half_width, std::log(1.2), 1e-9);
  ASSERT_FALSE(fit.intervals.empty());
  EXPECT_EQ(fit.intervals.front().beyond_workers, 0);
  EXPECT_EQ(fit.intervals.front().configurations, 40);
  const ModelConfig five = Configuration(Architecture::kRing, 5, 0, 50, 1e9);
  EXPECT_GE(IntervalOf(fit, five, 1.0)->high_s, 1.2 - 1e-9);
}

TEST(IntervalTest, AValidationRunIsNeverLeftOutOrFitted) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  data.runs.push_back(CalibrationRun(1, Configuration(Architecture::kRing, 2, 0, 100, 1e9), 3.0));
  data.runs.push_back(CalibrationRun(2, Configuration(Architecture::kRing, 4, 0, 100, 1e9), 3.5));
  data.runs.back().split = "validation";
  data.runs.back().run_key = "0123456789abcdef";
  try {
    LeaveOneConfigurationOut(ModelNamed("linear"), data, {});
    FAIL() << "a validation run was left out";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "run 0123456789ab is a validation run: only calibration configurations are left out");
  }
}

// linear, recording the workers of every run each fit is given.
class RecordingLinear : public PerformanceModel {
 public:
  std::string_view name() const override { return linear_.name(); }
  int version() const override { return linear_.version(); }
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override {
    std::vector<int> workers;
    for (const RunObservation& run : data.runs) workers.push_back(run.config.workers);
    fitted_workers.push_back(workers);
    return linear_.Fit(data, fixed);
  }
  using PerformanceModel::Fit;
  mutable std::vector<std::vector<int>> fitted_workers;  // per fit, its runs' workers

 private:
  Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const override {
    return linear_.Predict(fit, config);
  }
  const PerformanceModel& linear_ = ModelNamed("linear");
};

// Epoch time exactly linear in the workers: the line through 1, 2 and 3
// workers predicts 4 exactly, and no run of 4 workers is fitted on.
TEST(IntervalTest, TheLargestWorkerCountIsPredictedByAFitOnFewerWorkersAlone) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  std::int64_t id = 0;
  for (Architecture architecture : {Architecture::kRing, Architecture::kMpi}) {
    for (int workers = 1; workers <= 4; ++workers) {
      for (int repetition = 0; repetition < 2; ++repetition) {
        data.runs.push_back(
            CalibrationRun(++id, Configuration(architecture, workers, 0, 100, 1e9), 3.0 + 0.25 * workers));
      }
    }
  }
  const RecordingLinear model;
  const LeftOut left_out = LeaveLargestWorkersOut(model, data, {});
  EXPECT_TRUE(left_out.skipped.empty());
  ASSERT_EQ(left_out.points.size(), 2u);
  for (const PointError& point : left_out.points) {
    EXPECT_EQ(point.config.workers, 4) << point.label;
    EXPECT_EQ(point.split, "calibration");
    EXPECT_NEAR(point.relative_error, 0, 1e-9) << point.label;
  }
  ASSERT_EQ(model.fitted_workers.size(), 1u);
  const std::vector<int>& fitted = model.fitted_workers.front();
  EXPECT_EQ(fitted.size(), 12u);  // every run of 1 to 3 workers
  EXPECT_EQ(*std::max_element(fitted.begin(), fitted.end()), 3);
}

// Where only the largest worker count has runs, nothing is left to fit
// on: the criterion names the configurations it cannot predict and why.
TEST(IntervalTest, AFitThatNeedsTheLargestWorkerCountSaysSo) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  data.runs.push_back(CalibrationRun(1, Configuration(Architecture::kRing, 4, 0, 100, 1e9), 3.0));
  data.runs.push_back(CalibrationRun(2, Configuration(Architecture::kRing, 4, 0, 100, 1e9), 3.1));
  const LeftOut left_out = LeaveLargestWorkersOut(ModelNamed("linear"), data, {});
  EXPECT_TRUE(left_out.points.empty());
  ASSERT_EQ(left_out.skipped.size(), 1u);
  EXPECT_EQ(left_out.skipped.front().rfind("every configuration of 4 workers: ", 0), 0u) << left_out.skipped.front();
}

TEST(IntervalTest, AValidationRunIsNeverFittedWhenTheLargestWorkerCountIsLeftOut) {
  ModelData data;
  data.links.push_back(Probe(1e9, 12e-6));
  data.runs.push_back(CalibrationRun(1, Configuration(Architecture::kRing, 2, 0, 100, 1e9), 3.0));
  data.runs.push_back(CalibrationRun(2, Configuration(Architecture::kRing, 1, 0, 100, 1e9), 3.5));
  data.runs.back().split = "validation";
  data.runs.back().run_key = "0123456789abcdef";
  try {
    LeaveLargestWorkersOut(ModelNamed("linear"), data, {});
    FAIL() << "a validation run was fitted on";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "run 0123456789ab is a validation run: only calibration configurations are left out");
  }
}

}  // namespace
}  // namespace dmlbench
