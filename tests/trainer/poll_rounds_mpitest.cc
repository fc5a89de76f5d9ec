// Polling rounds (poll.h NewPollRound) through real mpirun and Open MPI: in a
// round a Comm makes MPI progress once, however many of its request sets are
// tested, and a set completes when its own messages have arrived, not
// before; while an MPI_Iallreduce is pending, a pass that did work is
// followed by another, up to three. MPI_Testsome and MPI_Testall are counted here through MPI's
// profiling interface (PMPI): this executable's definitions take the place
// of the library's for every caller in it, the trainer's code included.
#include <mpi.h>

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "trainer/poll.h"

#include <chrono>

namespace {
int testsome_calls = 0;
int testall_calls = 0;
// When set, each MPI_Testsome takes at least this long, as a pass of the
// progress engine that received or summed something does.
std::chrono::microseconds testsome_busy{0};
}  // namespace

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  ++testsome_calls;
  const auto began = std::chrono::steady_clock::now();
  const int result = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  while (std::chrono::steady_clock::now() - began < testsome_busy) {
  }
  return result;
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  ++testall_calls;
  return PMPI_Testall(count, requests, flag, statuses);
}

namespace dmlbench {
namespace {

constexpr int kSets = 8;
constexpr int kFloats = 1000;

// Polls until every set has completed.
void WaitForAll(const std::vector<std::unique_ptr<Requests>>& sets) {
  double wait_s = 0;
  PollUntil(
      [&] {
        for (const auto& set : sets) {
          if (!set->Test()) return Progress::kIdle;
        }
        return Progress::kDone;
      },
      &wait_s);
}

TEST(PollRounds, OneProgressPassPerRoundHoweverManySetsAreTestedAndEachCompletesOnItsOwn) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  Comm comm;
  if (rank >= 2) {  // every rank joins the one barrier of the test
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  std::array<std::vector<float>, kSets> buffers;
  std::vector<std::unique_ptr<Requests>> sets;
  for (int s = 0; s < kSets; ++s) {
    buffers[s].assign(kFloats, rank == 0 ? static_cast<float>(s + 1) : 0.0f);
    sets.push_back(std::make_unique<Requests>(&comm));
  }
  if (rank == 0) {
    // Set 3 first; the others only after rank 1 has seen 3 alone complete.
    sets[3]->Send(buffers[3], 1, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < kSets; ++s) {
      if (s != 3) sets[s]->Send(buffers[s], 1, s);
    }
    WaitForAll(sets);
    return;
  }
  for (int s = 0; s < kSets; ++s) sets[s]->Receive(buffers[s], 0, s);
  const int testsome_before = testsome_calls;
  NewPollRound();
  for (auto& set : sets) set->Test();
  EXPECT_EQ(testsome_calls - testsome_before, 1) << "one pass for " << kSets << " sets in one round";
  NewPollRound();
  for (auto& set : sets) set->Test();
  EXPECT_EQ(testsome_calls - testsome_before, 2);

  double wait_s = 0;
  PollUntil([&] { return sets[3]->Test() ? Progress::kDone : Progress::kIdle; }, &wait_s);
  EXPECT_EQ(buffers[3], std::vector<float>(kFloats, 4.0f));
  NewPollRound();
  for (int s = 0; s < kSets; ++s) {
    if (s != 3) {
      EXPECT_FALSE(sets[s]->Test()) << "set " << s << " completed before its message was sent";
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  WaitForAll(sets);
  for (int s = 0; s < kSets; ++s) {
    EXPECT_EQ(buffers[s], std::vector<float>(kFloats, static_cast<float>(s + 1))) << "set " << s;
  }
  EXPECT_EQ(testall_calls, 0) << "the sets are tested through the Comm's one pass, not one by one";
}

TEST(PollRounds, WhileAnAllreduceIsPendingEachPassThatDidWorkIsFollowedByAnotherUpToThree) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  Comm comm;
  std::vector<float> data(kFloats, static_cast<float>(rank + 1));
  std::vector<float> sums(kFloats, 0.0f);
  std::vector<float> message(kFloats, 0.0f);
  Requests allreduce(&comm);
  Requests point_to_point(&comm);
  double wait_s = 0;
  if (rank == 0) {
    // Rank 1 sends, and every other rank joins the allreduce, only after the
    // barrier: until then nothing here can complete.
    point_to_point.Receive(message, 1, 0);
    testsome_busy = std::chrono::microseconds(50);
    int before = testsome_calls;
    NewPollRound();
    EXPECT_FALSE(point_to_point.Test());
    EXPECT_EQ(testsome_calls - before, 1) << "point to point: one pass per round, busy or not";

    allreduce.AllreduceSum(data, sums);
    before = testsome_calls;
    NewPollRound();
    EXPECT_FALSE(allreduce.Test());
    EXPECT_EQ(testsome_calls - before, 3) << "a collective pending: busy passes go on, three at most";
    testsome_busy = std::chrono::microseconds(0);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) point_to_point.Send(data, 0, 0);
    allreduce.AllreduceSum(data, sums);
  }
  PollUntil([&] { return allreduce.Test() && point_to_point.Test() ? Progress::kDone : Progress::kIdle; },
            &wait_s);
  EXPECT_EQ(sums, std::vector<float>(kFloats, static_cast<float>(world * (world + 1) / 2)));
  if (rank == 0) {
    EXPECT_EQ(message, std::vector<float>(kFloats, 2.0f));
  }
}

}  // namespace
}  // namespace dmlbench
