#include "orchestrator/model/physics.h"

#include <algorithm>
#include <cmath>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/model/link_simulation.h"

namespace dmlbench {

std::vector<int> LayerWidths(const ModelConfig& config) {
  std::vector<int> widths = {kInputFeatures};
  widths.insert(widths.end(), config.hidden.begin(), config.hidden.end());
  widths.push_back(kClassCount);
  return widths;
}

std::int64_t ParameterCount(const ModelConfig& config) {
  const std::vector<int> widths = LayerWidths(config);
  std::int64_t count = 0;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    count += static_cast<std::int64_t>(widths[l]) * widths[l + 1] + widths[l + 1];
  }
  return count;
}

std::int64_t IterationsPerEpoch(const ModelConfig& config) {
  const std::int64_t iterations = config.train_samples / (static_cast<std::int64_t>(config.batch_size) * config.workers);
  return config.max_iterations_per_epoch > 0 ? std::min(iterations, config.max_iterations_per_epoch) : iterations;
}

namespace {

// Every bucket larger than partition_bytes in the fewest equal parts of at
// most that size, ready with it (trainer/bucketed_exchange.h PlanBuckets).
std::vector<GradientBucket> Partitioned(const std::vector<GradientBucket>& buckets, std::int64_t partition_bytes) {
  if (partition_bytes <= 0) return buckets;
  const double partition_floats = std::max<double>(1, std::floor(static_cast<double>(partition_bytes) / 4));
  std::vector<GradientBucket> parts;
  for (const GradientBucket& bucket : buckets) {
    const double n = std::ceil(bucket.bytes / 4 / partition_floats);
    for (double i = 0; i < n; ++i) parts.push_back(GradientBucket{bucket.bytes / n, bucket.ready_fraction});
  }
  return parts;
}

// The parts of each server's shard, bucket by bucket, as the trainer pairs
// them (trainer/parameter_server.cc): a bucket goes to every server whose
// shard it touches. Buckets tile the buffer from its end in order; shards
// split it in k equal runs.
struct ShardParts {
  double count = 0;    // parts of at least a float (4 bytes)
  double largest_share = 0;  // the largest, as a share of the shard's bytes
};
std::vector<ShardParts> PartsPerServer(const std::vector<GradientBucket>& buckets, int servers) {
  double total = 0;
  for (const GradientBucket& bucket : buckets) total += bucket.bytes;
  std::vector<ShardParts> parts(static_cast<std::size_t>(std::max(servers, 1)));
  double end = total;
  for (const GradientBucket& bucket : buckets) {
    const double begin = end - bucket.bytes;
    for (std::size_t s = 0; s < parts.size(); ++s) {
      const double shard_begin = total * static_cast<double>(s) / static_cast<double>(parts.size());
      const double shard_end = total * static_cast<double>(s + 1) / static_cast<double>(parts.size());
      const double common = std::min(end, shard_end) - std::max(begin, shard_begin);
      if (common >= 4) {
        parts[s].count += 1;
        parts[s].largest_share = std::max(parts[s].largest_share, common / (shard_end - shard_begin));
      }
    }
    end = begin;
  }
  return parts;
}

// One worker exchanges nothing: SGD on its own gradient.
IterationTraffic OneWorkerTraffic(double gradient_bytes) {
  IterationTraffic t;
  t.worker_update_bytes = gradient_bytes;
  return t;
}

// A single server's pulls in turn (PullsInTurnApplies), on top of `t`, the
// traffic of pulls at once. Take the moment a the last push is in: the
// server's w pulls of W leave one after another and the last ends at
// a + w W/B; that worker computes and pushes W, and only then can the
// server answer again: (w + 1) W through its link in sequence, against
// 2 w W when it answers all at once (bench/BOUNDS.md derives it as the
// floor of any whole-shard schedule). Between two pulls the worker's match
// goes back to the server (MPI_Issend): a latency each, and a wait the
// server sleeps through (Traffic counts those).
void AddPullsInTurn(double w, double W, IterationTraffic& t) {
  t.receiver_link_bytes = (w + 1) * W;
  t.link_bytes = std::max(t.sender_link_bytes, t.receiver_link_bytes);
  // Of these, only the first pull starts on an idle direction of the link,
  // with a full token bucket: the server's out has been idle since the last
  // pull, through the last worker's compute and push. Each later pull
  // follows its acknowledgement at once, and the last push comes in right
  // behind the push of the worker served before, which began one pull
  // earlier and so ends about when the last pull does. One burst, not the
  // two of pulls at once. One worker pulls, computes and pushes alone: two.
  if (w > 1) t.link_bursts = 1;
  t.latency_steps += w - 1;
  t.messages += w;  // the acknowledgements
}

// ps(k): push then pull; each a message per server from each worker.
// `worker_largest`, `server_largest`: as ExchangeTraffic's.
IterationTraffic PsTraffic(const ModelConfig& config, double gradient_bytes, double worker_largest,
                           double server_largest) {
  const double w = config.workers;
  const double W = gradient_bytes;
  const double k = config.servers;
  IterationTraffic t;
  t.latency_steps = 2;
  t.messages = 2 * (k + w);
  // The busiest link carries its pushes, then its pulls. In buckets
  // (overlap, parts) they pipeline: a server answers bucket j while bucket
  // j+1 comes in, two stages in series with the same bytes per bucket, so
  // an end's in and out take its bytes plus its largest bucket's (the flow
  // shop's makespan: sum plus the largest job). At a worker the largest
  // bucket, at a server the largest part it answers: the buckets are far
  // from equal (with overlap the first layer's four blocks of 100 KB are
  // 95 % of the only part a 4-server shard of 105 KB has), so 1/n of the
  // bytes would miss them.
  t.sender_link_bytes = (1 + worker_largest) * W;  // a worker's
  t.receiver_link_bytes = (1 + server_largest) * w * W / k;  // a server's
  t.link_bytes = std::max(t.sender_link_bytes, t.receiver_link_bytes);
  t.ends_shared = w > 1 && k > 1;
  t.link_bursts = 2;  // the pushes into the busiest end, then the pulls out of it
  t.reduce_bytes = (w - 1) * W / k;
  t.server_update_bytes = W / k;
  t.worker_cpu_bytes = 2 * W;
  t.server_cpu_bytes = 2 * w * W / k + (w - 1) * W / k;
  if (k == 1 && w > 1 && !config.pulls_in_turn && !config.overlap && config.partition_bytes == 0) {
    t.early_reply_bytes = W;
    t.early_window_bytes = (w - 1) * W;
  }
  if (config.pulls_in_turn) AddPullsInTurn(w, W, t);
  return t;
}

// p2p, w > 1: scatter and gather, w-1 messages of W/w each way, posted together.
IterationTraffic P2pTraffic(double w, double W) {
  IterationTraffic t;
  t.latency_steps = 2;
  t.messages = 2 * (w - 1);
  t.link_bytes = 2 * (w - 1) * W / w;
  t.link_bursts = 1;
  t.sender_link_bytes = t.receiver_link_bytes = t.link_bytes;
  t.ends_shared = w > 2;  // w - 1 flows out of each worker, w - 1 into each
  t.reduce_bytes = (w - 1) * W / w;
  t.worker_update_bytes = W / w;
  t.worker_cpu_bytes = 2 * t.link_bytes + t.reduce_bytes;
  t.worker_cpu_messages = 2 * t.messages;
  return t;
}

// mpi below 4 ranks, libnbc's binomial tree: ceil(log2 w) rounds up with the
// whole gradient, reduced at each, then the root sends it down.
IterationTraffic BinomialTreeTraffic(double w, double W) {
  IterationTraffic t;
  const double rounds = std::ceil(std::log2(w));
  t.latency_steps = 2 * rounds;
  t.messages = 2 * rounds;
  t.link_bytes = 2 * rounds * W;
  t.link_bursts = 2;  // up into the root, then down out of it
  t.early_reply_bytes = W;
  t.early_window_bytes = (rounds - 1) * W;  // the root sends to `rounds` peers at once
  t.reduce_bytes = rounds * W;
  t.worker_update_bytes = W;
  t.worker_cpu_bytes = t.link_bytes + t.reduce_bytes;  // the root receives, then sends
  t.worker_cpu_messages = t.messages;
  return t;
}

// mpi from 4 ranks, libnbc's Rabenseifner (reduce-scatter by recursive
// halving, then allgather by recursive doubling) over the largest power of
// two p <= w: log2 p steps each way, (p-1)/p W per direction. `folded`
// (w > p): w - p pairs fold first: the two swap halves, the odd one hands
// its reduced half to the even one, and gets the whole result back at the
// end (link_simulation.h RabenseifnerSchedule); two more steps.
IterationTraffic HalvingDoublingTraffic(const ModelConfig& config, double W, bool folded) {
  const double w = config.workers;
  IterationTraffic t;
  const double p = std::exp2(std::floor(std::log2(w)));
  const double steps = std::log2(p);
  t.latency_steps = 2 * steps + (folded ? 2 : 0);
  t.messages = t.latency_steps;
  t.link_bytes = 2 * (p - 1) / p * W;
  t.link_bursts = 1;
  if (folded) {
    // The phases one after another are 3.5 W, but they do not run one
    // after another: the ranks beyond the fold start halving at once and
    // send into the fold's receivers while those still fold, and the rest
    // of the halving waits on them. Played over the links
    // (link_simulation.h), 5 and 7 ranks keep 4.25 W in sequence, 6 ranks
    // 3.75 W; on 8 uncapped hosts at 100 Mbit/s, packet captures found
    // whole iterations of 4.1-4.2, 3.9-4.8 and 4.8-5.3 W/B
    // (bench/cluster/bench_mpi_phases.sh). The simulation starts each link with a
    // full token bucket and counts its bursts; the one burst that
    // PacedBytes takes off is added back.
    const double burst = config.network.bandwidth_bits_per_s > 0 ? LinkBurstBytes(config.network.bandwidth_bits_per_s) : 0;
    t.link_bytes = RabenseifnerBytes(config.workers, W, burst) + burst;
    // On the links in all: the halving over p ranks, and each folding pair
    // 2.5 W (halves swapped, a half handed over, the whole result back).
    t.network_bytes = 2 * (p - 1) * W + 2.5 * (w - p) * W;
  }
  t.reduce_bytes = (p - 1) / p * W + (folded ? W / 2 : 0);
  t.worker_update_bytes = W;
  // Halving and doubling send and receive at once. The busiest rank is a
  // fold's even one: it also sends W/2 and then the whole W, and receives
  // W/2 twice.
  t.worker_cpu_bytes = 4 * (p - 1) / p * W + (folded ? 2.5 * W : 0) + t.reduce_bytes;
  t.worker_cpu_messages = 4 * steps + (folded ? 4 : 0);
  return t;
}

// ring, w > 1: 2(w-1) steps of W/w to the right neighbour.
IterationTraffic RingTraffic(double w, double W) {
  IterationTraffic t;
  t.latency_steps = 2 * (w - 1);
  t.messages = 2 * (w - 1);
  t.link_bytes = 2 * (w - 1) * W / w;
  t.link_bursts = 1;
  t.reduce_bytes = (w - 1) * W / w;
  t.worker_update_bytes = W;
  t.worker_cpu_bytes = 2 * t.link_bytes + t.reduce_bytes;  // each step sends and receives
  t.worker_cpu_messages = 2 * t.messages;
  return t;
}

// Traffic with the CPU messages of one exchange and no waits: Traffic counts
// those over the buckets (a ps server's, and a ps worker's messages, by the
// shards each bucket touches). `worker_largest`: the largest bucket's share
// of the gradient; `server_largest`: the largest part a server answers, as a
// share of its shard (the largest over the servers). Over them a parameter
// server's link pipelines.
IterationTraffic ExchangeTraffic(const ModelConfig& config, double gradient_bytes, double worker_largest,
                                 double server_largest) {
  const double w = config.workers;
  const double W = gradient_bytes;
  switch (config.architecture) {
    case Architecture::kPs:
      return PsTraffic(config, W, worker_largest, server_largest);
    case Architecture::kP2p:
      if (config.workers == 1) break;
      return P2pTraffic(w, W);
    case Architecture::kMpi:
      switch (MpiAllreduceFor(config.workers)) {
        case MpiAllreduce::kNone:
          break;
        case MpiAllreduce::kBinomialTree:
          return BinomialTreeTraffic(w, W);
        case MpiAllreduce::kHalvingDoubling:
          return HalvingDoublingTraffic(config, W, false);
        case MpiAllreduce::kHalvingDoublingFolded:
          return HalvingDoublingTraffic(config, W, true);
      }
      break;
    case Architecture::kRing:
      if (config.workers == 1) break;
      return RingTraffic(w, W);
  }
  return OneWorkerTraffic(W);
}

}  // namespace

IterationTraffic Traffic(const ModelConfig& config, double gradient_bytes) {
  const std::vector<GradientBucket> buckets = Buckets(config);
  const double n = static_cast<double>(buckets.size());
  // A ps worker exchanges each bucket with the servers whose shards it
  // touches; the busiest server takes part in `busiest` of them.
  const std::vector<ShardParts> parts = PartsPerServer(buckets, config.servers);
  double busiest = 0, all = 0, largest_part = 0;
  for (const ShardParts& shard : parts) {
    busiest = std::max(busiest, shard.count);
    all += shard.count;
    largest_part = std::max(largest_part, shard.largest_share);
  }
  double total = 0, largest_bucket = 0;
  for (const GradientBucket& bucket : buckets) {
    total += bucket.bytes;
    largest_bucket = std::max(largest_bucket, bucket.bytes);
  }
  IterationTraffic t = ExchangeTraffic(config, gradient_bytes, largest_bucket / total, largest_part);
  t.worker_cpu_waits = t.latency_steps;  // a worker sleeps through each dependent step
  // Every rank's sends together, where ExchangeTraffic has not counted
  // them (MPI's fold). Ring: w ranks x 2 (w-1) steps of W/w. p2p: w x
  // (w-1) shards of W/w out in the scatter, as many in the gather.
  // Binomial tree: w - 1 sends of W up, w - 1 down. Halving and doubling
  // over a power of two: w x 2 (w-1)/w W. These are all 2 (w-1) W. ps:
  // each worker pushes W, and the servers send it W back.
  const double w = config.workers, W = gradient_bytes;
  const bool ps = config.architecture == Architecture::kPs;
  t.ranks = ps ? w + config.servers : w;
  if (t.network_bytes == 0) t.network_bytes = ps ? 2 * w * W : 2 * (w - 1) * W;
  // Every bucket (overlap) and part (partition_bytes) is an exchange of its
  // own, with its messages; a worker's waits are not: it polls all of them at
  // once. The busiest server wakes for the pushes of each of its buckets.
  if (config.architecture == Architecture::kPs) {
    t.worker_cpu_messages = 2 * all;  // push and pull of each pair
    t.server_cpu_messages = 2 * config.workers * busiest;
    t.server_cpu_waits = busiest;
    if (config.pulls_in_turn) {
      // Each pull's acknowledgement: sent by its worker, received by the
      // server, which waits for it before the next pull. A worker still
      // waits twice (its push, its pull), however long it stands in line.
      t.worker_cpu_waits -= w - 1;
      t.worker_cpu_messages += 1;
      t.server_cpu_messages += w;
      t.server_cpu_waits += w - 1;
    }
  } else {
    t.worker_cpu_messages *= n;
  }
  return t;
}

std::vector<GradientBucket> Buckets(const ModelConfig& config) {
  const std::vector<int> widths = LayerWidths(config);
  const std::size_t layers = widths.size() - 1;
  double all_bytes = 0;
  for (std::size_t l = 0; l < layers; ++l) {
    all_bytes += 4.0 * (static_cast<double>(widths[l]) * widths[l + 1] + widths[l + 1]);
  }
  if (!config.overlap) return Partitioned({GradientBucket{all_bytes, 1.0}}, config.partition_bytes);

  // The slices, in buffer order, and the backward flops done when each is
  // ready. Backward takes the layers from the last; in each it first forms
  // the gradient for the layer below (inputs x outputs multiply-adds per
  // sample; not for the first layer), then the weight gradient's row blocks,
  // the last block first, rows x outputs each.
  struct Slice {
    double bytes = 0, ready_flops = 0;
  };
  std::vector<std::vector<Slice>> by_layer(layers);
  double flops = 0;
  for (std::size_t l = layers; l-- > 0;) {
    const std::size_t rows = static_cast<std::size_t>(widths[l]);
    const std::size_t outputs = static_cast<std::size_t>(widths[l + 1]);
    if (l > 0) flops += static_cast<double>(rows) * outputs;
    const std::size_t row_bytes = 4 * outputs;
    const std::size_t min_rows = std::max<std::size_t>(1, (config.bucket_bytes + row_bytes - 1) / row_bytes);
    const std::size_t blocks = std::clamp<std::size_t>(rows / min_rows, 1, kMaxSlicesPerLayer);
    by_layer[l].resize(blocks);
    for (std::size_t b = blocks; b-- > 0;) {
      const std::size_t block_rows = rows * (b + 1) / blocks - rows * b / blocks;
      flops += static_cast<double>(block_rows) * outputs;
      by_layer[l][b] = Slice{4.0 * (static_cast<double>(block_rows) * outputs + (b + 1 == blocks ? outputs : 0)),
                             flops};
    }
  }
  std::vector<Slice> slices;
  for (const std::vector<Slice>& layer : by_layer) slices.insert(slices.end(), layer.begin(), layer.end());

  // Fused from the end of the buffer until a bucket holds bucket_bytes; the
  // first slice closes the last bucket. A bucket is ready with its lowest slice.
  std::vector<GradientBucket> buckets;
  double pending = 0;
  for (std::size_t s = slices.size(); s-- > 0;) {
    pending += slices[s].bytes;
    if (pending >= static_cast<double>(config.bucket_bytes) || s == 0) {
      buckets.push_back(GradientBucket{pending, slices[s].ready_flops / flops});
      pending = 0;
    }
  }
  return Partitioned(buckets, config.partition_bytes);
}

MpiAllreduce MpiAllreduceFor(int workers) {
  if (workers <= 1) return MpiAllreduce::kNone;
  if (workers < 4) return MpiAllreduce::kBinomialTree;
  return (workers & (workers - 1)) == 0 ? MpiAllreduce::kHalvingDoubling : MpiAllreduce::kHalvingDoublingFolded;
}

std::string_view Text(MpiAllreduce algorithm) {
  switch (algorithm) {
    case MpiAllreduce::kNone:
      return "none";
    case MpiAllreduce::kBinomialTree:
      return "binomial tree";
    case MpiAllreduce::kHalvingDoubling:
      return "halving and doubling";
    case MpiAllreduce::kHalvingDoublingFolded:
      return "halving and doubling with a fold";
  }
  return "unknown";
}

std::string ArchitectureLabel(const ModelConfig& config) {
  return ArchitectureLabel(config.architecture, config.servers);
}

std::string SchemeLabel(const ModelConfig& config) {
  return ArchitectureLabel(config) + (config.pulls_in_turn ? " pulls-in-turn" : "");
}

std::string ConfigLabel(const ModelConfig& config) {
  std::string label = ArchitectureLabel(config);
  label += " w=" + std::to_string(config.workers) + " b=" + std::to_string(config.batch_size);
  if (config.overlap) label += " overlap";
  if (config.pulls_in_turn) label += " pulls-in-turn";
  return label;
}

}  // namespace dmlbench
