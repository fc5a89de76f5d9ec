// The order a parameter-server worker starts its exchanges in.
#include <algorithm>
#include <cstddef>
#include <vector>

#include <gtest/gtest.h>

#include "trainer/bucketed_exchange.h"
#include "trainer/parameter_server.h"

namespace dmlbench {
namespace {

// 784-128-32-10: fc1 100480, fc2 4128, fc3 330 floats.
const std::vector<Slice> kMlp = {Slice{0, 100480}, Slice{100480, 4128}, Slice{104608, 330}};
constexpr std::size_t kParameters = 104938;

// The server whose shard (of `servers`, balanced) holds the float at `offset`.
int ServerOf(std::size_t offset, int servers) {
  for (int s = 0; s < servers; ++s) {
    const Slice shard = SplitPart(Slice{0, kParameters}, servers, s);
    if (offset < shard.offset + shard.count) return s;
  }
  return servers - 1;
}

TEST(PushOrder, PartsOfTheWholeExchangeTakeTheServersInTurn) {
  // 26 parts of 16 KiB, 13 in each of 2 shards: the last server's first part, then the first
  // server's first, and so on, instead of all 13 of the last server's before any of the first's.
  const std::vector<Bucket> parts = PlanBuckets(kMlp, false, 64, 16384);
  ASSERT_EQ(parts.size(), 26u);
  const std::vector<std::size_t> order = PushOrder(parts, kParameters, 2);
  ASSERT_EQ(order.size(), parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Slice& part = parts[order[i]].slice;
    EXPECT_EQ(ServerOf(part.offset + part.count - 1, 2), i % 2 == 0 ? 1 : 0) << "exchange " << i;
  }
  // Each server still gets its parts from the end of the buffer to its start.
  for (int server = 0; server < 2; ++server) {
    std::size_t previous = kParameters;
    for (std::size_t b : order) {
      if (ServerOf(parts[b].slice.offset + parts[b].slice.count - 1, 2) != server) continue;
      EXPECT_LT(parts[b].slice.offset, previous);
      previous = parts[b].slice.offset;
    }
  }
  // Every part exactly once.
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
}

TEST(PushOrder, BucketsReadyAtDifferentTimesKeepTheirOrder) {
  // With overlap, buckets become ready one after another (first_slice falls): only the parts
  // of one bucket are reordered among themselves, never across buckets.
  std::vector<Slice> slices;
  for (std::size_t offset = 0; offset < 100480; offset += 25120) slices.push_back(Slice{offset, 25120});
  slices.push_back(Slice{100480, 4128});
  slices.push_back(Slice{104608, 330});
  const std::vector<Bucket> parts = PlanBuckets(slices, true, 16384, 16384);
  for (int servers : {1, 2, 4}) {
    const std::vector<std::size_t> order = PushOrder(parts, kParameters, servers);
    ASSERT_EQ(order.size(), parts.size());
    for (std::size_t i = 1; i < order.size(); ++i) {
      EXPECT_GE(parts[order[i - 1]].first_slice, parts[order[i]].first_slice) << servers << " servers";
    }
  }
  // One server: nothing to take turns with, the plan's order.
  const std::vector<std::size_t> one = PushOrder(parts, kParameters, 1);
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], i);
}

}  // namespace
}  // namespace dmlbench
