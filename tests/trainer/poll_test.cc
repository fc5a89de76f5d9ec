// The Open MPI settings the trainer puts into its environment before MPI_Init,
// and how PollUntil waits.
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trainer/poll.h"

namespace dmlbench {
namespace {

constexpr const char* kNames[] = {"OMPI_MCA_btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_rndv_eager_limit",
                                  "OMPI_MCA_btl_tcp_max_send_size"};
constexpr const char* kInclude = "OMPI_MCA_btl_tcp_if_include";
constexpr const char* kExclude = "OMPI_MCA_btl_tcp_if_exclude";

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value ? value : "<unset>";
}

// The environment mpirun gives a rank of a job with `world` ranks, `local`
// of them on this machine, and no interface settings.
void JobOf(int world, int local) {
  setenv("OMPI_COMM_WORLD_SIZE", std::to_string(world).c_str(), 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local).c_str(), 1);
  unsetenv(kInclude);
  unsetenv(kExclude);
}

TEST(SetTransportDefaults, MakesTcpMessagesUpToOneMebibyteEager) {
  for (const char* name : kNames) unsetenv(name);
  SetTransportDefaults();
  for (const char* name : kNames) EXPECT_EQ(Env(name), "1048576") << name;
}

TEST(SetTransportDefaults, KeepsWhatTheUserSet) {
  for (const char* name : kNames) unsetenv(name);
  setenv("OMPI_MCA_btl_tcp_eager_limit", "4096", 1);
  SetTransportDefaults();
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_eager_limit"), "4096");
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_max_send_size"), "1048576");
}

TEST(SetTransportDefaults, NamesOb1ThePointToPointLayer) {
  unsetenv("OMPI_MCA_pml");
  SetTransportDefaults();
  EXPECT_EQ(Env("OMPI_MCA_pml"), "ob1");
  setenv("OMPI_MCA_pml", "cm", 1);
  SetTransportDefaults();
  EXPECT_EQ(Env("OMPI_MCA_pml"), "cm");
  unsetenv("OMPI_MCA_pml");
}

TEST(SetTransportDefaults, KeepsTcpOnTheLoopbackWhenEveryRankIsOnThisMachine) {
  JobOf(3, 3);
  SetTransportDefaults();
  EXPECT_EQ(Env(kInclude), "127.0.0.1/8");
  EXPECT_EQ(Env(kExclude), "<unset>");
}

TEST(SetTransportDefaults, LeavesTheInterfacesAloneForAJobOverSeveralMachines) {
  JobOf(4, 2);
  SetTransportDefaults();
  EXPECT_EQ(Env(kInclude), "<unset>");
}

TEST(SetTransportDefaults, LeavesTheInterfacesAloneWithoutMpirun) {
  JobOf(1, 1);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  SetTransportDefaults();
  EXPECT_EQ(Env(kInclude), "<unset>");
}

TEST(SetTransportDefaults, KeepsTheInterfacesTheUserNamed) {
  JobOf(2, 2);
  setenv(kInclude, "eth0", 1);
  SetTransportDefaults();
  EXPECT_EQ(Env(kInclude), "eth0");

  // Open MPI refuses both settings at once: an exclusion stays alone.
  JobOf(2, 2);
  setenv(kExclude, "docker0", 1);
  SetTransportDefaults();
  EXPECT_EQ(Env(kInclude), "<unset>");
  EXPECT_EQ(Env(kExclude), "docker0");
}

// A step that returns the given progress, one per call, and counts its calls.
struct Script {
  std::vector<Progress> progress;
  std::size_t calls = 0;
  Progress operator()() { return progress.at(calls++); }
};

TEST(PollUntil, SleepsAfterIdleStepsBackingOffAndStartsOverAfterProgress) {
  JobOf(4, 2);  // ranks on other machines: no spin
  Script script{{Progress::kIdle, Progress::kIdle, Progress::kAdvanced, Progress::kIdle,
                 Progress::kDone}};
  const PollCounts before = PollCountsOfThisThread();
  double wait_s = 0.5;
  PollUntil(std::ref(script), &wait_s);
  const PollCounts after = PollCountsOfThisThread();

  EXPECT_EQ(script.calls, 5u);
  EXPECT_EQ(after.polls - before.polls, 5u);
  EXPECT_EQ(after.sleeps - before.sleeps, 3u);
  // 20 us, 25 us, then 20 us again after the progress.
  EXPECT_NEAR(after.sleep_asked_s - before.sleep_asked_s, 65e-6, 1e-9);
  EXPECT_GE(after.slept_s - before.slept_s, 65e-6);
  EXPECT_GE(wait_s - 0.5, after.slept_s - before.slept_s);  // added to, not overwritten
  EXPECT_EQ(after.yields, before.yields);
}

TEST(PollUntil, SpinsYieldingWhenEveryRankIsOnThisMachineAndSleepsOnlyAfterOneMillisecond) {
  JobOf(4, 4);
  // Idle for 20 ms from the first poll, then done (a yield on a loaded
  // machine may take milliseconds). PollUntil starts its clock before the
  // first poll and reads it after each, so a poll it followed with a yield
  // came less than 1 ms after the first.
  std::optional<std::chrono::steady_clock::time_point> start;
  std::vector<std::chrono::steady_clock::duration> idle_polls;
  const PollCounts before = PollCountsOfThisThread();
  double wait_s = 0;
  PollUntil(
      [&] {
        if (!start) start = std::chrono::steady_clock::now();
        const auto since = std::chrono::steady_clock::now() - *start;
        if (since >= std::chrono::milliseconds(20)) return Progress::kDone;
        idle_polls.push_back(since);
        return Progress::kIdle;
      },
      &wait_s);
  const PollCounts after = PollCountsOfThisThread();
  ASSERT_GT(after.yields - before.yields, 0u);
  ASSERT_GT(after.sleeps - before.sleeps, 0u);
  EXPECT_EQ(after.polls - before.polls, idle_polls.size() + 1);
  EXPECT_EQ(after.yields - before.yields + after.sleeps - before.sleeps, idle_polls.size());
  // Every poll in the first millisecond was followed by a yield, not a sleep:
  // the sleeps are the last idle polls.
  const std::size_t first_sleep = idle_polls.size() - (after.sleeps - before.sleeps);
  EXPECT_LT(idle_polls[first_sleep - 1], std::chrono::milliseconds(1));
  // The first sleep comes about 1 ms in (less by however long the thread
  // was preempted between a poll and PollUntil reading its clock).
  EXPECT_GE(idle_polls[first_sleep], std::chrono::microseconds(500));
}

TEST(PollUntil, SpinsAgainAfterProgress) {
  JobOf(2, 2);
  Script script{{Progress::kIdle, Progress::kAdvanced, Progress::kIdle, Progress::kDone}};
  const PollCounts before = PollCountsOfThisThread();
  double wait_s = 0;
  PollUntil(std::ref(script), &wait_s);
  const PollCounts after = PollCountsOfThisThread();
  EXPECT_EQ(after.yields - before.yields, 2u);
  EXPECT_EQ(after.sleeps - before.sleeps, 0u);
}

TEST(PollUntil, ReturnsAtOnceWhenTheFirstStepIsDone) {
  Script script{{Progress::kDone}};
  const PollCounts before = PollCountsOfThisThread();
  double wait_s = 0;
  PollUntil(std::ref(script), &wait_s);
  EXPECT_EQ(script.calls, 1u);
  EXPECT_EQ(PollCountsOfThisThread().sleeps, before.sleeps);
}

}  // namespace
}  // namespace dmlbench
