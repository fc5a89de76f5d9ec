// Tests of orchestrator/model/linear: the baseline recovers a line per
// architecture, batch and profile, holds the slope at 0 where the runs have
// one worker count, falls back to the nearest batch, and refuses what it
// has no line for.
#include "orchestrator/model/linear.h"

#include <gtest/gtest.h>

#include "orchestrator/model/fitting.h"
#include "tests/orchestrator/model/model_data.h"

namespace dmlbench {
namespace {

using testing::CalibrationRun;
using testing::Configuration;
using testing::Probe;

constexpr double kGigabit = 1e9;
constexpr char kScope100[] = "ring b=100 1e+09bit/s 0s";
constexpr char kScope200[] = "ring b=200 1e+09bit/s 0s";

// ring at b = 100 on w = 1, 2, 4: epoch 2 + 0.5 w s; at b = 200 only w = 2: 1.5 s.
ModelData Calibration() {
  ModelData data;
  data.links.push_back(Probe(kGigabit, 10e-6));
  std::int64_t id = 0;
  for (int w : {1, 2, 4}) {
    data.runs.push_back(CalibrationRun(++id, Configuration(Architecture::kRing, w, 0, 100, kGigabit), 2 + 0.5 * w));
  }
  data.runs.push_back(CalibrationRun(++id, Configuration(Architecture::kRing, 2, 0, 200, kGigabit), 1.5));
  ModelConfig overlap = Configuration(Architecture::kRing, 2, 0, 100, kGigabit);
  overlap.overlap = true;
  data.runs.push_back(CalibrationRun(++id, overlap, 100));  // not the baseline's: it never sees overlap
  return data;
}

TEST(LinearTest, RecoversTheLineOfEachGroupAndHoldsTheSlopeOfOneWorkerCount) {
  const ModelFitRecord fit = LinearModel().Fit(Calibration());
  EXPECT_NEAR(Parameter(fit, "intercept_s", kScope100), 2, 1e-9);
  EXPECT_NEAR(Parameter(fit, "slope_s_per_worker", kScope100), 0.5, 1e-9);
  EXPECT_NEAR(Parameter(fit, "intercept_s", kScope200), 1.5, 1e-9);
  const ModelParameterRow* slope = FindParameter(fit, "slope_s_per_worker", kScope200);
  ASSERT_NE(slope, nullptr);
  EXPECT_EQ(slope->value, 0);
  EXPECT_EQ(slope->source, "fixed");
  EXPECT_EQ(fit.runs.size(), 4u);
  EXPECT_EQ(fit.points, 4);  // worker counts per group: 3 + 1
}

TEST(LinearTest, ABatchNeverCalibratedTakesTheNearestBatchsLine) {
  const ModelFitRecord fit = LinearModel().Fit(Calibration());
  const ModelConfig config = Configuration(Architecture::kRing, 8, 0, 120, kGigabit);
  const Prediction p = LinearModel().Predict(fit, config);
  EXPECT_NEAR(p.epoch_s, 2 + 0.5 * 8, 1e-9);
  EXPECT_EQ(p.iterations, IterationsPerEpoch(config));
}

// ---- error paths of linear.cc follow -------------------------------------------

TEST(LinearTest, AnArchitectureOrProfileWithoutALineIsRefused) {
  const ModelFitRecord fit = LinearModel().Fit(Calibration());
  try {
    LinearModel().Predict(fit, Configuration(Architecture::kPs, 2, 1, 100, kGigabit));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "linear has no line for ps k=1 b=100 1e+09bit/s 0s: no calibration run of it");
  }
  EXPECT_THROW(LinearModel().Predict(fit, Configuration(Architecture::kRing, 2, 0, 100, 1e8)), ModelError);
}

TEST(LinearTest, HoldsNoParameterAtAValue) {
  EXPECT_THROW(LinearModel().Fit(Calibration(), {{"intercept_s", 1}}), ModelError);
}

}  // namespace
}  // namespace dmlbench
