// Tests of orchestrator/compare: the verdict from two median intervals, and
// the grouping of runs into configurations, against samples whose medians
// and order-statistic intervals are worked out by hand.
#include "orchestrator/compare/compare.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

MedianInterval Interval(double low, double high, double coverage = 0.98) {
  MedianInterval m;
  m.low = low;
  m.high = high;
  m.median = (low + high) / 2;
  m.coverage = coverage;
  m.n = 10;
  return m;
}

TEST(JudgeTest, OnlyIntervalsThatDoNotOverlapMakeADifference) {
  EXPECT_EQ(Judge(Interval(1, 2), Interval(2.5, 3)), Verdict::kSlower);
  EXPECT_EQ(Judge(Interval(2.5, 3), Interval(1, 2)), Verdict::kFaster);
  EXPECT_EQ(Judge(Interval(1, 2), Interval(1.5, 3)), Verdict::kNoDifference);
  EXPECT_EQ(Judge(Interval(1, 2), Interval(0.5, 1.5)), Verdict::kNoDifference);
  EXPECT_EQ(Judge(Interval(1, 2), Interval(2, 3)), Verdict::kNoDifference) << "touching intervals overlap";
  EXPECT_EQ(Judge(Interval(1, 1), Interval(1, 1)), Verdict::kNoDifference);
}

TEST(JudgeTest, AnIntervalBelowNinetyFivePercentDecidesNothing) {
  EXPECT_EQ(Judge(Interval(1, 2, 0.9375), Interval(5, 6)), Verdict::kTooFewEpochs);
  EXPECT_EQ(Judge(Interval(1, 2), Interval(5, 6, 0.9375)), Verdict::kTooFewEpochs);
  EXPECT_EQ(Text(Verdict::kTooFewEpochs), "too few epochs");
  EXPECT_EQ(Text(Verdict::kNoDifference), "no significant difference");
}

RunSample Sample(Architecture architecture, int workers, std::uint64_t seed, int repetition,
                 std::vector<double> epochs) {
  RunSample sample;
  sample.params.architecture = architecture;
  sample.params.workers = workers;
  sample.params.seed = seed;
  sample.params.repetition = repetition;
  sample.steady_epoch_s = std::move(epochs);
  return sample;
}

TEST(CompareTest, PoolsTheRepetitionsOfAConfigurationAndComparesWhatBothSidesHave) {
  const std::vector<RunSample> a = {
      Sample(Architecture::kRing, 2, 1, 0, {1.0, 1.1, 1.2}),
      Sample(Architecture::kRing, 2, 2, 1, {1.3, 1.4, 1.5}),
      Sample(Architecture::kMpi, 1, 1, 0, {5, 5, 5, 5, 5, 5}),
      Sample(Architecture::kP2p, 1, 1, 0, {7}),
  };
  const std::vector<RunSample> b = {
      Sample(Architecture::kRing, 2, 9, 3, {2.0, 2.2, 2.4, 2.6, 2.8, 3.0}),
      Sample(Architecture::kMpi, 1, 1, 0, {5, 5, 5, 5, 5, 5}),
      Sample(Architecture::kPs, 1, 1, 0, {1}),
      Sample(Architecture::kRing, 4, 1, 0, {}),  // no steady epoch: left out
  };
  const Comparison c = Compare(a, b);
  ASSERT_EQ(c.both.size(), 2u);
  // By architecture name: mpi before ring.
  EXPECT_EQ(c.both[0].params.architecture, Architecture::kMpi);
  EXPECT_EQ(c.both[0].ratio, 1);
  EXPECT_EQ(c.both[0].verdict, Verdict::kNoDifference);

  const ConfigurationComparison& ring = c.both[1];
  EXPECT_EQ(ring.configuration, ConfigurationJson(a[0].params));
  EXPECT_EQ(ring.a.runs, 2);
  EXPECT_EQ(ring.a.epoch_s.n, 6);
  EXPECT_DOUBLE_EQ(ring.a.epoch_s.median, 1.25);
  // n = 6 at 95%: the extremes, 96.9%.
  EXPECT_DOUBLE_EQ(ring.a.epoch_s.low, 1.0);
  EXPECT_DOUBLE_EQ(ring.a.epoch_s.high, 1.5);
  EXPECT_DOUBLE_EQ(ring.b.epoch_s.median, 2.5);
  EXPECT_DOUBLE_EQ(ring.b.epoch_s.low, 2.0);
  EXPECT_DOUBLE_EQ(ring.ratio, 2.0);
  EXPECT_EQ(ring.verdict, Verdict::kSlower);

  ASSERT_EQ(c.only_a.size(), 1u);
  EXPECT_EQ(c.only_a[0].architecture, Architecture::kP2p);
  ASSERT_EQ(c.only_b.size(), 1u);
  EXPECT_EQ(c.only_b[0].architecture, Architecture::kPs);
}

TEST(CompareTest, ASideAgainstItselfShowsNoDifferenceAnywhere) {
  std::vector<RunSample> runs;
  for (int workers = 1; workers <= 4; ++workers) {
    for (int rep = 0; rep < 3; ++rep) {
      runs.push_back(Sample(Architecture::kRing, workers, 1 + rep, rep,
                            {0.1 * workers + 0.01 * rep, 0.1 * workers - 0.01 * rep, 0.1 * workers}));
    }
  }
  const Comparison c = Compare(runs, runs);
  ASSERT_EQ(c.both.size(), 4u);
  for (const ConfigurationComparison& row : c.both) {
    EXPECT_EQ(row.verdict, Verdict::kNoDifference) << row.configuration;
    EXPECT_EQ(row.ratio, 1);
  }
  EXPECT_TRUE(c.only_a.empty());
  EXPECT_TRUE(c.only_b.empty());
}

TEST(CompareTest, FewEpochsGiveNoVerdictAndOneEpochRunsAreFlagged) {
  RunSample a = Sample(Architecture::kRing, 1, 1, 0, {1, 1, 1});
  RunSample b = Sample(Architecture::kRing, 1, 1, 0, {9});
  b.warmup_included = true;
  const Comparison c = Compare({a}, {b});
  ASSERT_EQ(c.both.size(), 1u);
  EXPECT_EQ(c.both[0].verdict, Verdict::kTooFewEpochs);
  EXPECT_FALSE(c.both[0].a.warmup_included);
  EXPECT_TRUE(c.both[0].b.warmup_included);
}

}  // namespace
}  // namespace dmlbench
