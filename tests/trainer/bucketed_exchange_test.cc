// The parts every scheme shares: balanced splits, bucket plans, the SGD step.
#include <cmath>
#include <ostream>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "trainer/bucketed_exchange.h"
#include "trainer/mlp.h"

namespace dmlbench {

// Found by argument-dependent lookup from gtest's comparisons.
bool operator==(const Slice& a, const Slice& b) { return a.offset == b.offset && a.count == b.count; }
void PrintTo(const Slice& s, std::ostream* os) { *os << "{" << s.offset << ", " << s.count << "}"; }

namespace {

std::vector<Slice> Parts(Slice whole, int parts) {
  std::vector<Slice> result;
  for (int i = 0; i < parts; ++i) result.push_back(SplitPart(whole, parts, i));
  return result;
}

TEST(SplitPart, TilesTheRunWithLengthsDifferingByAtMostOne) {
  EXPECT_EQ(Parts(Slice{10, 10}, 3),
            (std::vector<Slice>{Slice{10, 3}, Slice{13, 3}, Slice{16, 4}}));
  EXPECT_EQ(Parts(Slice{0, 104938}, 4),
            (std::vector<Slice>{Slice{0, 26234}, Slice{26234, 26235}, Slice{52469, 26234},
                                Slice{78703, 26235}}));
}

TEST(SplitPart, ShorterRunThanPartsLeavesSomeEmpty) {
  EXPECT_EQ(Parts(Slice{0, 2}, 4),
            (std::vector<Slice>{Slice{0, 0}, Slice{0, 1}, Slice{1, 0}, Slice{1, 1}}));
}

TEST(Intersect, CommonPartOrEmpty) {
  EXPECT_EQ(Intersect(Slice{0, 10}, Slice{5, 10}), (Slice{5, 5}));
  EXPECT_EQ(Intersect(Slice{0, 10}, Slice{2, 3}), (Slice{2, 3}));
  EXPECT_EQ(Intersect(Slice{0, 10}, Slice{10, 3}).count, 0u);
}

// 784-128-32-10: fc1 100480, fc2 4128, fc3 330 floats.
const std::vector<Slice> kMlp = {Slice{0, 100480}, Slice{100480, 4128}, Slice{104608, 330}};

TEST(PlanBuckets, OverlapOffIsOneBucketOfTheWholeBuffer) {
  const std::vector<Bucket> buckets = PlanBuckets(kMlp, false, 64);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].slice, (Slice{0, 104938}));
  EXPECT_EQ(buckets[0].first_slice, 0);
}

TEST(PlanBuckets, SmallBucketsHoldOneLayerEachLastLayerFirst) {
  const std::vector<Bucket> buckets = PlanBuckets(kMlp, true, 1);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].slice, kMlp[2]);
  EXPECT_EQ(buckets[0].first_slice, 2);
  EXPECT_EQ(buckets[1].slice, kMlp[1]);
  EXPECT_EQ(buckets[2].slice, kMlp[0]);
}

TEST(PlanBuckets, FusesLayersUntilTheBucketSize) {
  // fc3 (1,320 bytes) alone is under 16 KiB; with fc2 it is 17,832 bytes.
  const std::vector<Bucket> buckets = PlanBuckets(kMlp, true, 16 * 1024);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].slice, (Slice{100480, 4458}));
  EXPECT_EQ(buckets[0].first_slice, 1);
  EXPECT_EQ(buckets[1].slice, kMlp[0]);
}

TEST(PlanBuckets, TheFirstLayerClosesTheLastBucketEvenWhenSmall) {
  const std::vector<Bucket> buckets = PlanBuckets(kMlp, true, std::size_t{1} << 30);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].slice, (Slice{0, 104938}));
}

// The trainer's plan with overlap: Mlp's slices at the bucket size.
std::vector<Bucket> TrainerBuckets(std::size_t bucket_bytes) {
  Mlp mlp({784, 128, 32, 10}, 1);
  mlp.SliceGradients(bucket_bytes);
  std::vector<Slice> slices;
  for (const GradientSlice& s : mlp.gradient_slices()) slices.push_back(Slice{s.offset, s.count});
  return PlanBuckets(slices, true, bucket_bytes);
}

TEST(PlanBuckets, SixteenKibBucketsSendFc1InFourBlocksAfterFc3AndFc2) {
  const std::vector<Bucket> buckets = TrainerBuckets(16 * 1024);
  ASSERT_EQ(buckets.size(), 5u);
  // fc3 and fc2, then fc1's row blocks from its last (with the biases) to its first.
  EXPECT_EQ(buckets[0].slice, (Slice{100480, 4458}));
  EXPECT_EQ(buckets[0].first_slice, 4);
  std::size_t end = 100480;
  for (std::size_t b = 1; b < buckets.size(); ++b) {
    const std::size_t biases = b == 1 ? 128 : 0;
    EXPECT_EQ(buckets[b].slice, (Slice{end - 196 * 128 - biases, 196 * 128 + biases}))
        << "bucket " << b;
    EXPECT_EQ(buckets[b].first_slice, 4 - static_cast<int>(b)) << "bucket " << b;
    end = buckets[b].slice.offset;
  }
  EXPECT_EQ(end, 0u);
}

TEST(PlanBuckets, LargerBucketsFuseFc3AndFc2IntoFc1sLastBlock) {
  // 128 KiB: 256 rows at least, fc1 in 3 blocks of 261-262 rows; fc3 and fc2
  // (17,832 bytes) wait for the last of them.
  const std::vector<Bucket> buckets = TrainerBuckets(128 * 1024);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].slice, (Slice{522 * 128, 104938 - 522 * 128}));
  EXPECT_EQ(buckets[1].slice, (Slice{261 * 128, 261 * 128}));
  EXPECT_EQ(buckets[2].slice, (Slice{0, 261 * 128}));
}

TEST(PlanBuckets, BucketsOfAMebibyteKeepTheWholeGradientInOne) {
  const std::vector<Bucket> buckets = TrainerBuckets(std::size_t{1} << 20);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].slice, (Slice{0, 104938}));
}

TEST(PlanBuckets, APartitionCutsTheWholeExchangeIntoEqualPartsItsEndFirst) {
  // 104,938 floats in parts of at most 16,384 (64 KiB): 7 parts of 14,991 floats, the last 14,992.
  const std::vector<Bucket> parts = PlanBuckets(kMlp, false, 64, 65536);
  ASSERT_EQ(parts.size(), 7u);
  std::size_t end = 104938;
  for (const Bucket& part : parts) {
    EXPECT_EQ(part.slice.offset + part.slice.count, end);
    EXPECT_LE(part.slice.count * sizeof(float), 65536u);
    EXPECT_GE(part.slice.count, 14991u);
    EXPECT_EQ(part.first_slice, 0);
    end = part.slice.offset;
  }
  EXPECT_EQ(end, 0u);
}

TEST(PlanBuckets, APartitionCutsOnlyTheBucketsLargerThanItAndKeepsWhenTheyStart) {
  // 16 KiB buckets: fc3+fc2 (17,832 bytes) in 2 parts, each 25,088-float block of fc1 in 7 (the
  // one with the biases, 25,216 floats, too).
  const std::vector<Bucket> buckets = TrainerBuckets(16 * 1024);
  Mlp mlp({784, 128, 32, 10}, 1);
  mlp.SliceGradients(16 * 1024);
  std::vector<Slice> slices;
  for (const GradientSlice& s : mlp.gradient_slices()) slices.push_back(Slice{s.offset, s.count});
  const std::vector<Bucket> parts = PlanBuckets(slices, true, 16 * 1024, 16 * 1024);
  ASSERT_EQ(parts.size(), 2u + 4 * 7);
  std::size_t part = 0;
  for (const Bucket& bucket : buckets) {
    std::size_t end = bucket.slice.offset + bucket.slice.count;
    for (; part < parts.size() && parts[part].slice.offset >= bucket.slice.offset; ++part) {
      EXPECT_EQ(parts[part].slice.offset + parts[part].slice.count, end) << "part " << part;
      EXPECT_EQ(parts[part].first_slice, bucket.first_slice) << "part " << part;
      end = parts[part].slice.offset;
    }
    EXPECT_EQ(end, bucket.slice.offset);
  }
  EXPECT_EQ(part, parts.size());
  // A partition larger than every bucket changes nothing.
  EXPECT_EQ(PlanBuckets(slices, true, 16 * 1024, 1 << 20).size(), buckets.size());
}

TEST(ApplySgd, SubtractsTheLearningRateTimesTheMean) {
  std::vector<float> params = {1.0f, -2.0f, 0.5f};
  const std::vector<float> sums = {4.0f, 8.0f, -2.0f};
  ApplySgd(params, sums, 4, 0.5f);
  EXPECT_EQ(params, (std::vector<float>{0.5f, -3.0f, 0.75f}));
}

// One worker (and any power of two) gets exactly the floats of
// learning_rate * (sum / workers); three workers within an ulp of them.
TEST(ApplySgd, MatchesTheMeanGradientStepToTheUlp) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (int workers : {1, 2, 3, 4, 8}) {
    std::vector<float> params(1000), sums(1000);
    for (std::size_t i = 0; i < params.size(); ++i) params[i] = value(rng), sums[i] = value(rng);
    std::vector<float> updated = params;
    ApplySgd(updated, sums, workers, 0.1f);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const float expected = params[i] - 0.1f * (sums[i] / float(workers));
      if ((workers & (workers - 1)) == 0)
        ASSERT_EQ(updated[i], expected) << "index " << i << ", " << workers << " workers";
      else
        ASSERT_LE(std::fabs(updated[i] - expected), std::fabs(expected) * 2e-7f + 1e-7f)
            << "index " << i << ", " << workers << " workers";
    }
  }
}

}  // namespace
}  // namespace dmlbench
