#include "trainer/parameter_server.h"

#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "trainer/bucketed_exchange.h"
#include "trainer/poll.h"
#include "trainer/timeline.h"

namespace dmlbench {
namespace {

// Server s owns shard s of k: balanced in floats, hence in bytes.
Slice Shard(std::size_t parameters, int servers, int server) {
  return SplitPart(Slice{0, parameters}, servers, server);
}

// The server a bucket is for: the last whose shard it touches.
std::size_t ServerOf(const Bucket& bucket, std::size_t parameters, int servers) {
  std::size_t server = 0;
  for (int s = 0; s < servers; ++s) {
    if (Intersect(bucket.slice, Shard(parameters, servers, s)).count > 0) {
      server = static_cast<std::size_t>(s);
    }
  }
  return server;
}

// A worker's push and pull of one bucket: to every server whose shard the
// bucket touches, the gradient part goes out and the new parameters come back.
class PushPull : public BucketExchange {
 public:
  struct Part {
    int server_rank;
    Slice slice;
  };

  PushPull(Comm* comm, std::vector<Part> parts, std::span<const float> grads,
           std::span<float> model_inbox, int tag, Timeline* timeline, int track)
      : parts_(std::move(parts)), grads_(grads), model_inbox_(model_inbox), tag_(tag),
        timeline_(timeline), track_(track), pushes_(comm), pulls_(comm) {}

  void Start() override {
    if (timeline_) posted_us_ = timeline_->NowUs();
    for (const Part& part : parts_) {
      // Pull: post the receive of the new parameters first, then push.
      pulls_.Receive(model_inbox_.subspan(part.slice.offset, part.slice.count), part.server_rank,
                     tag_);
      pushes_.Send(grads_.subspan(part.slice.offset, part.slice.count), part.server_rank, tag_);
    }
    pushed_ = false;
    done_ = false;
  }

  Progress Advance() override {
    if (done_) return Progress::kDone;
    Progress progress = Progress::kIdle;
    if (!pushed_ && pushes_.Test()) {
      // Push: every server has our gradient part.
      pushed_ = true;
      progress = Progress::kAdvanced;
      if (timeline_) {
        pushed_us_ = timeline_->NowUs();
        timeline_->Span("ps.push", "comm", posted_us_, pushed_us_, track_);
      }
    }
    if (pushed_ && pulls_.Test()) {
      // Pull: the updated parameters of the whole bucket are here.
      done_ = true;
      if (timeline_) timeline_->Span("ps.pull", "comm", pushed_us_, timeline_->NowUs(), track_);
      return Progress::kDone;
    }
    return progress;
  }

 private:
  const std::vector<Part> parts_;
  const std::span<const float> grads_;
  const std::span<float> model_inbox_;
  const int tag_;
  Timeline* const timeline_;
  const int track_;
  Requests pushes_;
  Requests pulls_;
  bool pushed_ = false;
  bool done_ = true;
  double posted_us_ = 0;
  double pushed_us_ = 0;
};

class ParameterServerWorker : public BucketedExchange {
 public:
  ParameterServerWorker(const ExchangeOptions& options, std::span<float> params,
                        std::span<float> grads, Timeline* timeline)
      : BucketedExchange(options, params, grads, timeline, options.servers),
        model_inbox_(params.size()) {
    std::vector<std::unique_ptr<BucketExchange>> push_pulls;
    std::vector<std::size_t> lanes;
    const std::vector<std::size_t> order = PushOrder(buckets_, params.size(), options.servers);
    for (std::size_t b : order) {
      lanes.push_back(ServerOf(buckets_[b], params.size(), options.servers));
      std::vector<PushPull::Part> parts;
      for (int s = 0; s < options.servers; ++s) {
        const Slice part = Intersect(buckets_[b].slice, Shard(params.size(), options.servers, s));
        if (part.count > 0) parts.push_back(PushPull::Part{workers() + s, part});
      }
      // The tag names the bucket, as the servers know it, whatever the order.
      push_pulls.push_back(std::make_unique<PushPull>(&comm_, std::move(parts), grads_,
                                                      model_inbox_, static_cast<int>(b),
                                                      timeline_, Track(b)));
    }
    SetBucketExchanges(std::move(push_pulls), order);
    // In parts, two per server in flight (kPartsInFlightPerServer).
    if (options.partition_bytes > 0) LimitInFlight(std::move(lanes), kPartsInFlightPerServer);
  }

 private:
  // The servers applied SGD; the new model only needs to be taken in.
  void Install(Slice slice) override {
    ScopedSpan install(timeline_, "ps.install", "compute");
    std::copy_n(model_inbox_.begin() + std::ptrdiff_t(slice.offset), slice.count,
                params_.begin() + std::ptrdiff_t(slice.offset));
  }

  std::vector<float> model_inbox_;  // the pulled model, installed after backward
};

class ParameterServer : public Exchange {
 public:
  ParameterServer(const ExchangeOptions& options, std::span<float> params, Timeline* timeline)
      : options_(options),
        workers_(comm_.size() - options.servers),
        shard_(Shard(params.size(), options.servers, comm_.rank() - workers_)),
        params_(params),
        timeline_(timeline && timeline->enabled() ? timeline : nullptr),
        inboxes_(workers_, std::vector<float>(shard_.count)) {
    const std::vector<Bucket> buckets =
        PlanBuckets(options.slices, options.overlap, options.bucket_bytes,
                    options.partition_bytes);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const Slice part = Intersect(buckets[b].slice, shard_);
      if (part.count > 0) {
        parts_.push_back(std::make_unique<BucketPart>(&comm_, static_cast<int>(b), part));
      }
    }
  }

  Role role() const override { return Role::kServer; }
  int worker_index() const override { return -1; }
  int workers() const override { return workers_; }

  void BeginIteration() override { ThrowNotAWorker(); }
  void SliceReady(int) override { ThrowNotAWorker(); }
  void FinishIteration() override { ThrowNotAWorker(); }
  void FinishBackward() override { ThrowNotAWorker(); }
  void AwaitSlice(int) override { ThrowNotAWorker(); }
  void CompleteIteration() override { ThrowNotAWorker(); }

  void Serve(std::int64_t iterations) override {
    const double start_s = MonotonicSeconds();
    const Traffic before = comm_.traffic();
    stats_ = ExchangeStats{};
    for (std::int64_t i = 0; i < iterations; ++i) {
      for (auto& part : parts_) ReceivePushes(*part);
      ScopedSpan wait(timeline_, "exchange.wait", "wait");
      PollUntil([this] { return AdvanceParts(); }, &stats_.wait_s);
    }
    stats_.comm_s = MonotonicSeconds() - start_s;
    stats_.exchange_s = stats_.comm_s - stats_.update_s;
    stats_.exposed_comm_s = stats_.wait_s;
    const Traffic& now = comm_.traffic();
    stats_.bytes_sent = now.bytes_sent - before.bytes_sent;
    stats_.bytes_received = now.bytes_received - before.bytes_received;
    stats_.messages_sent = now.messages_sent - before.messages_sent;
  }

  ExchangeStats LastStats() const override { return stats_; }

 private:
  // This server's part of one bucket and the requests in flight for it.
  struct BucketPart {
    BucketPart(Comm* comm, int bucket_tag, Slice part_slice)
        : tag(bucket_tag), slice(part_slice), pushes(comm), pulls(comm) {}
    enum class Phase { kReceiving, kSending, kDone };
    const int tag;
    const Slice slice;
    Requests pushes;
    Requests pulls;
    Phase phase = Phase::kDone;
    double posted_us = 0;
    int next_pull = 0;  // pulls in turn: the next worker to send the new part to
  };

  [[noreturn]] void ThrowNotAWorker() const {
    throw std::logic_error("rank " + std::to_string(comm_.rank()) +
                           " is a parameter server: it serves, it does not train");
  }

  std::span<float> Inbox(int worker, Slice slice) {
    return std::span<float>(inboxes_[worker]).subspan(slice.offset - shard_.offset, slice.count);
  }

  void ReceivePushes(BucketPart& part) {
    if (timeline_) part.posted_us = timeline_->NowUs();
    // Every worker's gradient part lands in that worker's inbox.
    for (int w = 0; w < workers_; ++w) part.pushes.Receive(Inbox(w, part.slice), w, part.tag);
    part.phase = BucketPart::Phase::kReceiving;
  }

  Progress AdvanceParts() {
    bool advanced = false;
    bool all_done = true;
    for (auto& part : parts_) {
      if (part->phase == BucketPart::Phase::kReceiving && part->pushes.Test()) {
        if (timeline_) {
          timeline_->Span("ps.receive", "comm", part->posted_us, timeline_->NowUs(), Track(*part));
        }
        ReduceAndUpdate(*part);
        SendModel(*part);
        advanced = true;
      }
      if (part->phase == BucketPart::Phase::kSending && part->pulls.Test()) {
        if (part->next_pull < workers_) {  // pulls in turn: the next worker's
          part->pulls.SendAcknowledged(NewValues(*part), part->next_pull++, part->tag);
        } else {
          if (timeline_) {
            timeline_->Span("ps.send", "comm", part->posted_us, timeline_->NowUs(), Track(*part));
          }
          part->phase = BucketPart::Phase::kDone;
        }
        advanced = true;
      }
      all_done = all_done && part->phase == BucketPart::Phase::kDone;
    }
    if (all_done) return Progress::kDone;
    return advanced ? Progress::kAdvanced : Progress::kIdle;
  }

  // Reduce: sum the workers' gradients in worker order; update: SGD on our part.
  void ReduceAndUpdate(BucketPart& part) {
    const double start_s = MonotonicSeconds();
    ScopedSpan update(timeline_, "ps.reduce_update", "compute");
    std::span<float> sum = Inbox(0, part.slice);
    for (int w = 1; w < workers_; ++w) {
      std::span<const float> theirs = Inbox(w, part.slice);
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += theirs[i];
    }
    ApplySgd(params_.subspan(part.slice.offset, part.slice.count), sum, workers_,
             options_.learning_rate);
    stats_.update_s += MonotonicSeconds() - start_s;
  }

  // Send: the new parameters of our part go to every worker, at once or
  // (pulls in turn) to worker 0 first, the rest from AdvanceParts.
  void SendModel(BucketPart& part) {
    if (timeline_) part.posted_us = timeline_->NowUs();
    part.phase = BucketPart::Phase::kSending;
    if (options_.pulls_in_turn) {
      part.pulls.SendAcknowledged(NewValues(part), 0, part.tag);
      part.next_pull = 1;
      return;
    }
    for (int w = 0; w < workers_; ++w) part.pulls.Send(NewValues(part), w, part.tag);
    part.next_pull = workers_;
  }

  // The new parameters of our part, as the server has just updated them.
  std::span<const float> NewValues(const BucketPart& part) const {
    return params_.subspan(part.slice.offset, part.slice.count);
  }

  static int Track(const BucketPart& part) { return 1 + part.tag; }

  Comm comm_;
  const ExchangeOptions options_;
  const int workers_;
  const Slice shard_;
  std::span<float> params_;
  Timeline* const timeline_;
  std::vector<std::vector<float>> inboxes_;  // per worker, its gradient of our shard
  std::vector<std::unique_ptr<BucketPart>> parts_;
  ExchangeStats stats_;
};

}  // namespace

std::vector<std::size_t> PushOrder(const std::vector<Bucket>& buckets, std::size_t parameters,
                                   int servers) {
  std::vector<std::size_t> order;
  for (std::size_t first = 0; first < buckets.size();) {
    std::size_t end = first;
    while (end < buckets.size() && buckets[end].first_slice == buckets[first].first_slice) ++end;
    // Each part's turn: how many parts of its bucket before it go to its
    // server (the last one it touches).
    std::vector<std::pair<int, std::size_t>> turns;
    std::vector<int> parts_of(static_cast<std::size_t>(std::max(servers, 1)), 0);
    for (std::size_t b = first; b < end; ++b) {
      turns.push_back({parts_of[ServerOf(buckets[b], parameters, servers)]++, b});
    }
    std::stable_sort(turns.begin(), turns.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& turn : turns) order.push_back(turn.second);
    first = end;
  }
  return order;
}

std::unique_ptr<Exchange> MakeParameterServerExchange(const ExchangeOptions& options,
                                                      std::span<float> params,
                                                      std::span<float> grads,
                                                      Timeline* timeline) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Workers are ranks 0..w-1, servers the last k.
  if (rank < size - options.servers) {
    return std::make_unique<ParameterServerWorker>(options, params, grads, timeline);
  }
  return std::make_unique<ParameterServer>(options, params, timeline);
}

}  // namespace dmlbench
