// Schedule: which job starts next, with which runs, on which hosts. Plans
// built by hand; no database, no host. Jobs of one run and of several go
// through the same FindWork/Finished.
#include "orchestrator/plan/schedule.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace dmlbench {
namespace {

PlanItem Item(int workers, int epochs = 2, int repetition = 0, int batch = 100) {
  PlanItem item;
  item.run.params.architecture = Architecture::kRing;
  item.run.params.workers = workers;
  item.run.params.epochs = epochs;
  item.run.params.repetition = repetition;
  item.run.params.batch_size = batch;
  return item;
}

std::vector<std::size_t> InOrder(std::size_t n) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  return order;
}

std::vector<LaunchHost> Hosts(int n, int slots = 1) {
  std::vector<LaunchHost> hosts;
  for (int i = 1; i <= n; ++i) hosts.push_back({"h" + std::to_string(i), slots});
  return hosts;
}

const auto kAll = [](std::size_t) { return true; };

TEST(ScheduleTest, WithoutHostsOneJobAtATimeInTheSweepsOrder) {
  const std::vector<PlanItem> plan = {Item(1), Item(2), Item(1, 2, 1)};
  Schedule schedule(plan, {2, 0, 1}, 1, kAll, JobCapacity{{}, 8});
  std::optional<ScheduledJob> job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({2}));
  EXPECT_TRUE(job->hosts.empty());
  EXPECT_FALSE(schedule.FindWork()) << "a second job while one is in flight, on hosts the launcher places";
  EXPECT_EQ(schedule.in_flight(), 1);
  schedule.Finished(*job, {});
  job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({0}));
  schedule.Finished(*job, {});
  job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({1}));
  schedule.Finished(*job, {});
  EXPECT_FALSE(schedule.FindWork());
  EXPECT_TRUE(schedule.Exhausted());
}

TEST(ScheduleTest, RunsShareAJobOnlyWithTheSameShapeAndNeverWithTheirOwnRepetitions) {
  const std::vector<PlanItem> plan = {Item(2, 2, 0, 100), Item(2, 2, 1, 100), Item(1, 2, 0, 50),
                                      Item(2, 2, 0, 200), Item(2, 1, 0, 300), Item(2, 2, 0, 400)};
  Schedule schedule(plan, InOrder(plan.size()), 3, kAll, JobCapacity{});
  std::optional<ScheduledJob> job = schedule.FindWork();
  ASSERT_TRUE(job);
  // Not its own repetition (1), not one of other ranks (2), not a one-epoch run (4).
  EXPECT_EQ(job->runs, std::vector<std::size_t>({0, 3, 5}));
  EXPECT_EQ(job->ranks, 2);
  schedule.Finished(*job, {});
  std::vector<std::vector<std::size_t>> rest;
  while (std::optional<ScheduledJob> next = schedule.FindWork()) {
    rest.push_back(next->runs);
    schedule.Finished(*next, {});
  }
  EXPECT_EQ(rest, (std::vector<std::vector<std::size_t>>{{1}, {2}, {4}}));
}

TEST(ScheduleTest, RunsToTryAgainStartNextEachAlone) {
  const std::vector<PlanItem> plan = {Item(2, 2, 0, 100), Item(2, 2, 0, 200), Item(2, 2, 0, 300), Item(1)};
  Schedule schedule(plan, InOrder(plan.size()), 3, kAll, JobCapacity{});
  const std::optional<ScheduledJob> job = schedule.FindWork();
  ASSERT_TRUE(job);
  ASSERT_EQ(job->runs.size(), 3u);
  // The job failed in its second run, which has tries left; the third was not reached.
  schedule.Finished(*job, {1, 2});
  std::vector<std::vector<std::size_t>> next;
  while (std::optional<ScheduledJob> found = schedule.FindWork()) {
    next.push_back(found->runs);
    schedule.Finished(*found, {});
  }
  EXPECT_EQ(next, (std::vector<std::vector<std::size_t>>{{1}, {2}, {3}}));
}

TEST(ScheduleTest, JobsInFlightHoldDisjointHostsUpToTheBound) {
  const std::vector<PlanItem> plan = {Item(2), Item(1), Item(3), Item(1, 2, 1), Item(1, 2, 2)};
  Schedule schedule(plan, InOrder(plan.size()), 1, kAll, JobCapacity{Hosts(4), 3});
  std::vector<ScheduledJob> started;
  while (std::optional<ScheduledJob> job = schedule.FindWork()) started.push_back(*job);
  // 2 ranks on h1,h2; 1 on h3; the 3-rank run waits for hosts and the next
  // 1-rank run takes h4; then the bound of 3 jobs stops it.
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(started[0].hosts, std::vector<std::string>({"h1", "h2"}));
  EXPECT_EQ(started[1].hosts, std::vector<std::string>({"h3"}));
  EXPECT_EQ(started[2].runs, std::vector<std::size_t>({3}));
  EXPECT_EQ(started[2].hosts, std::vector<std::string>({"h4"}));
  std::set<std::string> held;
  for (const ScheduledJob& job : started) {
    for (const std::string& host : job.hosts) EXPECT_TRUE(held.insert(host).second) << host << " given twice";
  }
  EXPECT_EQ(schedule.RemainingRanks(), 3);
  schedule.Finished(started[0], {});
  // The 3-rank run comes first in order but h1, h2 hold 2 ranks: the last 1-rank run goes.
  std::optional<ScheduledJob> job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({4}));
  EXPECT_EQ(job->hosts, std::vector<std::string>({"h1"}));
  schedule.Finished(started[1], {});
  schedule.Finished(started[2], {});
  schedule.Finished(*job, {});
  job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({2}));
  EXPECT_EQ(job->hosts, std::vector<std::string>({"h1", "h2", "h3"}));
}

TEST(ScheduleTest, ALostHostIsGivenToNoLaterJob) {
  const std::vector<PlanItem> plan = {Item(1), Item(1, 2, 1), Item(2)};
  Schedule schedule(plan, InOrder(plan.size()), 1, kAll, JobCapacity{Hosts(2), 2});
  const std::optional<ScheduledJob> first = schedule.FindWork();
  const std::optional<ScheduledJob> second = schedule.FindWork();
  ASSERT_TRUE(first && second);
  schedule.Finished(*first, {0}, {"h1"});
  schedule.Finished(*second, {});
  const std::optional<ScheduledJob> again = schedule.FindWork();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->runs, std::vector<std::size_t>({0}));
  EXPECT_EQ(again->hosts, std::vector<std::string>({"h2"}));
  schedule.Finished(*again, {});
  // Two ranks need both hosts, one of them lost: the run can never start.
  EXPECT_FALSE(schedule.FindWork());
  const auto unplaceable = schedule.Unplaceable();
  ASSERT_TRUE(unplaceable);
  EXPECT_EQ(unplaceable->first, 2u);
  EXPECT_EQ(unplaceable->second, "needs 2 ranks but the hosts that are up have 1 slots (down: h1)");
}

TEST(ScheduleTest, RunsNoLongerRunnableAreSkipped) {
  const std::vector<PlanItem> plan = {Item(1), Item(2), Item(3)};
  std::vector<bool> runnable = {true, false, true};
  Schedule schedule(plan, InOrder(plan.size()), 1, [&](std::size_t i) { return runnable[i]; }, JobCapacity{});
  std::optional<ScheduledJob> job = schedule.FindWork();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->runs, std::vector<std::size_t>({0}));
  EXPECT_EQ(schedule.RemainingRanks(), 3);
  runnable[2] = false;
  schedule.Finished(*job, {});
  EXPECT_FALSE(schedule.FindWork());
  EXPECT_TRUE(schedule.Exhausted());
  EXPECT_EQ(schedule.RemainingRanks(), 0);
}

}  // namespace
}  // namespace dmlbench
