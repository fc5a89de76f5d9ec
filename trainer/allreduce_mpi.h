// MpiAllreduce: the baseline that keeps the ring honest: one MPI_Iallreduce
// (Open MPI picks the algorithm) of a float buffer, polled, never a blocking
// wait. Borrows the buffer, owns its request. Not thread-safe. The `mpi` scheme
// is one MpiAllreduce per bucket followed by SGD on every worker.
#ifndef DMLBENCH_TRAINER_ALLREDUCE_MPI_H_
#define DMLBENCH_TRAINER_ALLREDUCE_MPI_H_

#include <memory>
#include <span>

#include "trainer/bucketed_exchange.h"
#include "trainer/exchange.h"
#include "trainer/poll.h"

namespace dmlbench {

class MpiAllreduce : public BucketExchange {
 public:
  // Sums `data` in place over every rank of `comm`. Allreduces in flight at
  // once must be started in the same order on every rank. Traced on `track`
  // when `timeline` is not null.
  MpiAllreduce(Comm* comm, std::span<float> data, Timeline* timeline = nullptr, int track = 1);

  void Start() override;
  Progress Advance() override;

 private:
  const std::span<float> data_;
  Timeline* const timeline_;
  const int track_;
  Requests requests_;
  bool done_ = true;
  double posted_us_ = 0;
};

// Sums `data` in place over every rank of `comm`; returns when it is done.
// Time spent waiting is added to *wait_s.
void MpiAllreduceSum(Comm* comm, std::span<float> data, double* wait_s);

// The `mpi` scheme over MPI_COMM_WORLD; every rank is a worker.
std::unique_ptr<Exchange> MakeMpiExchange(const ExchangeOptions& options,
                                          std::span<float> params, std::span<float> grads,
                                          Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_ALLREDUCE_MPI_H_
