// Tests of the study-level test of orchestrator/compare (Compare's
// StudyTest) and of the gate over it, on synthetic studies shaped like the
// committed one (106 configurations of 6 runs, 2% run-to-run spread):
// properties, not one dataset's figures. No difference passes; every
// configuration 15% slower fails with a geometric mean of 1.15 although no
// configuration's runs can show it alone; a mixed change is named by the
// configurations' own tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "orchestrator/compare/compare.h"
#include "orchestrator/compare/gate.h"

namespace dmlbench {
namespace {

// `runs` runs of each of `slowdown.size()` configurations (ring, w = 1, 2,
// ...), one steady epoch each (as the committed study): configuration c
// takes 0.1 (1 + c/10) s times slowdown[c], each run spread by
// exp(N(0, run_cv)).
std::vector<RunSample> Side(std::mt19937_64& rng, int runs, const std::vector<double>& slowdown,
                            double run_cv = 0.02) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<RunSample> side;
  for (size_t c = 0; c < slowdown.size(); ++c) {
    for (int r = 0; r < runs; ++r) {
      RunSample sample;
      sample.params.workers = static_cast<int>(c) + 1;
      sample.params.seed = 1 + static_cast<std::uint64_t>(r);
      sample.params.repetition = r;
      sample.steady_epoch_s = {0.1 * (1 + 0.1 * static_cast<double>(c)) * slowdown[c] * std::exp(run_cv * normal(rng))};
      side.push_back(std::move(sample));
    }
  }
  return side;
}

// `side` with every epoch `factor` times as long: the committed study's
// copy made slower.
std::vector<RunSample> Scaled(std::vector<RunSample> side, double factor) {
  for (RunSample& run : side) {
    for (double& epoch : run.steady_epoch_s) epoch *= factor;
  }
  return side;
}

constexpr int kStudy = 106;  // configurations of the committed study

std::vector<std::string> LabelsOf(const Comparison& c) { return Labels(c); }

TEST(StudyTest, AStudyAgainstACopyOfItselfPasses) {
  std::mt19937_64 rng(7);
  const std::vector<RunSample> a = Side(rng, 6, std::vector<double>(kStudy, 1.0));
  const Comparison c = Compare(a, a);
  EXPECT_EQ(c.tests, kStudy + 1) << "the study counts among the tests";
  EXPECT_TRUE(c.study.enough_configurations);
  EXPECT_EQ(c.study.ratio, 1);
  EXPECT_EQ(c.study.signed_rank.n, 0) << "every log ratio is 0";
  EXPECT_EQ(c.study.p_holm, 1);
  EXPECT_EQ(c.study.change, Change::kNotSignificant);
  for (const ConfigurationComparison& row : c.both) EXPECT_EQ(row.test.change, Change::kTooFewRuns);
  const GateOutcome gate = DecideGate(c, LabelsOf(c), FailIf::kSlower, kDefaultFactor);
  EXPECT_EQ(gate.exit_status, 0);
  EXPECT_TRUE(gate.study_judged);
  EXPECT_EQ(gate.judged, 0);
  EXPECT_FALSE(gate.underpowered);
  EXPECT_EQ(gate.resolution->every, 1) << "a copy: any shift of every configuration would show";
}

TEST(StudyTest, EveryConfigurationFifteenPercentSlowerFailsTheStudyAlone) {
  std::mt19937_64 rng(7);
  const std::vector<RunSample> a = Side(rng, 6, std::vector<double>(kStudy, 1.0));
  const Comparison c = Compare(a, Scaled(a, 1.15));
  EXPECT_NEAR(c.study.ratio, 1.15, 1e-9);
  EXPECT_NEAR(c.study.ratio_ci_low, 1.15, 1e-9);
  EXPECT_NEAR(c.study.ratio_ci_high, 1.15, 1e-9);
  EXPECT_EQ(c.study.signed_rank.n, kStudy);
  EXPECT_LT(c.study.p_holm, 1e-10);
  EXPECT_EQ(c.study.change, Change::kSlower);
  const std::vector<std::string> labels = LabelsOf(c);
  const GateOutcome gate = DecideGate(c, labels, FailIf::kSlower, kDefaultFactor);
  EXPECT_EQ(gate.exit_status, 1);
  EXPECT_TRUE(gate.study_failed);
  EXPECT_TRUE(gate.failed.empty()) << "six runs a side cannot name a configuration among 107 tests";
  EXPECT_EQ(GateText(gate, &c),
            "gate --fail-if slower --factor 1.05: FAIL, the study as a whole is slower\n"
            "  B/A 1.150 [1.150, 1.150], the geometric mean over 106 configurations; signed-rank p (Holm) <0.0001\n"
            "  no configuration is slower on its own (0 of 106 had runs enough to be tested alone)\n");
  EXPECT_EQ(DecideGate(c, labels, FailIf::kFaster, kDefaultFactor).exit_status, 0);
  EXPECT_EQ(DecideGate(c, labels, FailIf::kDifferent, kDefaultFactor).exit_status, 1);
}

// With fresh noise on both sides instead of a scaled copy: over 200 seeds,
// every configuration 15% slower fails the gate in every seed with a
// geometric mean near 1.15, 8% slower in nearly every seed; no slowdown
// fails it in at most kGateAlpha of them, and 3% everywhere (below the
// factor) never.
TEST(StudyTest, ASlowdownOfEveryConfigurationIsCaughtOverManySeedsAndNoneIsNot) {
  constexpr int kSeeds = 200;
  int fifteen = 0, eight = 0, three = 0, none = 0;
  double lowest = 2, highest = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<RunSample> a = Side(rng, 6, std::vector<double>(kStudy, 1.0));
    auto fails = [&](double slowdown) {
      const Comparison c = Compare(a, Side(rng, 6, std::vector<double>(kStudy, slowdown)));
      if (slowdown == 1.15) lowest = std::min(lowest, c.study.ratio), highest = std::max(highest, c.study.ratio);
      return DecideGate(c, LabelsOf(c), FailIf::kSlower, kDefaultFactor, Underpowered::kWarn).exit_status == 1;
    };
    fifteen += fails(1.15);
    eight += fails(1.08);
    three += fails(1.03);
    none += fails(1.0);
  }
  std::printf("106 configurations, 6 runs a side, 2%% run spread, %d seeds: the gate failed with every configuration "
              "15%% slower %d (geometric means %.3f to %.3f), 8%% %d, 3%% %d, none %d\n",
              kSeeds, fifteen, lowest, highest, eight, three, none);
  EXPECT_EQ(fifteen, kSeeds);
  EXPECT_GT(lowest, 1.13);
  EXPECT_LT(highest, 1.17);
  EXPECT_GE(eight, 0.95 * kSeeds);
  EXPECT_EQ(three, 0);
  EXPECT_LE(none, kGateAlpha * kSeeds);
}

// Twelve configurations of ten runs: three 30% slower, three 30% faster,
// six unchanged. The geometric mean stays near 1, so the study's test does
// not fail the gate; the configurations' tests name the three.
TEST(StudyTest, AMixedChangeIsNamedByTheConfigurationsTests) {
  std::mt19937_64 rng(3);
  const std::vector<double> change = {1.3, 1.3, 1.3, 1 / 1.3, 1 / 1.3, 1 / 1.3, 1, 1, 1, 1, 1, 1};
  const Comparison c = Compare(Side(rng, 10, std::vector<double>(change.size(), 1.0)), Side(rng, 10, change));
  EXPECT_EQ(c.tests, 13);
  EXPECT_NEAR(c.study.ratio, 1, 0.03);
  EXPECT_NE(c.study.change, Change::kSlower);
  const std::vector<std::string> labels = LabelsOf(c);
  const GateOutcome gate = DecideGate(c, labels, FailIf::kSlower, kDefaultFactor);
  EXPECT_EQ(gate.exit_status, 1);
  EXPECT_FALSE(gate.study_failed);
  EXPECT_EQ(gate.failed, (std::vector<std::string>{"ring w=1 b=100", "ring w=2 b=100", "ring w=3 b=100"}));
  EXPECT_EQ(DecideGate(c, labels, FailIf::kFaster, kDefaultFactor).failed,
            (std::vector<std::string>{"ring w=4 b=100", "ring w=5 b=100", "ring w=6 b=100"}));
}

// Ratios all of one sign reach p < 0.05 / (K + 1) from K = 9 on: below,
// the study is not tested and does not count among the tests.
TEST(StudyTest, NineConfigurationsOrMoreAreTestedAsAStudy) {
  std::mt19937_64 rng(1);
  const Comparison eight = Compare(Side(rng, 3, std::vector<double>(8, 1.0)), Side(rng, 3, std::vector<double>(8, 1.2)));
  EXPECT_FALSE(eight.study.enough_configurations);
  EXPECT_EQ(eight.study.change, Change::kTooFewRuns);
  EXPECT_EQ(eight.tests, 8);
  EXPECT_NEAR(eight.study.ratio, 1.2, 0.03) << "the geometric mean is shown all the same";
  const Comparison nine = Compare(Side(rng, 3, std::vector<double>(9, 1.0)), Side(rng, 3, std::vector<double>(9, 1.2)));
  EXPECT_TRUE(nine.study.enough_configurations);
  EXPECT_EQ(nine.tests, 10);
  EXPECT_EQ(nine.study.change, Change::kSlower) << "nine of nine slower: p = 2/512 x 10";
  EXPECT_NEAR(nine.study.p_holm, 10 * 2.0 / 512, 1e-12);
}

}  // namespace
}  // namespace dmlbench
