// Tests of the judge (judge.h) on a small synthetic sweep in an SQLite file
// (AddLinearSweep): epoch times linear in the workers per scheme with a
// known noise, fitted by the linear baseline on the calibration runs,
// judged on validation configurations it never saw, beside the sweep's own
// split-half noise.
#include "orchestrator/model/judge.h"

#include <gtest/gtest.h>

#include <map>

#include "orchestrator/model/models.h"
#include "orchestrator/model/validation.h"
#include "tests/orchestrator/support/model_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;

class JudgeTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(JudgeTest, AModelIsFittedOnCalibrationAndJudgedOnValidationBesideTheSplitHalfNoise) {
  Store store(dir_ / "sweep.db");
  testing::AddLinearSweep(store);
  const ModelData data = LoadModelData(store, {});
  const std::vector<ModelJudgement> judgements = Judge(data, {&ModelNamed("linear")}, 0.9);
  ASSERT_EQ(judgements.size(), 1u);
  const ModelJudgement& linear = judgements[0];
  EXPECT_EQ(linear.model, "linear");
  EXPECT_EQ(linear.version, ModelNamed("linear").version());
  EXPECT_TRUE(linear.not_fitted.empty()) << linear.not_fitted;
  EXPECT_EQ(linear.calibration_configurations, 10);  // 5 worker counts of each scheme
  EXPECT_DOUBLE_EQ(linear.level, 0.9);
  EXPECT_TRUE(linear.skipped.empty());

  // The split-half noise is that of the validation configurations alone.
  std::map<std::string, double> noise;
  for (const ErrorSummary& s : Repeatability(data)) {
    if (s.split == "validation") noise[s.architecture] = s.median_abs;
  }
  ASSERT_EQ(linear.schemes.size(), 2u);
  for (const SchemeJudgement& scheme : linear.schemes) {
    SCOPED_TRACE(scheme.architecture);
    EXPECT_EQ(scheme.configurations, 4);
    // The line is the truth: the errors are the noise of the medians.
    EXPECT_LT(scheme.median_abs, 0.02);
    EXPECT_LE(scheme.median_abs, scheme.p95_abs);
    EXPECT_LE(scheme.p95_abs, scheme.max_abs);
    EXPECT_EQ(scheme.split_half_configurations, 4);
    ASSERT_TRUE(scheme.split_half_median.has_value());
    EXPECT_DOUBLE_EQ(*scheme.split_half_median, noise.at(scheme.architecture));
    ASSERT_TRUE(scheme.coverage.has_value());
    EXPECT_DOUBLE_EQ(*scheme.coverage, scheme.covered / 4.0);
    ASSERT_TRUE(scheme.median_half_width.has_value());
    EXPECT_GT(*scheme.median_half_width, 0);
    EXPECT_LT(*scheme.median_half_width, 0.05);
  }
  EXPECT_EQ(linear.schemes[0].architecture, "mpi");
  EXPECT_EQ(linear.schemes[1].architecture, "ring");
}

TEST_F(JudgeTest, AModelThatCannotBeFittedIsNamedWithWhyAndTheOthersAreJudged) {
  Store store(dir_ / "sweep.db");
  testing::AddLinearSweep(store);
  ModelData data = LoadModelData(store, {});
  data.links.clear();  // no probe: no calibration run is usable
  const std::vector<ModelJudgement> judgements = Judge(data, {&ModelNamed("linear"), &ModelNamed("paper2019")}, 0.9);
  ASSERT_EQ(judgements.size(), 2u);
  for (const ModelJudgement& judgement : judgements) {
    EXPECT_NE(judgement.not_fitted.find("no calibration run with a probed link"), std::string::npos)
        << judgement.not_fitted;
    EXPECT_TRUE(judgement.schemes.empty());
  }
}

TEST_F(JudgeTest, ASweepWithoutValidationRunsIsRefused) {
  Store store(dir_ / "sweep.db");
  testing::AddLinearSweep(store);
  ModelData data = LoadModelData(store, {});
  std::erase_if(data.runs, [](const RunObservation& run) { return run.split == "validation"; });
  try {
    Judge(data, {&ModelNamed("linear")}, 0.9);
    FAIL() << "judged without validation runs";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "no complete validation run: nothing to judge a model on");
  }
}

}  // namespace
}  // namespace dmlbench
