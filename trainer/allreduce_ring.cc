#include "trainer/allreduce_ring.h"

#include <utility>

#include "trainer/timeline.h"

namespace dmlbench {

RingAllreduce::RingAllreduce(Comm* comm, std::span<float> data, int tag, Timeline* timeline,
                             int track)
    : comm_(comm),
      data_(data),
      tag_(tag),
      timeline_(timeline && timeline->enabled() ? timeline : nullptr),
      track_(track),
      steps_(2 * (comm->size() - 1)),
      step_(steps_),
      inbox_((data.size() + comm->size() - 1) / comm->size()),
      receives_(comm),
      even_sends_(comm),
      odd_sends_(comm) {}

// Chunk c of w (taken modulo w): the chunks tile the buffer and differ in
// length by at most one float.
std::span<float> RingAllreduce::Chunk(int index) const {
  const int w = comm_->size();
  const int c = ((index % w) + w) % w;
  const Slice part = SplitPart(Slice{0, data_.size()}, w, c);
  return data_.subspan(part.offset, part.count);
}

void RingAllreduce::Start() {
  step_ = 0;
  posted_ = false;
  if (steps_ > 0) {
    PostStep();
    posted_ = true;
  }
}

Requests& RingAllreduce::SendsOf(int step) { return step % 2 == 0 ? even_sends_ : odd_sends_; }

void RingAllreduce::PostStep() {
  const int w = comm_->size();
  const int rank = comm_->rank();
  const int left = (rank + w - 1) % w;
  const int right = (rank + 1) % w;
  if (step_ < w - 1) {
    // Reduce-scatter step s: send chunk (r - s) right; chunk (r - s - 1)
    // arrives from the left into the inbox, to be added to ours.
    const int s = step_;
    outbox_ = Chunk(rank - s);
    inbox_view_ = std::span<float>(inbox_).first(Chunk(rank - s - 1).size());
  } else {
    // Allgather step s: send the fully reduced chunk (r + 1 - s) right; the
    // reduced chunk (r - s) arrives from the left straight into place.
    const int s = step_ - (w - 1);
    outbox_ = Chunk(rank + 1 - s);
    inbox_view_ = Chunk(rank - s);
  }
  if (timeline_) step_posted_us_ = timeline_->NowUs();
  receives_.Receive(inbox_view_, left, tag_);
  SendsOf(step_).Send(outbox_, right, tag_);
}

Progress RingAllreduce::Advance() {
  const int w = comm_->size();
  Progress progress = Progress::kIdle;
  while (step_ < steps_) {
    if (!posted_) {
      // A chunk sent s steps ago is written again at step s + w - 1 at the
      // earliest, so one send may stay in flight (w = 2: none).
      if (!SendsOf(step_).Test() || (w == 2 && !SendsOf(step_ + 1).Test())) return progress;
      PostStep();
      posted_ = true;
      progress = Progress::kAdvanced;
    }
    // Wait for the left neighbour's chunk.
    if (!receives_.Test()) return progress;
    const bool reduce_scatter = step_ < w - 1;
    if (timeline_) {
      timeline_->Span(reduce_scatter ? "ring.reduce_scatter" : "ring.allgather", "comm",
                      step_posted_us_, timeline_->NowUs(), track_,
                      static_cast<std::int64_t>(outbox_.size_bytes()));
    }
    if (reduce_scatter) {
      // Reduce: add the left neighbour's partial sum into our chunk.
      ScopedSpan reduce(timeline_, "ring.reduce", "compute");
      std::span<float> mine = Chunk(comm_->rank() - step_ - 1);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += inbox_view_[i];
    }
    ++step_;
    posted_ = false;
    progress = Progress::kAdvanced;
  }
  // Done when our last chunks have left as well.
  if (!even_sends_.Test() || !odd_sends_.Test()) return progress;
  return Progress::kDone;
}

void RingAllreduceSum(Comm* comm, std::span<float> data, double* wait_s) {
  RingAllreduce ring(comm, data, 0);
  ring.Start();
  PollUntil([&ring] { return ring.Advance(); }, wait_s);
}

namespace {

// The `ring` scheme: each bucket's gradients are summed by a ring allreduce
// in the gradient buffer; then every worker applies the same SGD step.
class RingExchange : public BucketedExchange {
 public:
  RingExchange(const ExchangeOptions& options, std::span<float> params, std::span<float> grads,
               Timeline* timeline)
      : BucketedExchange(options, params, grads, timeline, /*servers=*/0) {
    std::vector<std::unique_ptr<BucketExchange>> rings;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Slice& slice = buckets_[b].slice;
      rings.push_back(std::make_unique<RingAllreduce>(
          &comm_, grads_.subspan(slice.offset, slice.count), static_cast<int>(b), timeline_,
          Track(b)));
    }
    SetBucketExchanges(std::move(rings));
  }

 private:
  void Install(Slice slice) override { ApplySummedGradients(grads_, slice); }
};

}  // namespace

std::unique_ptr<Exchange> MakeRingExchange(const ExchangeOptions& options,
                                           std::span<float> params, std::span<float> grads,
                                           Timeline* timeline) {
  return std::make_unique<RingExchange>(options, params, grads, timeline);
}

}  // namespace dmlbench
