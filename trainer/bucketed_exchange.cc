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

void BucketedExchange::SetBucketExchanges(std::vector<std::unique_ptr<BucketExchange>> exchanges,
                                          std::vector<std::size_t> order) {
  exchanges_ = std::move(exchanges);
  if (order.empty()) {
    for (std::size_t j = 0; j < exchanges_.size(); ++j) order.push_back(j);
  }
  exchange_slices_.clear();
  for (std::size_t b : order) exchange_slices_.push_back(buckets_[b].slice);
  slice_exchanges_.assign(options_.slices.size(), {});
  for (std::size_t s = 0; s < options_.slices.size(); ++s) {
    for (std::size_t j = 0; j < exchange_slices_.size(); ++j) {
      if (Intersect(options_.slices[s], exchange_slices_[j]).count > 0) {
        slice_exchanges_[s].push_back(j);
      }
    }
  }
  done_.assign(exchanges_.size(), false);
  running_.assign(exchanges_.size(), false);
}

void BucketedExchange::Serve(std::int64_t) {
  throw std::logic_error("Serve() is for parameter-server ranks; rank " +
                         std::to_string(comm_.rank()) + " is a worker");
}

void BucketedExchange::BeginIteration() {
  if (!finished_) {
    throw std::logic_error("BeginIteration() before the last iteration's CompleteIteration()");
  }
  finished_ = false;
  stats_ = ExchangeStats{};
  traffic_at_begin_ = comm_.traffic();
  started_ = 0;
  ready_ = 0;
  completed_ = 0;
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
  for (std::size_t b = 0; b < exchanges_.size(); ++b) {
    if (!running_[b]) continue;
    const Progress progress = exchanges_[b]->Advance();
    if (progress == Progress::kDone) {
      done_[b] = true;
      running_[b] = false;
      if (window_ > 0) --in_flight_[lanes_[b]];
      const double completed_s = MonotonicSeconds();
      if (++completed_ == exchanges_.size()) completed_s_ = completed_s;
      Install(exchange_slices_[b]);
      install_s_ += MonotonicSeconds() - completed_s;
      advanced = true;
    } else {
      advanced = advanced || progress == Progress::kAdvanced;
    }
  }
  if (completed_ == exchanges_.size()) return Progress::kDone;
  return advanced ? Progress::kAdvanced : Progress::kIdle;
}

template <typename Done>
void BucketedExchange::WaitUntil(const char* what, Done done) {
  ScopedSpan wait(timeline_, what, "wait");
  PollUntil(
      [&] {
        const Progress progress = AdvanceStarted();
        if (done()) return Progress::kDone;
        const std::size_t before = started_;
        StartAllowed();  // buckets that waited for room in the window
        const bool advanced = started_ > before || progress != Progress::kIdle;
        return advanced ? Progress::kAdvanced : Progress::kIdle;
      },
      &stats_.wait_s);
}

template <typename Body>
void BucketedExchange::Accounted(Body body) {
  const double entered_s = MonotonicSeconds();
  const double update_before_s = stats_.update_s;
  const double install_before_s = install_s_;
  body();
  const double spent_s = MonotonicSeconds() - entered_s;
  stats_.exchange_s += spent_s - (stats_.update_s - update_before_s);
  stats_.exposed_comm_s += spent_s - (install_s_ - install_before_s);
}

void BucketedExchange::StartReady() {
  StartAllowed();
  // Move the buckets in flight on by what has arrived, without waiting.
  if (started_ > 0) {
    NewPollRound();
    AdvanceStarted();
    StartAllowed();
  }
}

void BucketedExchange::SliceReady(int slice) {
  if (!options_.overlap) return;
  Accounted([&] {
    // Start every bucket whose slices are now all final, last slice first.
    while (ready_ < buckets_.size() && slice <= buckets_[ready_].first_slice) ++ready_;
    StartReady();
  });
}

void BucketedExchange::FinishBackward() {
  Accounted([&] {
    // Every bucket is ready now; those whose lane is full start as others end.
    ready_ = buckets_.size();
    StartReady();
  });
}

void BucketedExchange::AwaitSlice(int slice) {
  if (ready_ < buckets_.size()) throw std::logic_error("AwaitSlice() before FinishBackward()");
  const std::vector<std::size_t>& over = slice_exchanges_.at(std::size_t(slice));
  auto installed = [&] {
    return std::all_of(over.begin(), over.end(), [&](std::size_t j) { return bool(done_[j]); });
  };
  if (completed_ == exchanges_.size()) return;
  Accounted([&] {
    if (installed()) {
      // Between the forward pass's blocks, move what is still in flight on
      // (and start what waited for room in its lane), as SliceReady() does
      // between backward's layers.
      StartReady();
    } else {
      WaitUntil("exchange.await", installed);
    }
  });
}

void BucketedExchange::CompleteIteration() {
  Accounted([&] { Complete(); });
}

void BucketedExchange::FinishIteration() {
  Accounted([&] {
    ready_ = buckets_.size();
    StartReady();
    Complete();
  });
}

void BucketedExchange::Complete() {
  ready_ = buckets_.size();
  WaitUntil("exchange.wait", [&] { return completed_ == exchanges_.size(); });
  stats_.comm_s = started_ > 0 ? completed_s_ - first_post_s_ : 0;
  const Traffic& now = comm_.traffic();
  stats_.bytes_sent = now.bytes_sent - traffic_at_begin_.bytes_sent;
  stats_.bytes_received = now.bytes_received - traffic_at_begin_.bytes_received;
  stats_.messages_sent = now.messages_sent - traffic_at_begin_.messages_sent;
  finished_ = true;
}

void BucketedExchange::ApplySummedGradients(std::span<const float> sums, Slice slice) {
  const double start_s = MonotonicSeconds();
  ScopedSpan update(timeline_, "sgd.update", "compute");
  ApplySgd(params_.subspan(slice.offset, slice.count), sums.subspan(slice.offset, slice.count),
           workers(), options_.learning_rate);
  stats_.update_s += MonotonicSeconds() - start_s;
}

}  // namespace dmlbench
