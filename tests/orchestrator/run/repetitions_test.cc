// Which points get one more repetition, and which reached the most with an
// interval still wide (orchestrator/run/repetitions.h).
#include "orchestrator/run/repetitions.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

// A point's repetitions 0..n-1 (seed 10 + r), complete unless `states` says
// otherwise, with run ids from `first_id`.
std::vector<PlanItem> Point(Architecture architecture, int n, std::int64_t first_id,
                            std::vector<RunState> states = {}) {
  std::vector<PlanItem> items;
  for (int r = 0; r < n; ++r) {
    PlanItem item;
    item.run.params.architecture = architecture;
    item.run.params.workers = 2;
    item.run.params.repetition = r;
    item.run.params.seed = 10 + static_cast<std::uint64_t>(r);
    item.run.split = "validation";
    item.run_id = first_id + r;
    item.state = r < static_cast<int>(states.size()) ? states[static_cast<std::size_t>(r)] : RunState::kComplete;
    items.push_back(item);
  }
  return items;
}

ExecutionOptions UpTo(int most, double within) {
  ExecutionOptions execution;
  execution.max_repetitions = most;
  execution.interval_within = within;
  return execution;
}

TEST(RepetitionsTest, AnIntervalIsCloseEnoughOnlyFromSixRunsAndWithinTheFraction) {
  EXPECT_FALSE(CloseEnough({1, 1, 1, 1, 1}, 0.05));  // 5 runs reach 93.75%, not 95%
  EXPECT_TRUE(CloseEnough({1, 1, 1, 1, 1, 1}, 0.05));
  // Six runs: the interval is [min, max] around a median of 1.
  EXPECT_TRUE(CloseEnough({0.96, 1, 1, 1, 1, 1.04}, 0.05));
  EXPECT_FALSE(CloseEnough({0.96, 1, 1, 1, 1, 1.06}, 0.05));
  // Nine runs: the interval drops the extremes.
  EXPECT_TRUE(CloseEnough({0.5, 1, 1, 1, 1, 1, 1, 1, 2}, 0.05));
  EXPECT_FALSE(CloseEnough({}, 0.05));
}

TEST(RepetitionsTest, ALoosePointGetsItsNextRepetitionWithItsSeedAndATightOneNone) {
  std::vector<PlanItem> plan = Point(Architecture::kRing, 6, 1);
  const std::vector<PlanItem> mpi = Point(Architecture::kMpi, 6, 101);
  plan.insert(plan.end(), mpi.begin(), mpi.end());
  std::map<std::int64_t, double> epoch_s;
  for (int r = 0; r < 6; ++r) {
    epoch_s[1 + r] = 0.5;                    // ring: every run alike
    epoch_s[101 + r] = r % 2 ? 0.6 : 0.5;    // mpi: 0.55 [0.5, 0.6], 9% away
  }
  const RepetitionRound round = NextRepetitions(plan, epoch_s, UpTo(8, 0.05));
  ASSERT_EQ(round.more.size(), 1u);
  EXPECT_EQ(round.more[0].params.architecture, Architecture::kMpi);
  EXPECT_EQ(round.more[0].params.repetition, 6);
  EXPECT_EQ(round.more[0].params.seed, 16u);
  EXPECT_EQ(round.more[0].split, "validation");
  EXPECT_TRUE(round.still_loose.empty());
  // A wider tolerance takes mpi too.
  EXPECT_TRUE(NextRepetitions(plan, epoch_s, UpTo(8, 0.10)).more.empty());
  // Without max_repetitions, never.
  EXPECT_TRUE(NextRepetitions(plan, epoch_s, ExecutionOptions{}).more.empty());
}

TEST(RepetitionsTest, APointAtTheMostIsReportedLooseAndNotRepeated) {
  const std::vector<PlanItem> plan = Point(Architecture::kMpi, 8, 1);
  std::map<std::int64_t, double> epoch_s;
  for (int r = 0; r < 8; ++r) epoch_s[1 + r] = r % 2 ? 0.6 : 0.5;
  const RepetitionRound round = NextRepetitions(plan, epoch_s, UpTo(8, 0.05));
  EXPECT_TRUE(round.more.empty());
  ASSERT_EQ(round.still_loose.size(), 1u);
  EXPECT_EQ(round.still_loose[0], "mpi w=2 b=100: 0.55 s [0.5, 0.6] over 8 runs");
}

TEST(RepetitionsTest, APointWithARunNotCompleteOrNotMeasuredWaits) {
  for (const RunState state : {RunState::kPending, RunState::kFailed, RunState::kInterrupted}) {
    const std::vector<PlanItem> plan = Point(Architecture::kMpi, 3, 1, {RunState::kComplete, state});
    const std::map<std::int64_t, double> epoch_s = {{1, 0.5}, {2, 0.6}, {3, 0.5}};
    EXPECT_TRUE(NextRepetitions(plan, epoch_s, UpTo(8, 0.05)).more.empty()) << Text(state);
  }
  const std::vector<PlanItem> plan = Point(Architecture::kMpi, 3, 1);
  EXPECT_TRUE(NextRepetitions(plan, {{1, 0.5}, {3, 0.5}}, UpTo(8, 0.05)).more.empty());
  // Measured: 3 runs cannot reach 95%, so one more.
  EXPECT_EQ(NextRepetitions(plan, {{1, 0.5}, {2, 0.5}, {3, 0.5}}, UpTo(8, 0.05)).more.size(), 1u);
}

}  // namespace
}  // namespace dmlbench
