// Tests of orchestrator/model/paper2019: on runs that follow the paper's own
// equations the fit recovers their processing time per architecture, and
// the prediction adds the paper's communication; the refusals.
#include "orchestrator/model/paper2019.h"

#include <gtest/gtest.h>

#include <cmath>

#include "orchestrator/model/fitting.h"
#include "tests/orchestrator/model/model_data.h"

namespace dmlbench {
namespace {

using testing::CalibrationRun;
using testing::Configuration;
using testing::Probe;

constexpr double kGigabit = 1e9;
constexpr double kBytesPerS = kGigabit / 8;

// The paper's epoch: processing_s per iteration, and the ring's
// communication 2 (w - 1) (W / w) / B once per epoch.
double RingEpoch(const ModelConfig& config, double processing_s) {
  const double w = config.workers, W = 4.0 * static_cast<double>(ParameterCount(config));
  return processing_s * static_cast<double>(IterationsPerEpoch(config)) + 2 * (w - 1) * (W / w) / kBytesPerS;
}

// ps(k): pull W and push W / w, each at (B / w) k.
double PsEpoch(const ModelConfig& config, double processing_s) {
  const double w = config.workers, W = 4.0 * static_cast<double>(ParameterCount(config));
  const double available = kBytesPerS / w * config.servers;
  return processing_s * static_cast<double>(IterationsPerEpoch(config)) + W / available + (W / w) / available;
}

ModelData Calibration() {
  ModelData data;
  data.links.push_back(Probe(kGigabit, 10e-6));
  std::int64_t id = 0;
  for (int w : {1, 2, 4}) {
    const ModelConfig ring = Configuration(Architecture::kRing, w, 0, 100, kGigabit);
    data.runs.push_back(CalibrationRun(++id, ring, RingEpoch(ring, 0.004)));
    const ModelConfig ps = Configuration(Architecture::kPs, w, 2, 100, kGigabit);
    data.runs.push_back(CalibrationRun(++id, ps, PsEpoch(ps, 0.009)));
  }
  return data;
}

TEST(Paper2019Test, RecoversEachArchitecturesProcessingTime) {
  const ModelFitRecord fit = Paper2019().Fit(Calibration());
  EXPECT_EQ(fit.model, "paper2019");
  EXPECT_NEAR(Parameter(fit, "processing_s", "ring"), 0.004, 1e-12);
  EXPECT_NEAR(Parameter(fit, "processing_s", "ps k=2"), 0.009, 1e-12);
  EXPECT_EQ(fit.runs.size(), 6u);
  EXPECT_LT(*fit.residual_rms_s, 1e-12);
}

TEST(Paper2019Test, PredictsAWorkerCountNeverRunWithThePapersCommunication) {
  const ModelFitRecord fit = Paper2019().Fit(Calibration());
  const ModelConfig ring = Configuration(Architecture::kRing, 8, 0, 100, kGigabit);
  const Prediction p = Paper2019().Predict(fit, ring);
  EXPECT_NEAR(p.epoch_s, RingEpoch(ring, 0.004), 1e-9);
  EXPECT_NEAR(p.compute_s, 0.004, 1e-12);
  EXPECT_GT(p.comm_s, 0);
}

// ---- error paths of paper2019.cc follow -----------------------------------------

TEST(Paper2019Test, AnArchitectureNeverCalibratedHasNoProcessingTime) {
  const ModelFitRecord fit = Paper2019().Fit(Calibration());
  try {
    Paper2019().Predict(fit, Configuration(Architecture::kMpi, 4, 0, 100, kGigabit));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "paper2019 has no processing time for mpi: no calibration run of it");
  }
}

TEST(Paper2019Test, HoldsNoParameterAtAValue) {
  EXPECT_THROW(Paper2019().Fit(Calibration(), {{"processing_s ring", 0.004}}), ModelError);
}

}  // namespace
}  // namespace dmlbench
