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

// |B/A - 1| per architecture, worked out by hand: ps with 1 and 2 servers
// apart, the 95th percentile interpolated between order statistics.
TEST(CompareTest, TheShiftOfEachArchitectureSummarisesItsConfigurations) {
  std::vector<RunSample> a, b;
  const std::vector<double> ring_b = {1.1, 0.8, 1.0, 1.04, 1.02};  // |B/A - 1| 10, 20, 0, 4, 2 %
  for (int w = 1; w <= 5; ++w) {
    a.push_back(Sample(Architecture::kRing, w, 1, 0, {1.0}));
    b.push_back(Sample(Architecture::kRing, w, 1, 0, {ring_b[w - 1]}));
  }
  for (int k : {1, 2}) {
    RunSample ps_a = Sample(Architecture::kPs, 2, 1, 0, {2.0});
    ps_a.params.servers = k;
    RunSample ps_b = ps_a;
    ps_b.steady_epoch_s = {k == 1 ? 2.5 : 1.5};  // +25 %, -25 %
    a.push_back(ps_a);
    b.push_back(ps_b);
  }
  const std::vector<Shift> shifts = ShiftByArchitecture(Compare(a, b));
  ASSERT_EQ(shifts.size(), 3u);
  EXPECT_EQ(shifts[0].architecture, "ps k=1");
  EXPECT_EQ(shifts[1].architecture, "ps k=2");
  EXPECT_EQ(shifts[1].configurations, 1);
  EXPECT_NEAR(shifts[1].max_abs, 0.25, 1e-12);
  const Shift& ring = shifts[2];
  EXPECT_EQ(ring.architecture, "ring");
  EXPECT_EQ(ring.configurations, 5);
  EXPECT_NEAR(ring.median_abs, 0.04, 1e-12);
  EXPECT_NEAR(ring.p95_abs, 0.10 + 0.8 * (0.20 - 0.10), 1e-12);  // position 0.95 x 4 = 3.8
  EXPECT_NEAR(ring.max_abs, 0.20, 1e-12);
  EXPECT_TRUE(ShiftByArchitecture(Compare(a, a))[2].max_abs == 0);
}

}  // namespace
}  // namespace dmlbench
