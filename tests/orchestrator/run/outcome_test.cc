// Tests of orchestrator/run/outcome's note on a stalled epoch: an epoch far
// slower than the run's other steady epochs is named, the warm-up epoch
// never is, and ordinary scatter is no note.
#include "orchestrator/run/outcome.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

TEST(SlowEpochNoteTest, AnEpochStalledByALinkDownIsNamed) {
  EXPECT_EQ(SlowEpochNote({2.0, 0.5, 13.5}),
            "epoch 3 took 13.5 s, 27.0 times the median of the run's other steady epochs (0.500 s): something "
            "stalled it, such as a link down");
}

TEST(SlowEpochNoteTest, SeveralSlowEpochsAreCountedAndTheSlowestNamed) {
  EXPECT_EQ(SlowEpochNote({1.0, 0.5, 0.5, 4.0, 0.5, 0.5, 2.5}),
            "2 epochs took over 3 times the median of the run's other steady epochs; the slowest, epoch 4 took "
            "4.0 s, 8.0 times the median of the run's other steady epochs (0.500 s): something stalled them, such "
            "as a link down");
}

TEST(SlowEpochNoteTest, OrdinaryScatterAndTheWarmUpAreNoNote) {
  EXPECT_EQ(SlowEpochNote({9.0, 0.5, 0.6, 0.55, 1.4}), "");  // 1.4 is under 3 x 0.55
  EXPECT_EQ(SlowEpochNote({0.5, 0.5, 1.5}), "");            // exactly 3 times is not over
}

TEST(SlowEpochNoteTest, RunsOfFewerThanTwoSteadyEpochsHaveNone) {
  EXPECT_EQ(SlowEpochNote({}), "");
  EXPECT_EQ(SlowEpochNote({0.5}), "");
  EXPECT_EQ(SlowEpochNote({0.5, 13.5}), "");
}

}  // namespace
}  // namespace dmlbench
