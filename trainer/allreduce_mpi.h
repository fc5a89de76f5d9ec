// MpiAllreduce: the baseline that keeps the ring honest: one MPI_Iallreduce
// (Open MPI picks the algorithm) of a float buffer into another, polled, never
// a blocking wait. Borrows the buffers, owns its request. Not thread-safe. The `mpi` scheme
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
  // Writes the sum of `data` over every rank of `comm` to `sums` (same
  // length, not overlapping). Allreduces in flight at once must be started in
  // the same order on every rank. Traced on `track` when `timeline` is not null.
  MpiAllreduce(Comm* comm, std::span<const float> data, std::span<float> sums,
               Timeline* timeline = nullptr, int track = 1);

  void Start() override;
  Progress Advance() override;

 private:
  const std::span<const float> data_;
  const std::span<float> sums_;
  Timeline* const timeline_;
  const int track_;
  Requests requests_;
  bool done_ = true;
  double posted_us_ = 0;
};

// Writes the sum of `data` over every rank of `comm` to `sums` (same length,
// not overlapping); returns when it is done. Time spent waiting is added to
// *wait_s. Keep `sums` for the next call: a buffer allocated per call made
// every allreduce on the machine (blocking ones and the ring as well) several
// times slower over shared memory, 16 MB at 4 ranks 21 ms -> 70 ms.
void MpiAllreduceSum(Comm* comm, std::span<const float> data, std::span<float> sums,
                     double* wait_s);

// The `mpi` scheme over MPI_COMM_WORLD; every rank is a worker.
std::unique_ptr<Exchange> MakeMpiExchange(const ExchangeOptions& options,
                                          std::span<float> params, std::span<float> grads,
                                          Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_ALLREDUCE_MPI_H_
