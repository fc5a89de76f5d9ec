#include "trainer/bucketed_exchange.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "trainer/avx2_clone.h"
#include "trainer/timeline.h"

namespace dmlbench {

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

DMLBENCH_AVX2_CLONE void ApplySgd(std::span<float> params, std::span<const float> sums, int workers,
              float learning_rate) {
  const float step = learning_rate / static_cast<float>(workers);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] -= step * sums[i];
}

Slice SplitPart(Slice whole, int parts, int index) {
  const std::size_t n = whole.count;
  const std::size_t p = static_cast<std::size_t>(parts);
  const std::size_t i = static_cast<std::size_t>(index);
  const std::size_t begin = n * i / p;
  const std::size_t end = n * (i + 1) / p;
  return Slice{whole.offset + begin, end - begin};
}

Slice Intersect(Slice a, Slice b) {
  const std::size_t begin = std::max(a.offset, b.offset);
  const std::size_t end = std::min(a.offset + a.count, b.offset + b.count);
  return end > begin ? Slice{begin, end - begin} : Slice{begin, 0};
}

namespace {

std::vector<Bucket> FuseSlices(const std::vector<Slice>& slices, bool overlap,
                               std::size_t bucket_bytes) {
  if (!overlap) {
    const Slice& last = slices.back();
    return {Bucket{Slice{0, last.offset + last.count}, 0}};
  }
  std::vector<Bucket> buckets;
  std::size_t end = slices.back().offset + slices.back().count;
  for (int s = static_cast<int>(slices.size()) - 1; s >= 0; --s) {
    const std::size_t begin = slices[s].offset;
    if ((end - begin) * sizeof(float) >= bucket_bytes || s == 0) {
      buckets.push_back(Bucket{Slice{begin, end - begin}, s});
      end = begin;
    }
  }
  return buckets;
}

}  // namespace

std::vector<Bucket> PlanBuckets(const std::vector<Slice>& slices, bool overlap,
                                std::size_t bucket_bytes, std::size_t partition_bytes) {
  if (slices.empty()) return {};
  std::vector<Bucket> buckets = FuseSlices(slices, overlap, bucket_bytes);
  if (partition_bytes == 0) return buckets;
  const std::size_t partition_floats = std::max<std::size_t>(1, partition_bytes / sizeof(float));
  std::vector<Bucket> parts;
  for (const Bucket& bucket : buckets) {
    const std::size_t n = (bucket.slice.count + partition_floats - 1) / partition_floats;
    for (std::size_t i = n; i-- > 0;) {
      parts.push_back(Bucket{SplitPart(bucket.slice, static_cast<int>(n), static_cast<int>(i)),
                             bucket.first_slice});
    }
  }
  return parts;
}

BucketedExchange::BucketedExchange(const ExchangeOptions& options, std::span<float> params,
                                   std::span<float> grads, Timeline* timeline, int servers)
    : options_(options),
      buckets_(PlanBuckets(options.slices, options.overlap, options.bucket_bytes,
                            options.partition_bytes)),
      params_(params),
      grads_(grads),
      timeline_(timeline && timeline->enabled() ? timeline : nullptr),
      workers_(comm_.size() - servers) {}

void BucketedExchange::SetBucketExchanges(std::vector<std::unique_ptr<BucketExchange>> exchanges) {
  exchanges_ = std::move(exchanges);
  done_.assign(exchanges_.size(), false);
  running_.assign(exchanges_.size(), false);
}

void BucketedExchange::Serve(std::int64_t) {
  throw std::logic_error("Serve() is for parameter-server ranks; rank " +
                         std::to_string(comm_.rank()) + " is a worker");
}

void BucketedExchange::BeginIteration() {
  stats_ = ExchangeStats{};
  traffic_at_begin_ = comm_.traffic();
  started_ = 0;
  ready_ = 0;
  done_.assign(exchanges_.size(), false);
  running_.assign(exchanges_.size(), false);
  in_flight_.assign(in_flight_.size(), 0);
}

void BucketedExchange::LimitInFlight(std::vector<std::size_t> lanes, std::size_t window) {
  lanes_ = std::move(lanes);
  window_ = window;
  std::size_t count = 0;
  for (std::size_t lane : lanes_) count = std::max(count, lane + 1);
  in_flight_.assign(count, 0);
}

void BucketedExchange::StartAllowed() {
  // In order, skipping only a bucket whose lane is full.
  for (std::size_t b = 0; b < ready_ && started_ < ready_; ++b) {
    if (done_[b] || running_[b]) continue;
    if (window_ > 0 && in_flight_[lanes_[b]] >= window_) continue;
    StartBucket(b);
  }
}

void BucketedExchange::StartBucket(std::size_t b) {
  if (started_ == 0) first_post_s_ = MonotonicSeconds();
  exchanges_[b]->Start();
  running_[b] = true;
  if (window_ > 0) ++in_flight_[lanes_[b]];
  ++started_;
}

Progress BucketedExchange::AdvanceStarted() {
  bool advanced = false;
  bool all_done = started_ == exchanges_.size();
  for (std::size_t b = 0; b < exchanges_.size(); ++b) {
    if (!running_[b]) continue;
    const Progress progress = exchanges_[b]->Advance();
    if (progress == Progress::kDone) {
      done_[b] = true;
      running_[b] = false;
      if (window_ > 0) --in_flight_[lanes_[b]];
      advanced = true;
    } else {
      all_done = false;
      advanced = advanced || progress == Progress::kAdvanced;
    }
  }
  if (all_done) {
    completed_s_ = MonotonicSeconds();
    return Progress::kDone;
  }
  return advanced ? Progress::kAdvanced : Progress::kIdle;
}

void BucketedExchange::SliceReady(int slice) {
  if (!options_.overlap) return;
  const double entered_s = MonotonicSeconds();
  // Start every bucket whose slices are now all final, last slice first.
  while (ready_ < buckets_.size() && slice <= buckets_[ready_].first_slice) ++ready_;
  StartAllowed();
  // Move the buckets in flight on by what has arrived, without waiting.
  if (started_ > 0) {
    NewPollRound();
    AdvanceStarted();
    StartAllowed();
  }
  const double spent_s = MonotonicSeconds() - entered_s;
  stats_.exposed_comm_s += spent_s;
  stats_.exchange_s += spent_s;
}

void BucketedExchange::FinishIteration() {
  const double entered_s = MonotonicSeconds();
  ready_ = buckets_.size();
  StartAllowed();
  {
    ScopedSpan wait(timeline_, "exchange.wait", "wait");
    PollUntil(
        [this] {
          const Progress progress = AdvanceStarted();
          if (progress == Progress::kDone) return progress;
          const std::size_t before = started_;
          StartAllowed();  // buckets that waited for room in the window
          return started_ > before ? Progress::kAdvanced : progress;
        },
        &stats_.wait_s);
  }
  const double exchanged_s = MonotonicSeconds();
  stats_.exposed_comm_s += exchanged_s - entered_s;
  stats_.comm_s = completed_s_ - first_post_s_;
  Install();
  stats_.exchange_s += MonotonicSeconds() - entered_s - stats_.update_s;
  const Traffic& now = comm_.traffic();
  stats_.bytes_sent = now.bytes_sent - traffic_at_begin_.bytes_sent;
  stats_.bytes_received = now.bytes_received - traffic_at_begin_.bytes_received;
  stats_.messages_sent = now.messages_sent - traffic_at_begin_.messages_sent;
}

void BucketedExchange::ApplySummedGradients(std::span<const float> sums) {
  const double start_s = MonotonicSeconds();
  ScopedSpan update(timeline_, "sgd.update", "compute");
  ApplySgd(params_, sums, workers(), options_.learning_rate);
  stats_.update_s += MonotonicSeconds() - start_s;
}

}  // namespace dmlbench
