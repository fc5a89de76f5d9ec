#include "trainer/peer_to_peer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "trainer/bucketed_exchange.h"
#include "trainer/poll.h"
#include "trainer/timeline.h"

namespace dmlbench {
namespace {

// One bucket of the p2p exchange. Peer j owns shard j of the bucket; this
// worker owns shard `rank`.
class ShardExchange : public BucketExchange {
 public:
  ShardExchange(Comm* comm, Slice bucket, std::span<const float> params,
                std::span<const float> grads, std::span<float> model_inbox, float learning_rate,
                int tag, Timeline* timeline, int track, double* update_s)
      : comm_(comm), bucket_(bucket), mine_(Shard(comm->rank())), params_(params), grads_(grads),
        model_inbox_(model_inbox), learning_rate_(learning_rate), tag_(tag), timeline_(timeline),
        track_(track), update_s_(update_s),
        inboxes_(comm->size(), std::vector<float>(mine_.count)), sum_(mine_.count),
        sends_(comm), receives_(comm) {
    inboxes_[comm->rank()] = std::vector<float>();  // our own contribution stays in the gradient buffer
  }

  void Start() override {
    if (timeline_) posted_us_ = timeline_->NowUs();
    // Scatter: shard j of our gradient goes to peer j; every peer's gradient
    // of our shard arrives in that peer's inbox. In shifted order (Peer).
    for (int step = 1; step < comm_->size(); ++step) {
      const int from = Peer(-step);
      if (mine_.count > 0) receives_.Receive(inboxes_[from], from, 2 * tag_);
      const int to = Peer(step);
      const Slice theirs = Shard(to);
      if (theirs.count > 0) sends_.Send(View(grads_, theirs), to, 2 * tag_);
    }
    phase_ = Phase::kScatter;
  }

  Progress Advance() override {
    if (phase_ == Phase::kDone) return Progress::kDone;
    if (!receives_.Test() || !sends_.Test()) return Progress::kIdle;
    if (phase_ == Phase::kScatter) {
      if (timeline_) {
        timeline_->Span("p2p.scatter", "comm", posted_us_, timeline_->NowUs(), track_);
      }
      ReduceAndUpdate();
      Gather();
      return Progress::kAdvanced;
    }
    if (timeline_) timeline_->Span("p2p.gather", "comm", posted_us_, timeline_->NowUs(), track_);
    phase_ = Phase::kDone;
    return Progress::kDone;
  }

 private:
  enum class Phase { kScatter, kGather, kDone };

  Slice Shard(int peer) const { return SplitPart(bucket_, comm_->size(), peer); }

  // The peer `step` places to the right of this worker (left when
  // negative). Each worker sends first to its right neighbour, then to the
  // one after: had every worker sent to peer 0 first, then to peer 1, the
  // sends would queue at one receiver's link at a time while the others
  // idle (MPI's alltoall orders its pairs the same way).
  int Peer(int step) const {
    const int w = comm_->size();
    return ((comm_->rank() + step) % w + w) % w;
  }

  template <typename T>
  static std::span<T> View(std::span<T> buffer, Slice slice) {
    return buffer.subspan(slice.offset, slice.count);
  }

  // Reduce: sum the w gradients of our shard in worker order; update: SGD
  // on it, into the model inbox (the parameters stay untouched until Install).
  void ReduceAndUpdate() {
    const double start_s = MonotonicSeconds();
    ScopedSpan update(timeline_, "p2p.reduce_update", "compute");
    const int rank = comm_->rank();
    const auto contribution = [&](int peer) {
      return peer == rank ? View(grads_, mine_) : std::span<const float>(inboxes_[peer]);
    };
    const std::span<const float> first = contribution(0);
    std::copy(first.begin(), first.end(), sum_.begin());
    for (int peer = 1; peer < comm_->size(); ++peer) {
      const std::span<const float> theirs = contribution(peer);
      for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += theirs[i];
    }
    std::span<float> updated = View(model_inbox_, mine_);
    const std::span<const float> current = View(params_, mine_);
    std::copy(current.begin(), current.end(), updated.begin());
    ApplySgd(updated, sum_, comm_->size(), learning_rate_);
    *update_s_ += MonotonicSeconds() - start_s;
  }

  // Gather: our updated shard goes to every peer; theirs arrive in place.
  void Gather() {
    if (timeline_) posted_us_ = timeline_->NowUs();
    for (int step = 1; step < comm_->size(); ++step) {
      const int from = Peer(-step);
      const Slice theirs = Shard(from);
      if (theirs.count > 0) receives_.Receive(View(model_inbox_, theirs), from, 2 * tag_ + 1);
      if (mine_.count > 0) {
        sends_.Send(View(std::span<const float>(model_inbox_), mine_), Peer(step), 2 * tag_ + 1);
      }
    }
    phase_ = Phase::kGather;
  }

  Comm* const comm_;
  const Slice bucket_;
  const Slice mine_;
  const std::span<const float> params_;
  const std::span<const float> grads_;
  const std::span<float> model_inbox_;
  const float learning_rate_;
  const int tag_;
  Timeline* const timeline_;
  const int track_;
  double* const update_s_;
  std::vector<std::vector<float>> inboxes_;  // per peer, its gradient of our shard
  std::vector<float> sum_;
  Requests sends_;
  Requests receives_;
  Phase phase_ = Phase::kDone;
  double posted_us_ = 0;
};

class PeerToPeerExchange : public BucketedExchange {
 public:
  PeerToPeerExchange(const ExchangeOptions& options, std::span<float> params,
                     std::span<float> grads, Timeline* timeline)
      : BucketedExchange(options, params, grads, timeline, /*servers=*/0),
        model_inbox_(params.size()) {
    std::vector<std::unique_ptr<BucketExchange>> shards;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      shards.push_back(std::make_unique<ShardExchange>(
          &comm_, buckets_[b].slice, params_, grads_, model_inbox_, options.learning_rate,
          static_cast<int>(b), timeline_, Track(b), &stats_.update_s));
    }
    SetBucketExchanges(std::move(shards));
  }

 private:
  // Every shard was updated by its owner; take the new model in.
  void Install(Slice slice) override {
    ScopedSpan install(timeline_, "p2p.install", "compute");
    std::copy_n(model_inbox_.begin() + std::ptrdiff_t(slice.offset), slice.count,
                params_.begin() + std::ptrdiff_t(slice.offset));
  }

  std::vector<float> model_inbox_;  // the new model, installed after backward
};

}  // namespace

std::unique_ptr<Exchange> MakePeerToPeerExchange(const ExchangeOptions& options,
                                                 std::span<float> params,
                                                 std::span<float> grads, Timeline* timeline) {
  return std::make_unique<PeerToPeerExchange>(options, params, grads, timeline);
}

}  // namespace dmlbench
