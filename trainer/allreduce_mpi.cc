#include "trainer/allreduce_mpi.h"

#include <utility>
#include <vector>

#include "trainer/timeline.h"

namespace dmlbench {

MpiAllreduce::MpiAllreduce(Comm* comm, std::span<const float> data, std::span<float> sums,
                           Timeline* timeline, int track)
    : data_(data),
      sums_(sums),
      timeline_(timeline && timeline->enabled() ? timeline : nullptr),
      track_(track),
      requests_(comm) {}

void MpiAllreduce::Start() {
  if (timeline_) posted_us_ = timeline_->NowUs();
  requests_.AllreduceSum(data_, sums_);
  done_ = false;
}

Progress MpiAllreduce::Advance() {
  if (done_) return Progress::kDone;
  if (!requests_.Test()) return Progress::kIdle;
  done_ = true;
  if (timeline_) {
    timeline_->Span("mpi.iallreduce", "comm", posted_us_, timeline_->NowUs(), track_,
                    static_cast<std::int64_t>(data_.size_bytes()));
  }
  return Progress::kDone;
}

void MpiAllreduceSum(Comm* comm, std::span<const float> data, std::span<float> sums,
                     double* wait_s) {
  MpiAllreduce allreduce(comm, data, sums);
  allreduce.Start();
  PollUntil([&allreduce] { return allreduce.Advance(); }, wait_s);
}

namespace {

// The `mpi` scheme: each bucket's gradients are summed by MPI_Iallreduce
// into a buffer of sums; then every worker applies the same SGD step.
class MpiExchange : public BucketedExchange {
 public:
  MpiExchange(const ExchangeOptions& options, std::span<float> params, std::span<float> grads,
              Timeline* timeline)
      : BucketedExchange(options, params, grads, timeline, /*servers=*/0),
        sums_(grads.size()) {
    std::vector<std::unique_ptr<BucketExchange>> allreduces;
    const std::span<float> sums(sums_);
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Slice& slice = buckets_[b].slice;
      allreduces.push_back(std::make_unique<MpiAllreduce>(
          &comm_, grads_.subspan(slice.offset, slice.count), sums.subspan(slice.offset, slice.count),
          timeline_, Track(b)));
    }
    SetBucketExchanges(std::move(allreduces));
  }

 private:
  void Install(Slice slice) override { ApplySummedGradients(sums_, slice); }

  std::vector<float> sums_;
};

}  // namespace

std::unique_ptr<Exchange> MakeMpiExchange(const ExchangeOptions& options,
                                          std::span<float> params, std::span<float> grads,
                                          Timeline* timeline) {
  return std::make_unique<MpiExchange>(options, params, grads, timeline);
}

}  // namespace dmlbench
