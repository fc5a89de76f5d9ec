// The collective helpers of trainer.cc through real MPI: the first failing
// rank's message reaches every rank; the peak memory is the largest rank's.
#include <mpi.h>

#include <gtest/gtest.h>

#include <string>

#include "trainer/trainer.h"

namespace dmlbench {
namespace {

TEST(FirstError, EmptyWhenNoRankFailed) { EXPECT_EQ(FirstError(""), ""); }

TEST(FirstError, LowestFailingRankWinsOnEveryRank) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  // The upper half of the ranks fail, each with its own message.
  const int first = world / 2;
  const std::string mine = rank >= first ? "rank " + std::to_string(rank) + " failed" : "";
  EXPECT_EQ(FirstError(mine), "rank " + std::to_string(first) + " failed");
}

TEST(PeakRss, IsTheLargestRanksAndAtLeastThisOnes) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Rank 0 touches 64 MiB more than the others.
  std::string ballast(rank == 0 ? 64u << 20 : 0u, 'x');
  const std::int64_t peak = PeakRssBytesOverRanks();
  EXPECT_GE(peak, std::int64_t{64} << 20) << "rank " << rank << " ballast " << ballast.size();
}

}  // namespace
}  // namespace dmlbench
