// Tests of orchestrator/model/physics: the counts of every scheme against
// the message patterns of DESIGN.md section 1, written out by hand per case.
#include "orchestrator/model/physics.h"

#include <gtest/gtest.h>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/model/link_simulation.h"

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
  // once more each way, 3.5 W one phase after another against the ring's
  // 2 (w-1)/w W; played over the links the phases overlap badly, 4.25 W at
  // 5 and 7 ranks, 3.75 W at 6 (LinkSimulationTest). On a shaped link the
  // simulation spends the buckets' bursts itself, and the one burst
  // PacedBytes takes off is added back.
  for (int w : {5, 6, 7}) {
    const IterationTraffic folded = Traffic(Config(Architecture::kMpi, w), 400);
    EXPECT_NEAR(folded.link_bytes, w == 6 ? 1500 : 1700, 1e-6) << w;
    EXPECT_EQ(folded.latency_steps, 6) << w;
    // The even rank of a fold reduces the half it is handed, then its
    // share of the halving.
    EXPECT_EQ(folded.reduce_bytes, 300 + 200) << w;
    // It also sends its half and then the whole result, and receives two
    // halves: 4 more messages, 2.5 W more of its own bytes.
    EXPECT_EQ(folded.worker_cpu_messages, 4 * 2 + 4) << w;
    EXPECT_EQ(folded.worker_cpu_bytes, 4 * 300 + 1000 + folded.reduce_bytes) << w;
  }
  ModelConfig shaped = Config(Architecture::kMpi, 6);
  shaped.network.bandwidth_bits_per_s = 1e9;
  const double W = 419752;
  const double paced = PacedBytes(Traffic(shaped, W).link_bytes, 1, 1e9);
  EXPECT_LT(paced, 3.75 * W - LinkBurstBytes(1e9));
  EXPECT_GT(paced, 3.5 * W - 4 * LinkBurstBytes(1e9));
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

// A single server that sends the new model to one worker after another
// (bench/BOUNDS.md): its link carries the w pulls and the last worker's next
// push in sequence, (w + 1) W instead of 2 w W; between two pulls the
// worker's acknowledgement comes back, a latency, a message and a wait of
// the server's each. The rest is as when it sends at once.
TEST(PhysicsTest, ASingleServersPullsInTurnLeaveWPlusOneGradientsInSequence) {
  ModelConfig config = Config(Architecture::kPs, 4, 1);
  const IterationTraffic at_once = Traffic(config, 400);
  EXPECT_EQ(at_once.receiver_link_bytes, 2 * 4 * 400);
  config.pulls_in_turn = true;
  const IterationTraffic in_turn = Traffic(config, 400);
  EXPECT_EQ(in_turn.receiver_link_bytes, 5 * 400);
  EXPECT_EQ(in_turn.link_bytes, 5 * 400);
  EXPECT_EQ(in_turn.sender_link_bytes, at_once.sender_link_bytes);
  EXPECT_EQ(in_turn.latency_steps, at_once.latency_steps + 3);
  // Only the first pull starts on an idle direction: one token-bucket
  // burst, where at once the pushes and then the pulls each have one.
  EXPECT_EQ(at_once.link_bursts, 2);
  EXPECT_EQ(in_turn.link_bursts, 1);
  EXPECT_EQ(in_turn.server_cpu_waits, at_once.server_cpu_waits + 3);
  EXPECT_EQ(in_turn.server_cpu_messages, at_once.server_cpu_messages + 4);
  EXPECT_EQ(in_turn.worker_cpu_waits, at_once.worker_cpu_waits);  // its push, its pull, however long its turn
  EXPECT_EQ(in_turn.worker_cpu_messages, at_once.worker_cpu_messages + 1);
  EXPECT_EQ(in_turn.server_cpu_bytes, at_once.server_cpu_bytes);
  EXPECT_EQ(in_turn.network_bytes, at_once.network_bytes);
  // One worker: its turn is the only one.
  ModelConfig one = Config(Architecture::kPs, 1, 1);
  const double alone = Traffic(one, 400).link_bytes;
  one.pulls_in_turn = true;
  EXPECT_EQ(Traffic(one, 400).link_bytes, alone);
  EXPECT_EQ(Traffic(one, 400).latency_steps, 2);
  EXPECT_EQ(Traffic(one, 400).link_bursts, 2);  // its pull, then its push after an idle compute

  EXPECT_TRUE(PullsInTurnApplies(config));
  EXPECT_FALSE(PullsInTurnApplies(Config(Architecture::kPs, 4, 2)));
  ModelConfig overlap = config;
  overlap.overlap = true;
  EXPECT_FALSE(PullsInTurnApplies(overlap));
  ModelConfig parts = config;
  parts.partition_bytes = 16384;
  EXPECT_FALSE(PullsInTurnApplies(parts));
  EXPECT_EQ(ConfigLabel(config), "ps k=1 w=4 b=100 pulls-in-turn");
}

TEST(PhysicsTest, BothLinksOfATransferAreSharedOnlyWithSeveralFlowsAtEachEnd) {
  // ps: a worker's link carries W to and from the k servers, a server's
  // its shard from and to each of the w workers.
  const IterationTraffic ps = Traffic(Config(Architecture::kPs, 3, 2), 400);
  EXPECT_EQ(ps.sender_link_bytes, 2 * 400);
  EXPECT_EQ(ps.receiver_link_bytes, 2 * 3 * 200);
  EXPECT_EQ(ps.link_bytes, 2 * 3 * 200);
  EXPECT_TRUE(ps.ends_shared);
  EXPECT_FALSE(Traffic(Config(Architecture::kPs, 1, 4), 400).ends_shared);  // one worker: one flow per server
  EXPECT_FALSE(Traffic(Config(Architecture::kPs, 4, 1), 400).ends_shared);  // one server: one flow per worker
  // p2p: w - 1 flows out of each worker and w - 1 into each.
  const IterationTraffic p2p = Traffic(Config(Architecture::kP2p, 3), 300);
  EXPECT_TRUE(p2p.ends_shared);
  EXPECT_EQ(p2p.sender_link_bytes, p2p.link_bytes);
  EXPECT_EQ(p2p.receiver_link_bytes, p2p.link_bytes);
  EXPECT_FALSE(Traffic(Config(Architecture::kP2p, 2), 300).ends_shared);
  // Ring and MPI's pairwise steps: one neighbour each way.
  EXPECT_FALSE(Traffic(Config(Architecture::kRing, 7), 700).ends_shared);
  EXPECT_FALSE(Traffic(Config(Architecture::kMpi, 7), 700).ends_shared);
}

TEST(PhysicsTest, WorkersWaitOncePerDependentStepAndAServerOncePerExchange) {
  // Ring and p2p handle as many bytes and messages per worker; ring waits
  // for each of its 2(w-1) steps, p2p for its scatter and its gather.
  const IterationTraffic ring = Traffic(Config(Architecture::kRing, 5), 500);
  const IterationTraffic p2p = Traffic(Config(Architecture::kP2p, 5), 500);
  EXPECT_EQ(ring.worker_cpu_bytes, p2p.worker_cpu_bytes);
  EXPECT_EQ(ring.worker_cpu_messages, p2p.worker_cpu_messages);
  EXPECT_EQ(ring.worker_cpu_waits, 8);
  EXPECT_EQ(p2p.worker_cpu_waits, 2);
  EXPECT_EQ(Traffic(Config(Architecture::kMpi, 5), 500).worker_cpu_waits, 6);  // Rabenseifner over 4, folded
  const IterationTraffic ps = Traffic(Config(Architecture::kPs, 4, 2), 400);
  EXPECT_EQ(ps.worker_cpu_waits, 2);  // its push, its pull
  EXPECT_EQ(ps.server_cpu_waits, 1);  // the pushes of all workers, which arrive together
  EXPECT_EQ(ring.server_cpu_waits, 0);
  EXPECT_EQ(Traffic(Config(Architecture::kRing, 1), 400).worker_cpu_waits, 0);
}

// What all the job's links carry per iteration, counted message by message
// for each pattern (W = 400 bytes), and the ranks that share the kernel's
// work on it.
TEST(PhysicsTest, TheJobsLinksCarryEveryRanksSends) {
  // Ring, 4 ranks: each sends 6 chunks of 100.
  EXPECT_EQ(Traffic(Config(Architecture::kRing, 4), 400).network_bytes, 4 * 6 * 100);
  // p2p, 4 ranks: each scatters 3 shards of 100 and gathers 3 back.
  EXPECT_EQ(Traffic(Config(Architecture::kP2p, 4), 400).network_bytes, 4 * 2 * 3 * 100);
  // Binomial tree of 3: ranks 1 and 2 send 400 up, the root 400 to each.
  EXPECT_EQ(Traffic(Config(Architecture::kMpi, 3), 400).network_bytes, 2 * 400 + 2 * 400);
  // 6 ranks fold into 4: 2 pairs swap halves (2 x 200), one hands its
  // reduced half over (200) and gets the whole result back (400); then 4
  // ranks halve and double, each sending 200 + 100 and 100 + 200. The
  // schedule the simulation plays sends the same.
  EXPECT_EQ(Traffic(Config(Architecture::kMpi, 6), 400).network_bytes, 2 * (2 * 200 + 200 + 400) + 4 * 600);
  for (int w : {5, 6, 7}) {
    double sent = 0;
    for (const auto& rounds : RabenseifnerSchedule(w, 400)) {
      for (const Round& round : rounds) {
        for (const Message& m : round.sends) sent += m.bytes;
      }
    }
    EXPECT_EQ(Traffic(Config(Architecture::kMpi, w), 400).network_bytes, sent) << w;
  }
  // ps, 3 workers and 2 servers: each worker pushes 400, gets 400 back.
  const IterationTraffic ps = Traffic(Config(Architecture::kPs, 3, 2), 400);
  EXPECT_EQ(ps.network_bytes, 3 * 2 * 400);
  EXPECT_EQ(ps.ranks, 5);
  EXPECT_EQ(Traffic(Config(Architecture::kRing, 4), 400).ranks, 4);
  // One worker alone sends nothing; one worker with a server does.
  EXPECT_EQ(Traffic(Config(Architecture::kRing, 1), 400).network_bytes, 0);
  EXPECT_EQ(Traffic(Config(Architecture::kPs, 1, 1), 400).network_bytes, 2 * 400);
}

TEST(PhysicsTest, ATransferStartsOnAnIdleLinkOncePerDirectionInSequence) {
  // The binomial tree fills the root's link inwards, then outwards; a
  // parameter server's end takes the pushes, then sends the pulls; ring,
  // Rabenseifner and p2p keep both directions busy from start to end.
  EXPECT_EQ(Traffic(Config(Architecture::kMpi, 3), 400).link_bursts, 2);
  EXPECT_EQ(Traffic(Config(Architecture::kPs, 4, 2), 400).link_bursts, 2);
  for (Architecture a : {Architecture::kRing, Architecture::kMpi, Architecture::kP2p}) {
    EXPECT_EQ(Traffic(Config(a, 5), 500).link_bursts, 1);
    EXPECT_EQ(Traffic(Config(a, 1), 500).link_bursts, 0);
  }
}

// Where one host sends the whole gradient to several at once and each
// answers it, the peer served first can answer while the others are still
// served: a single server's pulls at once (its first worker's next push,
// under the pulls to the other w - 1), and the binomial tree's root at 3
// workers (its first peer's next gradient, under the send to the other).
// Nowhere else: two peers of a root at w = 2 is one, several servers each
// send only a shard, pulls in turn and buckets have their own schedules.
TEST(PhysicsTest, ThePeerServedFirstAnswersUnderTheSendsToTheOthers) {
  const IterationTraffic one_server = Traffic(Config(Architecture::kPs, 4, 1), 400);
  EXPECT_EQ(one_server.early_reply_bytes, 400);
  EXPECT_EQ(one_server.early_window_bytes, 3 * 400);
  const IterationTraffic root = Traffic(Config(Architecture::kMpi, 3), 400);
  EXPECT_EQ(root.early_reply_bytes, 400);
  EXPECT_EQ(root.early_window_bytes, 400);
  EXPECT_EQ(Traffic(Config(Architecture::kMpi, 2), 400).early_window_bytes, 0);
  ModelConfig in_turn = Config(Architecture::kPs, 4, 1);
  in_turn.pulls_in_turn = true;
  ModelConfig buckets = Config(Architecture::kPs, 4, 1);
  buckets.overlap = true;
  ModelConfig parts = Config(Architecture::kPs, 4, 1);
  parts.partition_bytes = 100;
  for (const ModelConfig& config : {Config(Architecture::kPs, 1, 1), Config(Architecture::kPs, 4, 2), in_turn,
                                    buckets, parts, Config(Architecture::kMpi, 5), Config(Architecture::kRing, 4),
                                    Config(Architecture::kP2p, 4)}) {
    EXPECT_EQ(Traffic(config, 400).early_reply_bytes, 0) << ConfigLabel(config);
  }
}

TEST(PhysicsTest, OneWorkerExchangesNothingButStillUpdates) {
  for (Architecture a : {Architecture::kRing, Architecture::kMpi, Architecture::kP2p}) {
    const IterationTraffic t = Traffic(Config(a, 1), 400);
    EXPECT_EQ(t.link_bytes, 0);
    EXPECT_EQ(t.messages, 0);
    EXPECT_EQ(t.worker_update_bytes, 400);
  }
}

TEST(PhysicsTest, ParameterServerPushAndPullPipelineOverOverlapBuckets) {
  ModelConfig config;  // 784-128-32-10: W = 4 x 104,938 bytes
  config.architecture = Architecture::kPs;
  config.servers = 1;
  config.workers = 4;
  const double W = 4.0 * 104938;
  // Without overlap the server's link carries the 4 pushes, then the 4 pulls.
  EXPECT_DOUBLE_EQ(Traffic(config, W).link_bytes, 2 * 4 * W);
  // With 5 buckets (16 KiB) the pull of one bucket overlaps the push of the
  // next: two stages in series, so the largest bucket's share is left in
  // sequence. The buckets are not equal: fc2 and fc3 together (4,458 floats,
  // 17,832 bytes), then fc1's four row blocks of 196 x 128 floats (100,352
  // bytes), the last with fc1's 128 biases (100,864 bytes).
  config.overlap = true;
  config.bucket_bytes = 16 * 1024;
  const std::vector<GradientBucket> buckets = Buckets(config);
  ASSERT_EQ(buckets.size(), 5u);
  EXPECT_DOUBLE_EQ(buckets[0].bytes, 17832);
  EXPECT_DOUBLE_EQ(buckets[1].bytes, 100864);
  EXPECT_DOUBLE_EQ(buckets[4].bytes, 100352);
  EXPECT_DOUBLE_EQ(Traffic(config, W).link_bytes, (1 + 100864 / W) * 4 * W);
  // With 4 servers, server 0's shard (the first 104,938 bytes) is fc1's
  // first block and 4,586 bytes of the second: it answers the block only
  // once it has it from every worker, so almost its whole shard waits for
  // the other direction (1/n of the bytes said half of it).
  config.servers = 4;
  EXPECT_DOUBLE_EQ(Traffic(config, W).receiver_link_bytes, (1 + 100352 / (W / 4)) * W);
  EXPECT_DOUBLE_EQ(Traffic(config, W).sender_link_bytes, (1 + 100864 / W) * W);
  config.servers = 1;
  // One bucket: nothing to pipeline.
  config.bucket_bytes = 1 << 30;
  EXPECT_DOUBLE_EQ(Traffic(config, W).link_bytes, 2 * 4 * W);
}

TEST(PhysicsTest, ParameterServerPushAndPullPipelineOverTheParts) {
  ModelConfig config = Config(Architecture::kPs, 4, 1);
  const double W = 4.0 * 104938;
  // 64 KiB parts: 419,752 bytes in 7 equal parts, all ready at the end of
  // backward; the server returns part j while part j+1 comes in.
  config.partition_bytes = 64 * 1024;
  const std::vector<GradientBucket> parts = Buckets(config);
  ASSERT_EQ(parts.size(), 7u);
  for (const GradientBucket& part : parts) {
    EXPECT_DOUBLE_EQ(part.bytes, W / 7);
    EXPECT_EQ(part.ready_fraction, 1.0);
  }
  EXPECT_DOUBLE_EQ(Traffic(config, W).link_bytes, (1 + 1.0 / 7) * 4 * W);
  // With 2 servers, 16 KiB parts: 26, of which each server takes part in 13.
  // Its link carries 2 W each way and one of its own parts waits for the
  // other direction, not one of the 26; the workers' links, W each way,
  // pipeline over all 26 and are not the busiest.
  ModelConfig two = Config(Architecture::kPs, 4, 2);
  two.partition_bytes = 16 * 1024;
  ASSERT_EQ(Buckets(two).size(), 26u);
  EXPECT_DOUBLE_EQ(Traffic(two, W).link_bytes, (1 + 1.0 / 13) * 2 * W);
  two.workers = 1;  // now the worker's link is the busiest
  EXPECT_DOUBLE_EQ(Traffic(two, W).link_bytes, (1 + 1.0 / 26) * W);
  // With overlap the parts cut the buckets: 16 KiB buckets (17,832 bytes,
  // then four of 100,864 or 100,352) in parts of at most 16 KiB: 2 + 4 x 7.
  config.overlap = true;
  config.bucket_bytes = 16 * 1024;
  config.partition_bytes = 16 * 1024;
  const std::vector<GradientBucket> cut = Buckets(config);
  ASSERT_EQ(cut.size(), 30u);
  EXPECT_DOUBLE_EQ(cut[0].bytes, 4.0 * (330 + 4128) / 2);
  EXPECT_EQ(cut[0].ready_fraction, cut[1].ready_fraction);
  EXPECT_EQ(cut.back().ready_fraction, 1.0);
  // A partition at least as large as the gradient changes nothing.
  config.overlap = false;
  config.partition_bytes = static_cast<std::int64_t>(W);
  EXPECT_EQ(Buckets(config).size(), 1u);
}

TEST(PhysicsTest, APsBucketGoesOnlyToTheServersWhoseShardItTouches) {
  const double W = 4.0 * 104938;
  // Whole: one exchange with each of the 4 servers.
  ModelConfig config = Config(Architecture::kPs, 7, 4);
  IterationTraffic t = Traffic(config, W);
  EXPECT_EQ(t.worker_cpu_messages, 2 * 4);
  EXPECT_EQ(t.server_cpu_messages, 2 * 7);
  EXPECT_EQ(t.server_cpu_waits, 1);
  // 26 parts of 16 KiB: the shard boundaries fall inside parts 6 and 19 and
  // on the end of part 12, so a worker exchanges 28 (part, server) pairs,
  // as the trainer's counters show (28 pushes per iteration), and each
  // server 7 parts with each of the 7 workers (49 messages sent).
  config.partition_bytes = 16 * 1024;
  t = Traffic(config, W);
  EXPECT_EQ(t.worker_cpu_messages, 2 * 28);
  EXPECT_EQ(t.server_cpu_messages, 2 * 7 * 7);
  EXPECT_EQ(t.server_cpu_waits, 7);
  EXPECT_EQ(t.worker_cpu_waits, 2);  // its push and its pull, however many parts are in flight
  // Other schemes exchange every part whole: as many messages again per part.
  ModelConfig ring = Config(Architecture::kRing, 4);
  const double whole = Traffic(ring, W).worker_cpu_messages;
  ring.partition_bytes = 16 * 1024;
  EXPECT_EQ(Traffic(ring, W).worker_cpu_messages, 26 * whole);
  EXPECT_EQ(Traffic(ring, W).worker_cpu_waits, 6);
}

TEST(PhysicsTest, BucketsFollowTheTrainersSlicesFusedLastFirst) {
  ModelConfig config;  // 784-128-32-10
  EXPECT_EQ(Buckets(config).size(), 1u);  // overlap off: one bucket, ready at the end
  EXPECT_EQ(Buckets(config)[0].ready_fraction, 1.0);
  config.overlap = true;
  // Backward flops (per sample): the gradients for the layers below fc3 and
  // fc2 (320 + 4,096) and the weight gradients (320 + 4,096 + 100,352).
  const double total = 320 + 4096 + 320 + 4096 + 100352;
  // 16 KiB: fc1's 784 rows of 512 bytes go in 4 blocks of 196 rows (at least
  // 32 rows each, at most 4 blocks); fc3 + fc2 (17,832 bytes) reach 16 KiB
  // and go first; each fc1 block is a bucket, the last (with the biases) first.
  config.bucket_bytes = 16 * 1024;
  const std::vector<GradientBucket> small = Buckets(config);
  ASSERT_EQ(small.size(), 5u);
  EXPECT_EQ(small[0].bytes, 4.0 * (330 + 4128));
  EXPECT_NEAR(small[0].ready_fraction, (320.0 + 320 + 4096 + 4096) / total, 1e-12);
  EXPECT_EQ(small[1].bytes, 4.0 * (196 * 128 + 128));
  EXPECT_NEAR(small[1].ready_fraction, (8832.0 + 196 * 128) / total, 1e-12);
  for (std::size_t b = 2; b < 5; ++b) EXPECT_EQ(small[b].bytes, 4.0 * 196 * 128);
  EXPECT_EQ(small[4].ready_fraction, 1.0);
  // 64 KiB: fc3 + fc2 wait for fc1's last block; then the other three blocks.
  config.bucket_bytes = 64 * 1024;
  const std::vector<GradientBucket> large = Buckets(config);
  ASSERT_EQ(large.size(), 4u);
  EXPECT_EQ(large[0].bytes, 4.0 * (330 + 4128 + 196 * 128 + 128));
  // 128 KiB: fc1 in 3 blocks (784 / 256 rows), the last with fc3 and fc2.
  config.bucket_bytes = 128 * 1024;
  const std::vector<GradientBucket> three = Buckets(config);
  ASSERT_EQ(three.size(), 3u);
  double bytes = 0;
  for (const GradientBucket& bucket : three) bytes += bucket.bytes;
  EXPECT_EQ(bytes, 4.0 * (330 + 4128 + 100480));
  // Beyond the whole gradient: one bucket, ready at the end.
  config.bucket_bytes = 1 << 30;
  ASSERT_EQ(Buckets(config).size(), 1u);
  EXPECT_EQ(Buckets(config)[0].ready_fraction, 1.0);
}

}  // namespace
}  // namespace dmlbench
