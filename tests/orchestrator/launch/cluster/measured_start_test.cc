// MeasuredStart: when epoch 2 began or can have begun, from the trainer's event
// lines, which the cluster launcher holds against the time it restored the
// hosts' CPU quota. No root needed.
#include "orchestrator/launch/cluster/measured_start.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

constexpr char kRunStart[] = R"({"event":"run_start","format_version":3,"time_unix_s":1700000000.5,"ranks":1})";
constexpr char kEpoch1[] = R"({"event":"epoch","format_version":3,"epoch":1,"wall_s":0.02,"eval_s":0.005})";
constexpr char kEpoch2[] = R"({"event":"epoch","format_version":3,"epoch":2,"wall_s":9.0,"eval_s":9.0})";

TEST(MeasuredStartTest, IsUnknownUntilRunStartAndTheWarmupEpochAreSeen) {
  MeasuredStart start;
  EXPECT_FALSE(start.unix_s());
  start.Observe(kRunStart);
  EXPECT_FALSE(start.unix_s());
  start.Observe(kEpoch1);
  ASSERT_TRUE(start.unix_s());
}

TEST(MeasuredStartTest, IsRunStartPlusTheWarmupsWallAndEvaluationTime) {
  MeasuredStart start;
  start.Observe(kRunStart);
  start.Observe(kEpoch1);
  EXPECT_NEAR(*start.unix_s(), 1700000000.5 + 0.02 + 0.005, 1e-6);
}

TEST(MeasuredStartTest, IsTheTimeEpoch2SaysItBeganOnceItsEventArrives) {
  // A warm-up of a few iterations: the trainer waited for the quota before
  // epoch 2, which began long after run_start plus epoch 1.
  MeasuredStart start;
  start.Observe(kRunStart);
  start.Observe(kEpoch1);
  start.Observe(R"({"event":"epoch","epoch":2,"start_unix_s":1700000001.75,"wall_s":9.0,"eval_s":0})");
  EXPECT_NEAR(*start.unix_s(), 1700000001.75, 1e-6);
}

TEST(MeasuredStartTest, LaterEpochsAndOtherLinesDoNotMoveIt) {
  MeasuredStart start;
  start.Observe("epoch 1/2 ...");
  start.Observe("");
  start.Observe("{not json");
  start.Observe(R"({"event":"run_end","status":"ok"})");
  start.Observe(R"(["event","epoch"])");
  start.Observe(kRunStart);
  start.Observe(kEpoch1);
  start.Observe(kEpoch2);  // from a trainer that does not write start_unix_s
  start.Observe(R"({"event":"epoch","epoch":3,"start_unix_s":1800000000.0,"wall_s":9.0})");
  EXPECT_NEAR(*start.unix_s(), 1700000000.525, 1e-6);
}

TEST(MeasuredStartTest, AnEpochWithoutWallTimeOrARunStartWithoutTimeTellsNothing) {
  MeasuredStart no_wall;
  no_wall.Observe(kRunStart);
  no_wall.Observe(R"({"event":"epoch","epoch":1})");
  EXPECT_FALSE(no_wall.unix_s());
  MeasuredStart no_time;
  no_time.Observe(R"({"event":"run_start","time_unix_s":"soon"})");
  no_time.Observe(kEpoch1);
  EXPECT_FALSE(no_time.unix_s());
}

TEST(MeasuredStartTest, AnEpochWithoutEvaluationCountsItsWallTimeOnly) {
  MeasuredStart start;
  start.Observe(kRunStart);
  start.Observe(R"({"event":"epoch","epoch":1,"wall_s":0.25,"eval_s":null})");
  EXPECT_NEAR(*start.unix_s(), 1700000000.75, 1e-6);
}

}  // namespace
}  // namespace dmlbench
