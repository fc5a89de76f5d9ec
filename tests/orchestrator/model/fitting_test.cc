// Tests of orchestrator/model/fitting: what every model shares — a fit's
// parameters written and read back, the link a fit knows for a profile
// (probed or extrapolated from the probes), the runs a fit may use, and a
// prediction completed from its iteration time, and the measured stages of
// compute and the quota. Data built in memory.
#include "orchestrator/model/fitting.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "orchestrator/model/linear.h"

namespace dmlbench {
namespace {

constexpr double kGigabit = 1e9, kHundredMegabit = 1e8;

std::string Failure(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

ModelConfig Ring(int workers, double bandwidth_bits_per_s) {
  ModelConfig config;
  config.workers = workers;
  config.network.bandwidth_bits_per_s = bandwidth_bits_per_s;
  return config;
}

RunObservation Observed(std::int64_t run_id, const ModelConfig& config, std::string split = "calibration") {
  RunObservation run;
  run.run_id = run_id;
  run.run_key = "0123456789abcdef" + std::to_string(run_id);
  run.split = std::move(split);
  run.config = config;
  return run;
}

// Two shaped probes, at 0.90 and 0.96 of their configured rates.
ModelData TwoProbes() {
  ModelData data;
  data.links.push_back({kHundredMegabit, 0, 20e-6, kHundredMegabit / 8 * 0.90, {1, 2}});
  data.links.push_back({kGigabit, 0, 10e-6, kGigabit / 8 * 0.96, {3}});
  return data;
}

TEST(FittingTest, AProfileScopeIsTheRateAndTheLatencyAsPrinted) {
  EXPECT_EQ(ProfileScope(1e9, 0), "1e+09bit/s 0s");
  EXPECT_EQ(ProfileScope(0, 0.001), "0bit/s 0.001s");
}

TEST(FittingTest, ProbedLinksAreTheFitsParametersWithTheShapedLinksEfficiency) {
  ModelFitRecord fit;
  AddLinks(TwoProbes(), fit);
  EXPECT_EQ(fit.probe_ids, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(Parameter(fit, "alpha_s", "1e+08bit/s 0s"), 20e-6);
  EXPECT_EQ(Parameter(fit, "bandwidth_bytes_per_s", "1e+09bit/s 0s"), kGigabit / 8 * 0.96);
  EXPECT_NEAR(Parameter(fit, "link_efficiency"), 0.93, 1e-15);  // the median of 0.90 and 0.96
  for (const ModelParameterRow& p : fit.parameters) {
    EXPECT_EQ(p.source, "probe") << p.name;
    EXPECT_FALSE(p.ci_low.has_value()) << p.name;
  }
}

TEST(FittingTest, AProfileNeverProbedTakesItsRateAtTheMedianEfficiencyAndTheMedianAlpha) {
  ModelFitRecord fit;
  AddLinks(TwoProbes(), fit);
  const LinkParameters probed = LinkFor(fit, Ring(4, kGigabit));
  EXPECT_EQ(probed.alpha_s, 10e-6);
  EXPECT_EQ(probed.bytes_per_s, kGigabit / 8 * 0.96);
  ModelConfig far = Ring(4, 10e9);
  far.network.latency_s = 0.001;
  const LinkParameters extrapolated = LinkFor(fit, far);
  EXPECT_NEAR(extrapolated.alpha_s, 15e-6 + 0.001, 1e-15);
  EXPECT_NEAR(extrapolated.bytes_per_s, 10e9 / 8 * 0.93, 1e-3);
}

TEST(FittingTest, HeldAndFittedRowsSayWhereTheirValueComesFrom) {
  const ModelParameterRow fitted = Fitted(Coefficient{"slope", 2, 0.1, 1.8, 2.2}, "s/worker", "ring");
  EXPECT_EQ(fitted.source, "fitted");
  EXPECT_EQ(fitted.ci_low, 1.8);
  EXPECT_EQ(fitted.ci_high, 2.2);
  EXPECT_EQ(fitted.scope, "ring");
  const ModelParameterRow held = Held("wire_factor", 1.0, "1", "ps k=1");
  EXPECT_EQ(held.source, "fixed");
  EXPECT_FALSE(held.ci_low.has_value());
  EXPECT_EQ(HeldKey("wire_factor", "ps k=1"), "wire_factor ps k=1");
  EXPECT_EQ(HeldKey("combine_exponent", ""), "combine_exponent");
}

TEST(FittingTest, ANewFitCarriesTheModelsNameAndVersion) {
  const ModelFitRecord fit = NewFit(LinearModel());
  EXPECT_EQ(fit.model, "linear");
  EXPECT_EQ(fit.model_version, 1);
  EXPECT_GT(fit.created_unix_s, 0);
}

TEST(FittingTest, OnlyRunsWithAProbedLinkAreUsable) {
  ModelData data = TwoProbes();
  data.runs = {Observed(1, Ring(2, kGigabit)), Observed(2, Ring(2, 10e9)), Observed(3, Ring(4, kHundredMegabit))};
  const std::vector<const RunObservation*> runs = UsableRuns(data);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]->run_id, 1);
  EXPECT_EQ(runs[1]->run_id, 3);
}

// The measured stages: compute from the one-worker runs (a ps run and a
// two-worker run, which exchange, are left out), the quota from the capped
// runs their CPU binds; what is held stays as it is.
ParameterTable Measured() {
  return ParameterTable("toy", {{"cpu_overhead_s", "s", "", Identified::kMeasured},
                                {"cpu_per_sample_s", "s/sample", "", Identified::kMeasured},
                                {"quota_efficiency", "1", "", Identified::kMeasured}});
}

double Batch(const ModelConfig& config) { return config.batch_size; }

TEST(FittingTest, ComputeIsMeasuredOnTheRunsThatExchangeNothing) {
  std::vector<RunObservation> observed;
  for (int b : {10, 50, 100}) {
    ModelConfig config = Ring(1, kGigabit);
    config.batch_size = b;
    observed.push_back(Observed(b, config));
    observed.back().worker_cpu_s = 1e-4 + 6e-6 * b;
  }
  observed.push_back(Observed(2, Ring(2, kGigabit)));
  observed.back().worker_cpu_s = 1.0;
  ModelConfig ps = Ring(1, kGigabit);
  ps.architecture = Architecture::kPs;
  observed.push_back(Observed(3, ps));
  observed.back().worker_cpu_s = 1.0;
  std::vector<const RunObservation*> runs;
  for (const RunObservation& run : observed) runs.push_back(&run);

  const ParameterTable table = Measured();
  SettledRows settled(table.size());
  MeasureCompute(table, "cpu_per_sample_s", Batch, runs, settled);
  ASSERT_TRUE(settled[0] && settled[1]);
  EXPECT_NEAR(settled[0]->value, 1e-4, 1e-12);
  EXPECT_NEAR(settled[1]->value, 6e-6, 1e-14);
  EXPECT_EQ(settled[1]->unit, "s/sample");
  // Measured before any nonlinear fit: stored so, with its interval.
  EXPECT_EQ(settled[0]->source, "measured");
  EXPECT_EQ(settled[1]->source, "measured");
  EXPECT_LT(settled[1]->ci_low, settled[1]->ci_high);

  settled = table.Held({{"cpu_overhead_s", 2e-4}});
  MeasureCompute(table, "cpu_per_sample_s", Batch, runs, settled);
  EXPECT_EQ(settled[0]->source, "fixed");
  EXPECT_EQ(settled[0]->value, 2e-4);
  EXPECT_LT(settled[1]->value, 6e-6);
}

TEST(FittingTest, TheQuotaIsTheMedianEfficiencyOfTheRunsTheirCpuBinds) {
  std::vector<RunObservation> observed;
  for (double used : {0.09, 0.095, 0.1, 0.02}) {  // of a 0.1-core share; the last is not bound
    ModelConfig config = Ring(2, kGigabit);
    config.cpu_cores = 0.1;
    observed.push_back(Observed(static_cast<std::int64_t>(observed.size()), config));
    observed.back().worker_cpu_s = used;
    observed.back().iteration_s = 1;
  }
  std::vector<const RunObservation*> runs;
  for (const RunObservation& run : observed) runs.push_back(&run);
  const ParameterTable table = Measured();
  SettledRows settled(table.size());
  MeasureQuota(table, runs, settled);
  ASSERT_TRUE(settled[2]);
  EXPECT_NEAR(settled[2]->value, 0.95, 1e-12);
  EXPECT_EQ(settled[2]->name, "quota_efficiency");
  EXPECT_EQ(settled[2]->source, "measured");
  settled = table.Held({{"quota_efficiency", 0.8}});
  MeasureQuota(table, runs, settled);
  EXPECT_EQ(settled[2]->value, 0.8);
  EXPECT_EQ(settled[2]->source, "fixed");
}

TEST(FittingTest, APredictionHasItsEpochAndThroughputFromTheIteration) {
  ModelConfig config = Ring(4, kGigabit);
  Prediction p;
  p.compute_s = 0.001;
  p = FinishPrediction(config, 0.002, p);
  EXPECT_EQ(p.iterations, 150);  // 60000 / (100 x 4)
  EXPECT_DOUBLE_EQ(p.epoch_s, 0.3);
  EXPECT_DOUBLE_EQ(p.throughput_samples_per_s, 60000 / 0.3);
  EXPECT_EQ(p.compute_s, 0.001);
  EXPECT_EQ(GradientBytes(config), 4.0 * 104938);
}

// ---- error paths of fitting.cc follow -----------------------------------------

TEST(FittingTest, AMissingParameterNamesTheFitAndTheScope) {
  ModelFitRecord fit;
  fit.fit_id = 7;
  fit.model = "corrected";
  EXPECT_EQ(Failure([&] { Parameter(fit, "wire_factor", "ring"); }),
            "fit 7 of corrected has no parameter wire_factor for ring");
  EXPECT_EQ(Failure([&] { Parameter(fit, "combine_exponent"); }), "fit 7 of corrected has no parameter combine_exponent");
  EXPECT_EQ(FindParameter(fit, "combine_exponent", ""), nullptr);
}

TEST(FittingTest, AnUnshapedProfileWithoutItsProbeHasNoLink) {
  ModelFitRecord fit;
  AddLinks(TwoProbes(), fit);
  EXPECT_EQ(Failure([&] { LinkFor(fit, Ring(4, 0)); }),
            "no link probe for the profile 0bit/s 0s and none to extrapolate from: run "
            "`dmlbench cluster probe --profile ...` before fitting");
}

TEST(FittingTest, AValidationRunOrNoProbedRunIsRefused) {
  ModelData data = TwoProbes();
  data.runs = {Observed(1, Ring(2, kGigabit)), Observed(2, Ring(2, kGigabit), "validation")};
  EXPECT_EQ(Failure([&] { UsableRuns(data); }),
            "run 0123456789ab is a validation run: a model is fitted on calibration runs only");
  data.runs = {Observed(1, Ring(2, 10e9))};
  EXPECT_EQ(Failure([&] { UsableRuns(data); }),
            "no calibration run with a probed link: fit needs complete calibration runs and "
            "`dmlbench cluster probe` (or `inventory probe`) of their network profiles");
}

TEST(FittingTest, AModelFittedInClosedFormHoldsNothing) {
  EXPECT_EQ(Failure([] { RefuseFixed(LinearModel(), {{"intercept_s ring", 1}}); }),
            "linear holds no parameter at a value (--fix intercept_s ring): only corrected, corrected+overlap "
            "and counts do");
  RefuseFixed(LinearModel(), {});
}

TEST(FittingTest, LessThanOneIterationPerEpochIsRefused) {
  ModelConfig config = Ring(4, kGigabit);
  config.train_samples = 300;
  EXPECT_EQ(Failure([&] { FinishPrediction(config, 0.002, Prediction{}); }),
            "ring w=4 b=100: less than one iteration per epoch");
}

}  // namespace
}  // namespace dmlbench
