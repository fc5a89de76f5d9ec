// Tests of orchestrator/compare/gate: what the gate fails on, its exit
// status, the smallest change it could have seen (and the status 2 of a
// gate that could not have seen the factor), the words it prints, and the
// words --fail-if takes. Small run sets worked out by hand.
#include "orchestrator/compare/gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dmlbench {
namespace {

// One ring configuration of `workers` workers: a run per value, one steady
// epoch each.
std::vector<RunSample> Runs(int workers, const std::vector<double>& epoch_s) {
  std::vector<RunSample> runs;
  for (size_t r = 0; r < epoch_s.size(); ++r) {
    RunSample run;
    run.params.workers = workers;
    run.params.repetition = static_cast<int>(r);
    run.params.seed = 1 + r;
    run.steady_epoch_s = {epoch_s[r]};
    runs.push_back(run);
  }
  return runs;
}

TEST(FailIfTest, OnlyTheThreeWordsAreTaken) {
  EXPECT_EQ(ParseFailIf("slower"), FailIf::kSlower);
  EXPECT_EQ(ParseFailIf("faster"), FailIf::kFaster);
  EXPECT_EQ(ParseFailIf("different"), FailIf::kDifferent);
  EXPECT_EQ(ParseFailIf("2"), std::nullopt) << "the enum's value is no word";
  EXPECT_EQ(ParseFailIf("0"), std::nullopt);
  EXPECT_EQ(ParseFailIf("Slower"), std::nullopt);
  EXPECT_EQ(Text(FailIf::kDifferent), "different");
  EXPECT_TRUE(Fails(Change::kSlower, FailIf::kSlower));
  EXPECT_FALSE(Fails(Change::kFaster, FailIf::kSlower));
  EXPECT_TRUE(Fails(Change::kFaster, FailIf::kDifferent));
  EXPECT_FALSE(Fails(Change::kWithinFactor, FailIf::kDifferent));
  EXPECT_FALSE(Fails(Change::kTooFewRuns, FailIf::kDifferent));
}

// Eight runs a side 2% apart at most and B 20% slower: the gate fails and
// names it; B against itself passes, and could have seen a slowdown below
// the factor: the Hodges-Lehmann ratio, 1, over the 14th smallest of the 64
// ratios b/a, the low end at 95% with one test (P(U <= 13) = 0.0249 <=
// 2.5% < P(U <= 14)).
TEST(GateTest, AWellMeasuredConfigurationFailsOrPassesAndSaysWhatItCouldSee) {
  const std::vector<double> base = {1.00, 1.01, 0.99, 1.02, 1.00, 0.98, 1.01, 1.00};
  std::vector<double> slow;
  for (double x : base) slow.push_back(1.2 * x);
  const Comparison c = Compare(Runs(1, base), Runs(1, slow));
  const GateOutcome fail = DecideGate(c, Labels(c), FailIf::kSlower, kDefaultFactor);
  EXPECT_EQ(fail.exit_status, 1);
  EXPECT_EQ(fail.failed, std::vector<std::string>{"ring w=1 b=100"});
  EXPECT_EQ(GateText(fail, &c), "gate --fail-if slower --factor 1.05: FAIL, 1 of 1 configurations slower:\n"
                                "  ring w=1 b=100\n");
  const Comparison same = Compare(Runs(1, base), Runs(1, base));
  const GateOutcome pass = DecideGate(same, Labels(same), FailIf::kSlower, kDefaultFactor);
  EXPECT_EQ(pass.exit_status, 0);
  EXPECT_FALSE(pass.underpowered);
  EXPECT_EQ(GateText(pass, &same), "gate --fail-if slower --factor 1.05: pass, no configuration slower (1 of 1 tested)\n");
  const double resolution = pass.resolution->every;
  std::vector<double> ratios;
  for (double x : base) {
    for (double y : base) ratios.push_back(y / x);
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(resolution, 1 / ratios[13]);
  EXPECT_GT(resolution, 1.0);
  EXPECT_LT(resolution, kDefaultFactor);
  EXPECT_EQ(same.both[0].test.detectable_slower, resolution);
  EXPECT_EQ(ResolutionText(pass), "resolution: the smallest change it could have seen at p < 0.05:\n"
                                  "  every configuration slower by " + Format(resolution, "%.3f") +
                                      " (the U test of ring w=1 b=100)\n"
                                  "  one configuration alone: " + Format(resolution, "%.3f") + " (ring w=1 b=100)\n");
}

// The case: four runs a side, spread so wide that the ratio's
// interval is [0.455, 1.314]. The U test is not significant, and could
// not have been for anything below the Hodges-Lehmann ratio over the
// interval's low end: the gate says so with status 2, or passes with a
// warning under Underpowered::kWarn.
TEST(GateTest, AGateThatCouldNotHaveSeenTheFactorIsNoPass) {
  const std::vector<double> a = {1.10, 1.45, 0.80, 1.00}, b = {0.66, 1.05, 0.75, 1.0512};
  const Comparison c = Compare(Runs(2, a), Runs(2, b));
  const RunTest& test = c.both[0].test;
  EXPECT_NEAR(test.ratio_ci.low, 0.455, 5e-4);
  EXPECT_NEAR(test.ratio_ci.high, 1.314, 5e-4);
  EXPECT_EQ(test.change, Change::kNotSignificant);
  // One test: the 95% interval is the widest, every b/a between min and
  // max; its estimate the median of the 16 ratios.
  EXPECT_NEAR(test.detectable_slower, test.ratio_ci.estimate / test.ratio_ci.low, 1e-12);
  const GateOutcome gate = DecideGate(c, Labels(c), FailIf::kSlower, kDefaultFactor);
  EXPECT_TRUE(gate.underpowered);
  EXPECT_EQ(gate.exit_status, 2);
  EXPECT_EQ(UnderpoweredMessage(gate, true),
            "--fail-if slower: the gate could not have seen every configuration slower by --factor 1.05: the "
            "smallest change it could see at p < 0.05 is " + Format(test.detectable_slower, "%.3f") +
            " (the U test of ring w=2 b=100); add runs, raise --factor, or pass --underpowered warn");
  EXPECT_EQ(GateText(gate, &c), "gate --fail-if slower --factor 1.05: no verdict, no configuration slower (1 of 1 "
                                "tested), but it could not have seen 1.05\n");
  const GateOutcome warned = DecideGate(c, Labels(c), FailIf::kSlower, kDefaultFactor, Underpowered::kWarn);
  EXPECT_EQ(warned.exit_status, 0);
  EXPECT_EQ(GateText(warned, &c), "gate --fail-if slower --factor 1.05: pass, no configuration slower (1 of 1 "
                                  "tested), but it could not have seen 1.05\n");
  EXPECT_EQ(DecideGate(c, Labels(c), FailIf::kSlower, 2.5).exit_status, 0) << "a factor it could see";
  // A failure is a failure, however coarse the gate.
  std::vector<double> slow;
  for (double x : a) slow.push_back(3 * x);
  const Comparison failing = Compare(Runs(2, a), Runs(2, slow));
  EXPECT_EQ(DecideGate(failing, Labels(failing), FailIf::kSlower, kDefaultFactor).exit_status, 1);
}

// ---- error paths of gate.cc follow -------------------------------------------

TEST(GateTest, AGateThatCanTestNothingIsAnError) {
  const Comparison c = Compare(Runs(1, {1, 1.1, 1.2}), Runs(1, {2, 2.1, 2.2}));
  try {
    DecideGate(c, Labels(c), FailIf::kSlower, kDefaultFactor);
    FAIL() << "judged nothing";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--fail-if slower: no configuration has runs enough to be tested (1 configuration "
                           "compared); the gate can neither pass nor fail");
  }
  try {
    DecideGate({"ring w=1 b=100"}, {Change::kTooFewRuns}, FailIf::kFaster, kDefaultFactor);
    FAIL() << "judged nothing";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--fail-if faster: no configuration has runs enough to be tested (1 configuration "
                           "compared); the gate can neither pass nor fail");
  }
}

TEST(GateTest, AHistoryFailsOnTheDriftsItJudged) {
  const GateOutcome gate =
      DecideGate({"a", "b", "c"}, {Change::kSlower, Change::kTooFewRuns, Change::kNotSignificant}, FailIf::kSlower,
                 kDefaultFactor);
  EXPECT_EQ(gate.judged, 2);
  EXPECT_EQ(gate.failed, std::vector<std::string>{"a"});
  EXPECT_EQ(gate.exit_status, 1);
  EXPECT_FALSE(gate.resolution.has_value());
  EXPECT_EQ(ResolutionText(gate), "");
}

}  // namespace
}  // namespace dmlbench
