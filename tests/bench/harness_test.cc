// The benchmarks' shared harness (bench/local/harness.h): the repetition
// loop, the summary and its line, the clocks and the --reps option.
#include "bench/local/harness.h"

#include <gtest/gtest.h>

#include <thread>

namespace dmlbench::bench {
namespace {

TEST(Repeat, DiscardsTheWarmupAndKeepsTheRepetitionsInOrder) {
  int calls = 0;
  const std::vector<double> values = Repeat(2, 3, [&] { return double(++calls); });
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(values, (std::vector<double>{3, 4, 5}));
}

TEST(Summarize, OddCountTakesTheMiddleValue) {
  const Summary s = Summarize({5, 1, 3});
  EXPECT_EQ(s.n, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
}

TEST(Summarize, EvenCountTakesTheMeanOfTheTwoMiddleValues) {
  const Summary s = Summarize({4, 1, 2, 10});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4.25);
}

TEST(Summarize, EmptySampleIsAllZero) {
  const Summary s = Summarize({});
  EXPECT_EQ(s.n, 0);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.max, 0);
}

TEST(Describe, ScalesAndStatesMedianRangeAndCount) {
  EXPECT_EQ(Describe(Summarize({1.05, 1.02, 1.07, 1.05, 1.04, 1.10}), 1, "s", 2), "median 1.05 s, 1.02-1.10 s over 6");
  EXPECT_EQ(Describe(Summarize({0.0015}), 1e3, "ms", 1), "median 1.5 ms, 1.5-1.5 ms over 1");
}

TEST(Clocks, WallTimeOfASleepAndCpuTimeOfABusyLoop) {
  EXPECT_GE(TimeSeconds([] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }), 0.019);
  const double process = CpuSeconds(CpuOf::kProcess);
  const double thread = CpuSeconds(CpuOf::kThisThread);
  // Busy: reading the thread's clock until it has advanced 20 ms.
  for (const double start = CpuSeconds(CpuOf::kThisThread); CpuSeconds(CpuOf::kThisThread) - start < 0.02;) {
  }
  EXPECT_GE(CpuSeconds(CpuOf::kThisThread) - thread, 0.02);
  EXPECT_GE(CpuSeconds(CpuOf::kProcess) - process, 0.02);
  EXPECT_GE(CpuSeconds(CpuOf::kEndedChildren), 0);
}

TEST(AddRepetitions, KeepsTheDefaultAndTakesAGivenCount) {
  int reps = 7;
  CLI::App app;
  AddRepetitions(app, &reps, 5);
  app.parse("", false);
  EXPECT_EQ(reps, 7);
  app.parse("--reps 12", false);
  EXPECT_EQ(reps, 12);
}

// Error paths of the --reps option follow.
TEST(AddRepetitions, RefusesACountBelowTheLeast) {
  int reps = 7;
  CLI::App app;
  AddRepetitions(app, &reps, 5);
  EXPECT_THROW(app.parse("--reps 4", false), CLI::ValidationError);
}

TEST(AddRepetitions, PositionalNameTakesABareCount) {
  int trials = 11;
  CLI::App app;
  AddRepetitions(app, &trials, 1, "trials", "trials");
  app.parse("3", false);
  EXPECT_EQ(trials, 3);
  EXPECT_THROW(app.parse("0", false), CLI::ValidationError);
}

}  // namespace
}  // namespace dmlbench::bench
