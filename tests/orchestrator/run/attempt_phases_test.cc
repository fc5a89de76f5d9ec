// Attempt phases from the orchestrator's clock and the trainer's events: the
// cut of an attempt that ran to its end, with and without the trainer's own
// account, of one that never started, and a sweep's efficiency and largest
// overheads.
#include "orchestrator/run/attempt_phases.h"

#include <gtest/gtest.h>

#include <map>

namespace dmlbench {
namespace {

std::map<std::string, double> ByName(const std::vector<PhaseTime>& phases) {
  std::map<std::string, double> by_name;
  for (const PhaseTime& phase : phases) by_name[phase.phase] = phase.seconds;
  return by_name;
}

double Sum(const std::vector<PhaseTime>& phases) {
  double sum = 0;
  for (const PhaseTime& phase : phases) sum += phase.seconds;
  return sum;
}

// Sweep start at 100 s; hosts prepared in 2 s; launch at 103, links shaped
// for 0.25 s; run_start at 104.5, run_end at 108, mpirun back at 108.5,
// stored at 109.
AttemptClock Clock() { return {100, 2, 103, 0.25, 108.5, 109}; }

EventTimes TwoEpochs() {
  EventTimes events;
  events.run_start_at_s = 104.5;
  events.run_end_at_s = 108;
  events.first_epoch_s = 1;
  events.later_epochs_s = 1.5;
  events.evaluation_s = 0.25;
  return events;
}

TEST(AttemptPhases, AnAttemptThatRanIsCutInOrderAndAddsUpToItsTime) {
  EventTimes events = TwoEpochs();
  events.trainer = TrainerPhases{0.25, 0.5, 0.125, 3, 0.375};
  const std::vector<PhaseTime> phases = AttemptPhases(Clock(), events);
  std::vector<std::string> names;
  for (const PhaseTime& phase : phases) names.push_back(phase.phase);
  EXPECT_EQ(names, (std::vector<std::string>{"host_preparation", "plan_to_launch", "link_shaping", "launch",
                                             "mpi_init", "dataset_load", "setup", "warmup_epochs", "steady_epochs",
                                             "evaluation", "between_epochs", "teardown", "mpirun_exit", "ingest"}));
  const std::map<std::string, double> by = ByName(phases);
  EXPECT_DOUBLE_EQ(by.at("plan_to_launch"), 1);
  EXPECT_DOUBLE_EQ(by.at("launch"), 1.5 - 0.25 - 0.875);
  EXPECT_DOUBLE_EQ(by.at("warmup_epochs"), 1);
  EXPECT_DOUBLE_EQ(by.at("steady_epochs"), 1.5);
  EXPECT_DOUBLE_EQ(by.at("between_epochs"), 3 - 2.5 - 0.25);
  EXPECT_DOUBLE_EQ(by.at("mpirun_exit"), 0.5);
  EXPECT_DOUBLE_EQ(by.at("ingest"), 0.5);
  // The trainer's clock said its epochs and teardown took 3.375 s where the
  // orchestrator saw 3.5 s between run_start and run_end: the sum is off by
  // as much, and no more.
  EXPECT_NEAR(Sum(phases), 9 - 0.125, 1e-12);
}

TEST(AttemptPhases, WithoutTheTrainersAccountItsSpanIsBetweenItsEvents) {
  AttemptClock clock = Clock();
  clock.host_preparation_s = 0;
  clock.link_shaping_s = 0;
  const std::map<std::string, double> by = ByName(AttemptPhases(clock, TwoEpochs()));
  EXPECT_EQ(by.count("host_preparation"), 0u);
  EXPECT_EQ(by.count("link_shaping"), 0u);
  EXPECT_EQ(by.count("mpi_init"), 0u);
  EXPECT_EQ(by.count("teardown"), 0u);
  EXPECT_DOUBLE_EQ(by.at("plan_to_launch"), 3);
  EXPECT_DOUBLE_EQ(by.at("launch"), 1.5);
  EXPECT_DOUBLE_EQ(by.at("between_epochs"), 3.5 - 2.5 - 0.25);
  EXPECT_NEAR(Sum(AttemptPhases(clock, TwoEpochs())), 9, 1e-12);
}

TEST(AttemptPhases, ASoleEpochIsSteady) {
  EventTimes events = TwoEpochs();
  events.later_epochs_s = 0;
  const std::map<std::string, double> by = ByName(AttemptPhases(Clock(), events));
  EXPECT_EQ(by.count("warmup_epochs"), 0u);
  EXPECT_DOUBLE_EQ(by.at("steady_epochs"), 1);
}

TEST(AttemptPhases, AJobThatNeverStartedIsAllLaunch) {
  const std::vector<PhaseTime> phases = AttemptPhases(Clock(), EventTimes{});
  const std::map<std::string, double> by = ByName(phases);
  EXPECT_EQ(phases.size(), 5u);
  EXPECT_DOUBLE_EQ(by.at("launch"), 108.5 - 103.25);
  EXPECT_EQ(by.count("steady_epochs"), 0u);
  EXPECT_EQ(by.count("mpirun_exit"), 0u);
  EXPECT_NEAR(Sum(phases), 9, 1e-12);
}

TEST(AttemptPhases, ClocksThatDisagreeGiveZeroNotLessThanZero) {
  EventTimes events = TwoEpochs();
  events.trainer = TrainerPhases{1, 1, 1, 3, 0};  // more than the 1.25 s mpirun took to its run_start
  EXPECT_EQ(ByName(AttemptPhases(Clock(), events)).at("launch"), 0);
}

TEST(SweepTime, EfficiencyAndTheLargestOverheadsWithWhatNoPhaseHolds) {
  SweepTime time;
  time.wall_s = 20;
  time.Add({{"launch", 4}, {"steady_epochs", 5}, {"ingest", 1}});
  time.Add({{"launch", 4}, {"steady_epochs", 5}, {"dataset_load", 0.2}});
  EXPECT_DOUBLE_EQ(time.efficiency(), 0.5);
  const std::vector<PhaseTime> largest = time.LargestOverheads(3);
  ASSERT_EQ(largest.size(), 3u);
  EXPECT_EQ(largest[0].phase, "launch");
  EXPECT_EQ(largest[1].phase, "ingest");
  EXPECT_EQ(largest[2].phase, "unaccounted");
  EXPECT_NEAR(largest[2].seconds, 0.8, 1e-9);
  EXPECT_EQ(time.Summary(),
            "sweep 20.0 s, of which steady epochs 10.0 s: efficiency 50%; largest overheads: launch 8.0 s (40%), "
            "ingest 1.0 s (5%), unaccounted 0.8 s (4%)");
  EXPECT_EQ(SweepTime{}.efficiency(), 0);
}

// Attempts side by side: efficiency over their time, utilisation over the
// hosts' slot-seconds.
TEST(SweepTime, AttemptsAtOnceCountTheirTimeAndTheHostsTheirSlots) {
  SweepTime time;
  time.wall_s = 10;
  time.slots = 8;
  time.Add({{"launch", 2}, {"steady_epochs", 8}}, 4);
  time.Add({{"launch", 2}, {"steady_epochs", 8}}, 2);
  EXPECT_DOUBLE_EQ(time.efficiency(), 0.8);
  EXPECT_DOUBLE_EQ(time.rank_steady_s, 48);
  EXPECT_DOUBLE_EQ(time.utilisation(), 0.6);
  EXPECT_EQ(time.Summary(),
            "sweep 10.0 s, its attempts 20.0 s side by side, of which steady epochs 16.0 s: efficiency 80%, "
            "utilisation 60% of 8 slots; largest overheads: launch 4.0 s (20%)");
  SweepTime unknown;
  unknown.wall_s = 10;
  unknown.Add({{"steady_epochs", 5}}, 2);
  EXPECT_EQ(unknown.utilisation(), 0);
}

}  // namespace
}  // namespace dmlbench
