// BucketedExchange: what every worker-side scheme shares: the bucket plan (gradient
// slices fused last first up to bucket_bytes; one bucket when overlap is off), when each
// bucket starts, polling and ExchangeStats. A scheme supplies one bucket's
// protocol and how the new model is installed. Not thread-safe.
#ifndef DMLBENCH_TRAINER_BUCKETED_EXCHANGE_H_
#define DMLBENCH_TRAINER_BUCKETED_EXCHANGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trainer/exchange.h"
#include "trainer/poll.h"

namespace dmlbench {

// Part `index` of `whole` split into `parts` contiguous runs whose lengths
// differ by at most one (earlier parts are not longer than later ones).
Slice SplitPart(Slice whole, int parts, int index);

// The common part of two runs (count 0 when they do not meet).
Slice Intersect(Slice a, Slice b);

struct Bucket {
  Slice slice;       // contiguous run of the flat buffer
  int first_slice;   // the lowest gradient slice in it: its exchange starts when that one is ready
};

// Buckets in exchange order, last slice first: slices fused from the end of
// the buffer until a bucket holds at least bucket_bytes (the first slice
// closes the last bucket, however small); without overlap one bucket of the
// whole buffer. Then, when partition_bytes > 0, every bucket larger than
// partition_bytes is cut into the fewest equal parts (to a float) of at most
// that size, its end first, each an exchange of its own started with it: a
// parameter server then sends part j back while part j+1 still comes in.
// `slices` must tile the buffer.
std::vector<Bucket> PlanBuckets(const std::vector<Slice>& slices, bool overlap,
                                std::size_t bucket_bytes, std::size_t partition_bytes = 0);

// The exchange of one bucket, reused every iteration. Start() posts its first
// messages; Advance() never blocks.
class BucketExchange {
 public:
  virtual ~BucketExchange() = default;
  virtual void Start() = 0;
  virtual Progress Advance() = 0;
};

class BucketedExchange : public Exchange {
 public:
  Role role() const override { return Role::kWorker; }
  int worker_index() const override { return comm_.rank(); }
  int workers() const override { return workers_; }

  void BeginIteration() override;
  void SliceReady(int slice) override;
  void FinishIteration() override;
  void FinishBackward() override;
  void AwaitSlice(int slice) override;
  void CompleteIteration() override;
  // Throws std::logic_error: a worker has nothing to serve.
  void Serve(std::int64_t iterations) override;
  ExchangeStats LastStats() const override { return stats_; }

 protected:
  // Collective over MPI_COMM_WORLD. The last `servers` ranks are not
  // workers; all others are.
  BucketedExchange(const ExchangeOptions& options, std::span<float> params,
                   std::span<float> grads, Timeline* timeline, int servers);

  // The derived constructor makes one BucketExchange per bucket: exchange j
  // is bucket order[j]'s (no order: bucket j's). Buckets ready at different
  // times must keep their order.
  void SetBucketExchanges(std::vector<std::unique_ptr<BucketExchange>> exchanges,
                          std::vector<std::size_t> order = {});
  // At most `window` exchanges in flight at once in each lane (lanes[b]:
  // bucket b's, from 0; without a call every ready bucket starts at once).
  // A ready bucket whose lane is full waits for one of that lane to
  // complete; a later bucket of another lane may start before it. Buckets
  // of one lane start in order.
  void LimitInFlight(std::vector<std::size_t> lanes, std::size_t window);
  // As soon as a bucket's exchange has completed: makes params the new
  // model under `slice`, the bucket's run of the buffer (during backward
  // too: the pass no longer reads the parameters of a bucket it has
  // handed over). Adds the time it spends applying SGD to stats_.update_s.
  virtual void Install(Slice slice) = 0;
  // Install() of the allreduce schemes: `sums` holds the summed gradients of
  // every worker; apply SGD with their mean to params_ under `slice`, timed
  // as update.
  void ApplySummedGradients(std::span<const float> sums, Slice slice);

  // The comm-thread track of bucket b in the timeline.
  static int Track(std::size_t bucket) { return 1 + static_cast<int>(bucket); }

  Comm comm_;
  const ExchangeOptions options_;
  const std::vector<Bucket> buckets_;
  std::span<float> params_;
  std::span<float> grads_;
  Timeline* const timeline_;  // null unless an enabled timeline was given
  ExchangeStats stats_;

 private:
  void StartBucket(std::size_t b);
  // Starts every ready bucket whose lane has room, in order.
  void StartAllowed();
  // StartAllowed(), then moves what is in flight on without waiting.
  void StartReady();
  // Waits for every exchange (starting those not yet started) and closes
  // the iteration's stats.
  void Complete();
  // Advances every exchange in flight once, installing those that complete.
  Progress AdvanceStarted();
  // Polls (AdvanceStarted, StartAllowed) until `done` holds.
  template <typename Done>
  void WaitUntil(const char* what, Done done);
  // Runs `body`, the work of one public call, and accounts for its time:
  // less the SGD updates made meanwhile, it is exchange; less the installs
  // made meanwhile, exposed (a scheme's own reduce and update, as p2p's,
  // stay exposed).
  template <typename Body>
  void Accounted(Body body);

  const int workers_;
  std::vector<std::unique_ptr<BucketExchange>> exchanges_;
  std::vector<Slice> exchange_slices_;     // per exchange, the run of the buffer it updates
  // Per gradient slice, the exchanges whose runs meet it.
  std::vector<std::vector<std::size_t>> slice_exchanges_;
  std::size_t completed_ = 0;              // exchanges done this iteration
  bool finished_ = true;                   // CompleteIteration() since the last BeginIteration()
  double install_s_ = 0;                   // time in Install(), ever
  std::vector<bool> done_;
  std::size_t started_ = 0;                // buckets started this iteration
  std::size_t ready_ = 0;                  // buckets [0, ready_) have all slices final
  std::vector<bool> running_;              // started and not yet done
  std::vector<std::size_t> lanes_;         // per bucket, with window_ > 0
  std::vector<std::size_t> in_flight_;     // per lane
  std::size_t window_ = 0;                 // per lane; 0 = every ready bucket at once
  double first_post_s_ = 0;
  double completed_s_ = 0;
  Traffic traffic_at_begin_;
};

// SGD with the mean gradient: params[i] -= (learning_rate / workers) * sums[i],
// where sums holds the sum of the workers' gradients. Every scheme updates
// with this one expression, so equal inputs give bit-identical models. One
// multiply per element, no division: for one worker, and any power of two,
// the same floats as learning_rate * (sums[i] / workers); otherwise within
// an ulp of them.
void ApplySgd(std::span<float> params, std::span<const float> sums, int workers,
              float learning_rate);

// Seconds on the monotonic clock.
double MonotonicSeconds();

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_BUCKETED_EXCHANGE_H_
