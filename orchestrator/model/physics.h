// Physics: what one training iteration of a configuration does, counted from
// the protocols themselves (DESIGN.md section 1; trainer/ has one file per
// scheme): the model's size, iterations per epoch, and per iteration on the
// critical path — message latencies in sequence, messages handled, bytes
// through the busiest link, gradient bytes reduced, parameters updated.
// Every model (models.h) is built on these counts; nothing here is fitted.
// Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_PHYSICS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_PHYSICS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/enums.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// Fashion-MNIST (and MNIST): 28x28 inputs, 10 classes, 60,000 training images.
inline constexpr int kInputFeatures = 784;
inline constexpr int kClassCount = 10;
inline constexpr std::int64_t kFashionMnistTrainSamples = 60000;

// A configuration to predict: a run's parameters (those that change its
// time are the architecture, w, k, b, overlap and its buckets and parts,
// pulls in turn, the hidden widths, the iteration cap and the network
// profile's bandwidth and latency; the others ride along unused) and what
// the model needs beyond them — the training set's size and the hosts' CPU
// share, which the run_start event and the hosts table record.
struct ModelConfig : RunParams {
  std::int64_t train_samples = kFashionMnistTrainSamples;  // n
  double cpu_cores = 0;                         // CPU share of each host; 0 = uncapped
};

// Layer widths from input to output: 784, hidden..., 10.
std::vector<int> LayerWidths(const ModelConfig& config);
// Trainable parameters P (weights and biases); the gradient is W = 4 P bytes.
std::int64_t ParameterCount(const ModelConfig& config);
// I = floor(n / (b w)), capped by max_iterations_per_epoch.
std::int64_t IterationsPerEpoch(const ModelConfig& config);

// Per iteration, on the critical path of the slowest worker.
struct IterationTraffic {
  double latency_steps = 0;        // message latencies paid one after another (x alpha)
  double messages = 0;             // messages posted or handled in sequence (x per-message software cost)
  double link_bytes = 0;           // bytes through the busiest link, one direction after the other (/ B)
  // The two links every transfer crosses, the sender's and the receiver's,
  // in the same units (link_bytes is the larger): ps a worker's (W to and
  // from the k servers) and a server's (its shard from and to every worker),
  // p2p a worker's and its peer's. `ends_shared`: each of the two carries
  // several flows at once (ps with w > 1 and k > 1, p2p with w > 2), so
  // that neither alone paces them.
  double sender_link_bytes = 0;
  double receiver_link_bytes = 0;
  bool ends_shared = false;
  double link_bursts = 0;          // transfers in sequence that start on an idle link direction
  // One host sends the whole gradient to several at once (a single ps
  // server's pulls; the binomial tree's root, w = 3), and each peer's next
  // message goes back to it: the peer served first may send its reply
  // while the others are still being served. Its reply's bytes, and the
  // bytes still being sent to the others after it: what it can hide under.
  double early_reply_bytes = 0;
  double early_window_bytes = 0;
  double reduce_bytes = 0;         // gradient bytes summed in sequence
  double worker_update_bytes = 0;  // parameters updated by each worker (SGD), bytes
  double server_update_bytes = 0;  // parameters updated by a server on the critical path, bytes
  // CPU work of the busiest worker and of the busiest server (ps only), per
  // iteration, over all its buckets: bytes through its network stack (sent
  // plus received, plus bytes summed), messages it sends or receives (each
  // bucket, or part, its own; a ps bucket only to the servers whose shard it
  // touches), and the waits it sleeps through (each wakes it and polls the
  // progress engine): a worker waits for each dependent step
  // (latency_steps) whatever the buckets, a server once for the pushes of
  // each of its buckets, which arrive together. Under a CPU quota this work,
  // not the wire, can set the pace.
  double worker_cpu_bytes = 0;
  double worker_cpu_messages = 0;
  double worker_cpu_waits = 0;
  double server_cpu_bytes = 0;
  double server_cpu_messages = 0;
  double server_cpu_waits = 0;
  // What the job's links carry in all per iteration: the bytes every rank
  // sends, together (the allreduces 2 (w-1) W whatever the pattern, but
  // MPI's fold 2.5 W per folding pair; ps 2 w W), and the job's ranks
  // (ps: w + k). On the emulated cluster the
  // kernel moves every host's packets (token buckets, bridge, veths, TCP
  // receive) in deferred work that runs on whichever rank is on a CPU at
  // the time, and charges it to that rank (DESIGN.md section 4), so each
  // rank pays about network_bytes / ranks of it, not its own traffic.
  double network_bytes = 0;
  double ranks = 1;
};

// The exchange of `gradient_bytes` in the configuration's scheme:
//   ring     2(w-1) steps of W/w to the right neighbour (reduce-scatter, allgather);
//   mpi      Open MPI 4.1's MPI_Iallreduce (libnbc, coll_libnbc_iallreduce_
//            algorithm 0): a binomial tree for w < 4 (reduce up, broadcast
//            down) moving the whole W 2 ceil(log2 w) times; Rabenseifner for
//            w >= 4 (messages above 64 KiB): 2 (p-1)/p W over 2 log2 p steps
//            for the largest power of two p <= w, plus 2 steps when w > p
//            (the ranks beyond p fold into partners first), and then the
//            bytes in sequence are the schedule's played over the links
//            (link_simulation.h): 4.25 W at 5 and 7 ranks, 3.75 W at 6;
//   p2p      scatter then gather, each w-1 messages of W/w per worker, concurrent;
//   ps(k)    push W (k messages of W/k), pull W; a server's link carries w W/k
//            each way, so the busiest link moves max(W, w W/k) per direction,
//            the pull after the push; with pulls in turn (1 server, whole)
//            the server sends W to one worker after another, each send
//            acknowledged before the next, and the worker served first
//            computes and pushes while the others are served: in sequence
//            are the w pulls and the last worker's push, (w + 1) W, and the
//            w - 1 acknowledgements between the pulls; in buckets (overlap, or partitioned)
//            the two directions pipeline, and what is in sequence is
//            max(W + the largest bucket, w W/k + w x the largest part a
//            server answers) (a two-stage flow shop: the sum plus the
//            largest job; with n equal buckets (1 + 1/n) W).
// One worker (w = 1) exchanges nothing, except under ps.
IterationTraffic Traffic(const ModelConfig& config, double gradient_bytes);

// Backward time share and gradient bytes of each overlap bucket, in the
// order the trainer exchanges them. As the trainer does (Mlp::SliceGradients,
// PlanBuckets): each layer's weight gradient is cut into n row blocks of at
// least bucket_bytes, n = clamp(rows / ceil(bucket_bytes / row bytes), 1,
// kMaxSlicesPerLayer), the last block carrying the biases; the slices are
// fused from the last one until a bucket holds bucket_bytes. Without
// overlap: one bucket holding everything, ready at the end of backward.
// With partition_bytes > 0, every bucket larger than that is then cut into
// the fewest equal parts of at most that size, ready with it. The trainer's
// plan is the other implementation of these rules; BucketPlanTest holds the
// two side by side across layer widths, bucket and partition sizes.
inline constexpr std::size_t kMaxSlicesPerLayer = 4;  // trainer/mlp.h
struct GradientBucket {
  double bytes = 0;
  double ready_fraction = 0;  // of the backward pass done when the bucket is ready
};
std::vector<GradientBucket> Buckets(const ModelConfig& config);

// Open MPI 4.1's non-blocking allreduce (libnbc) for w ranks and a gradient
// above 64 KiB, out of place: a binomial tree below 4 ranks, Rabenseifner's
// halving and doubling above, with the ranks beyond the largest power of
// two folded into partners first. Traffic counts each.
enum class MpiAllreduce { kNone, kBinomialTree, kHalvingDoubling, kHalvingDoublingFolded };
MpiAllreduce MpiAllreduceFor(int workers);
// "none", "binomial tree", "halving and doubling", "halving and doubling with a fold".
std::string_view Text(MpiAllreduce algorithm);

// The architecture as results are grouped by it: "ring", "ps k=2", ...
std::string ArchitectureLabel(const ModelConfig& config);
// The scheme as errors are summarised by it: the architecture, and a single
// server's pulls in turn apart from those at once ("ps k=1 pulls-in-turn"),
// which the wire factor is fitted by.
std::string SchemeLabel(const ModelConfig& config);
// The same with "w=4 b=100" (and "overlap") for labels.
std::string ConfigLabel(const ModelConfig& config);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_PHYSICS_H_
