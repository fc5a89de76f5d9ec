// RingAllreduce: bandwidth-optimal ring allreduce (Patarasuk & Yuan 2009) of a
// float buffer over point-to-point MPI: reduce-scatter then allgather, 2(w-1)
// steps of ~n/w to the right; any w, any length. Borrows the buffer, owns inbox
// and requests, never blocks. Not thread-safe. `ring` = one per bucket + SGD.
#ifndef DMLBENCH_TRAINER_ALLREDUCE_RING_H_
#define DMLBENCH_TRAINER_ALLREDUCE_RING_H_

#include <memory>
#include <span>
#include <vector>

#include "trainer/bucketed_exchange.h"
#include "trainer/exchange.h"
#include "trainer/poll.h"

namespace dmlbench {

class RingAllreduce : public BucketExchange {
 public:
  // Sums `data` in place over every rank of `comm`. Its messages carry `tag`;
  // two allreduces in flight at once need different tags. Steps are traced
  // on `track` when `timeline` is not null.
  RingAllreduce(Comm* comm, std::span<float> data, int tag, Timeline* timeline = nullptr,
                int track = 1);

  void Start() override;
  Progress Advance() override;

 private:
  std::span<float> Chunk(int index) const;
  Requests& SendsOf(int step);
  void PostStep();

  Comm* const comm_;
  const std::span<float> data_;
  const int tag_;
  Timeline* const timeline_;
  const int track_;
  const int steps_;             // 2(w-1)
  int step_;
  bool posted_ = false;            // step_'s messages are posted
  std::vector<float> inbox_;       // the chunk from the left during reduce-scatter
  std::span<float> inbox_view_;    // where this step's chunk lands: the inbox, or in place
  std::span<const float> outbox_;  // this step's chunk to the right
  Requests receives_;
  Requests even_sends_;            // sends of even steps; one send may be in flight
  Requests odd_sends_;             // while the next step runs
  double step_posted_us_ = 0;
};

// Sums `data` in place over every rank of `comm`; returns when it is done.
// Time spent waiting is added to *wait_s.
void RingAllreduceSum(Comm* comm, std::span<float> data, double* wait_s);

// The `ring` scheme over MPI_COMM_WORLD; every rank is a worker.
std::unique_ptr<Exchange> MakeRingExchange(const ExchangeOptions& options,
                                           std::span<float> params, std::span<float> grads,
                                           Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_ALLREDUCE_RING_H_
