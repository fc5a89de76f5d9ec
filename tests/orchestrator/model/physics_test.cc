// Tests of orchestrator/model/physics: the counts of every scheme against
// the message patterns of DESIGN.md section 1, written out by hand per case.
#include "orchestrator/model/physics.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

ModelConfig Config(Architecture architecture, int workers, int servers = 0) {
  ModelConfig config;
  config.architecture = architecture;
  config.workers = workers;
  config.servers = servers;
  return config;
}

TEST(PhysicsTest, ThePapersNetworkHas104938Parameters) {
  EXPECT_EQ(ParameterCount(ModelConfig{}), 104938);  // 784-128-32-10
  ModelConfig wide;
  wide.hidden = {256};
  EXPECT_EQ(ParameterCount(wide), 784 * 256 + 256 + 256 * 10 + 10);
}

TEST(PhysicsTest, IterationsPerEpochAreNOverBWCapped) {
  ModelConfig config = Config(Architecture::kRing, 7);
  EXPECT_EQ(IterationsPerEpoch(config), 60000 / 700);
  config.max_iterations_per_epoch = 50;
  EXPECT_EQ(IterationsPerEpoch(config), 50);
}

TEST(PhysicsTest, RingMoves2WMinusOneStepsOfWOverW) {
  const IterationTraffic t = Traffic(Config(Architecture::kRing, 4), 400);
  EXPECT_EQ(t.latency_steps, 6);
  EXPECT_EQ(t.messages, 6);
  EXPECT_EQ(t.link_bytes, 6 * 100);
  EXPECT_EQ(t.reduce_bytes, 3 * 100);
  EXPECT_EQ(t.worker_update_bytes, 400);
}

TEST(PhysicsTest, MpiIsABinomialTreeBelowFourRanksAndRabenseifnerFromFour) {
  const IterationTraffic two = Traffic(Config(Architecture::kMpi, 2), 400);
  EXPECT_EQ(two.latency_steps, 2);
  EXPECT_EQ(two.link_bytes, 2 * 400);
  const IterationTraffic three = Traffic(Config(Architecture::kMpi, 3), 400);
  EXPECT_EQ(three.latency_steps, 4);
  EXPECT_EQ(three.link_bytes, 4 * 400);
  // A power of two: recursive halving and doubling move what the ring
  // moves, in log2 w steps each way instead of w - 1.
  const IterationTraffic four = Traffic(Config(Architecture::kMpi, 4), 400);
  EXPECT_EQ(four.link_bytes, Traffic(Config(Architecture::kRing, 4), 400).link_bytes);
  EXPECT_EQ(four.latency_steps, 4);
  const IterationTraffic eight = Traffic(Config(Architecture::kMpi, 8), 800);
  EXPECT_EQ(eight.link_bytes, 2 * 700);
  EXPECT_EQ(eight.latency_steps, 6);
  // Five to seven ranks fold into four first: the whole gradient travels
  // once more each way, 3.5 W in all against the ring's 2 (w-1)/w W.
  for (int w : {5, 6, 7}) {
    const IterationTraffic folded = Traffic(Config(Architecture::kMpi, w), 400);
    EXPECT_EQ(folded.link_bytes, 2 * 300 + 2 * 400) << w;
    EXPECT_EQ(folded.latency_steps, 6) << w;
    EXPECT_EQ(folded.reduce_bytes, 300 + 400) << w;
  }
}

TEST(PhysicsTest, PeerToPeerScattersAndGathersShards) {
  const IterationTraffic t = Traffic(Config(Architecture::kP2p, 5), 500);
  EXPECT_EQ(t.latency_steps, 2);
  EXPECT_EQ(t.messages, 8);
  EXPECT_EQ(t.link_bytes, 2 * 4 * 100);
  EXPECT_EQ(t.worker_update_bytes, 100);
}

TEST(PhysicsTest, ParameterServerLinkCarriesTheLargerOfWAndWWOverK) {
  // 4 workers, 2 servers: a server's link carries 4 W/2 = 2W each way.
  const IterationTraffic t = Traffic(Config(Architecture::kPs, 4, 2), 400);
  EXPECT_EQ(t.link_bytes, 2 * 800);
  EXPECT_EQ(t.reduce_bytes, 3 * 200);
  EXPECT_EQ(t.server_update_bytes, 200);
  EXPECT_EQ(t.worker_update_bytes, 0);
  // 1 worker, 4 servers: the worker's own link is the busiest, W each way.
  EXPECT_EQ(Traffic(Config(Architecture::kPs, 1, 4), 400).link_bytes, 2 * 400);
}

TEST(PhysicsTest, OneWorkerExchangesNothingButStillUpdates) {
  for (Architecture a : {Architecture::kRing, Architecture::kMpi, Architecture::kP2p}) {
    const IterationTraffic t = Traffic(Config(a, 1), 400);
    EXPECT_EQ(t.link_bytes, 0);
    EXPECT_EQ(t.messages, 0);
    EXPECT_EQ(t.worker_update_bytes, 400);
  }
}

TEST(PhysicsTest, BucketsFollowTheTrainersFusingLastLayerFirst) {
  ModelConfig config;
  EXPECT_EQ(Buckets(config).size(), 1u);  // overlap off: one bucket, ready at the end
  EXPECT_EQ(Buckets(config)[0].ready_fraction, 1.0);
  config.overlap = true;
  // fc3 (330 floats) and fc2 (4,128) are 17,832 bytes, under 64 KiB: they
  // wait for fc1 and all three go in one bucket.
  config.bucket_bytes = 64 * 1024;
  ASSERT_EQ(Buckets(config).size(), 1u);
  // With 16 KiB, fc3 + fc2 (17,832 bytes) reach the limit and go first.
  config.bucket_bytes = 16 * 1024;
  const std::vector<Bucket> small = Buckets(config);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0].bytes, 4.0 * (330 + 4128));
  EXPECT_EQ(small[1].bytes, 4.0 * 100480);
  EXPECT_NEAR(small[0].ready_fraction, (320.0 + 4096) / (320 + 4096 + 100352), 1e-12);
  EXPECT_EQ(small[1].ready_fraction, 1.0);
}

}  // namespace
}  // namespace dmlbench
