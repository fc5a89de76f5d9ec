// Ring and MPI allreduce against an independently computed formula, across
// buffer lengths that do and do not divide by the world size; every rank must
// end with bit-identical sums.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trainer/allreduce_mpi.h"
#include "trainer/allreduce_ring.h"
#include "trainer/poll.h"

namespace dmlbench {
namespace {

using AllreduceSum = std::function<void(Comm*, std::span<float>, double*)>;

int WorldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Rank r contributes (r + 1) * ((i % 97) + 1) / 2 at index i: small halves,
// so every partial sum is exact in fp32 whatever the order of additions.
float Contribution(int rank, std::size_t i) {
  return static_cast<float>(rank + 1) * static_cast<float>(i % 97 + 1) * 0.5f;
}

float ExpectedSum(int world, std::size_t i) {
  return static_cast<float>(world * (world + 1) / 2) * static_cast<float>(i % 97 + 1) * 0.5f;
}

std::vector<std::size_t> Lengths(int w) {
  std::vector<std::size_t> lengths = {1, static_cast<std::size_t>(w - 1),
                                      static_cast<std::size_t>(w + 1), 1000, 104938,
                                      (std::size_t{4} << 20) + 3};
  return lengths;
}

// "" when every index holds the formula's sum, else the first mismatch.
std::string FirstMismatch(std::span<const float> data, int world, int rank) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data[i] != ExpectedSum(world, i)) {
      return "mismatch at index " + std::to_string(i) + " on rank " + std::to_string(rank) +
             ": got " + std::to_string(data[i]) + ", expected " +
             std::to_string(ExpectedSum(world, i));
    }
  }
  return "";
}

// FNV-1a over the bytes, to compare buffers across ranks.
std::uint64_t Fingerprint(std::span<const float> data) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (std::size_t i = 0; i < data.size_bytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

bool SameOnEveryRank(std::uint64_t value) {
  std::vector<std::uint64_t> all(WorldSize());
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (std::uint64_t v : all) {
    if (v != all[0]) return false;
  }
  return true;
}

void ExpectFormula(const AllreduceSum& allreduce) {
  Comm comm;
  const int w = comm.size();
  for (std::size_t n : Lengths(w)) {
    std::vector<float> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = Contribution(comm.rank(), i);
    double wait_s = 0;
    allreduce(&comm, data, &wait_s);
    EXPECT_EQ(FirstMismatch(data, w, comm.rank()), "") << "length " << n;
  }
}

void ExpectBitIdenticalOnEveryRank(const AllreduceSum& allreduce) {
  Comm comm;
  std::mt19937 random(1234u + static_cast<unsigned>(comm.rank()));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t n : {std::size_t{1}, std::size_t{1001}, std::size_t{104938}}) {
    std::vector<float> data(n);
    for (float& x : data) x = uniform(random);
    double wait_s = 0;
    allreduce(&comm, data, &wait_s);
    EXPECT_TRUE(SameOnEveryRank(Fingerprint(data))) << "length " << n << " on rank "
                                                    << comm.rank();
  }
}

TEST(RingAllreduce, SumsEqualTheFormulaForEveryLength) { ExpectFormula(RingAllreduceSum); }

TEST(RingAllreduce, EveryRankEndsBitIdentical) { ExpectBitIdenticalOnEveryRank(RingAllreduceSum); }

TEST(RingAllreduce, SendsTwoTimesWMinusOneChunksToTheRight) {
  Comm comm;
  const int w = comm.size();
  std::vector<float> data(1000, 1.0f);
  double wait_s = 0;
  RingAllreduceSum(&comm, data, &wait_s);
  EXPECT_EQ(comm.traffic().messages_sent, static_cast<std::uint64_t>(2 * (w - 1)));
  // Each step moves one chunk of ~n/w floats: 2(w-1)/w of the buffer in all.
  const std::uint64_t expected_bytes = w == 1 ? 0 : 2 * (w - 1) * 1000 / w * sizeof(float);
  EXPECT_NEAR(static_cast<double>(comm.traffic().bytes_sent), static_cast<double>(expected_bytes),
              2.0 * (w - 1) * sizeof(float));
}

TEST(RingAllreduce, TwoRingsInFlightWithDifferentTagsDoNotMix) {
  Comm comm;
  const int w = comm.size();
  std::vector<float> a(777), b(778);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = Contribution(comm.rank(), i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = Contribution(comm.rank(), i);
  RingAllreduce ring_a(&comm, a, 0);
  RingAllreduce ring_b(&comm, b, 1);
  ring_a.Start();
  ring_b.Start();
  double wait_s = 0;
  PollUntil(
      [&] {
        const Progress pa = ring_a.Advance();
        const Progress pb = ring_b.Advance();
        if (pa == Progress::kDone && pb == Progress::kDone) return Progress::kDone;
        return Progress::kIdle;
      },
      &wait_s);
  EXPECT_EQ(FirstMismatch(a, w, comm.rank()), "");
  EXPECT_EQ(FirstMismatch(b, w, comm.rank()), "");
}

// MpiAllreduceSum as an in-place sum, like the ring's.
void MpiAllreduceInPlace(Comm* comm, std::span<float> data, double* wait_s) {
  std::vector<float> sums(data.size(), -1.0f);
  MpiAllreduceSum(comm, data, sums, wait_s);
  std::copy(sums.begin(), sums.end(), data.begin());
}

TEST(MpiAllreduce, SumsEqualTheFormulaForEveryLength) { ExpectFormula(MpiAllreduceInPlace); }

TEST(MpiAllreduce, EveryRankEndsBitIdentical) { ExpectBitIdenticalOnEveryRank(MpiAllreduceInPlace); }

}  // namespace
}  // namespace dmlbench
