// Trainer: one rank's synchronous data-parallel SGD (DESIGN.md section 1):
// shuffle and shard each epoch, forward/backward, exchange (exchange.h), time
// every phase, aggregate over ranks, evaluate; rank 0 reports. Owns the model
// and scheme of a run, borrows the dataset; collective over MPI_COMM_WORLD,
// called from one thread.
#ifndef DMLBENCH_TRAINER_TRAINER_H_
#define DMLBENCH_TRAINER_TRAINER_H_

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "trainer/dataset.h"
#include "trainer/events.h"

namespace dmlbench {

struct TrainerOptions {
  std::string architecture = "ring";           // ring | mpi | ps | p2p
  int servers = 0;                             // ps only: k server ranks
  int batch_size = 100;                        // local batch b per worker, samples
  int epochs = 1;
  std::vector<int> hidden = {128, 32};         // hidden layer widths
  float learning_rate = 0.05f;                 // SGD step; the experiment matrix's default too
  std::uint64_t seed = 1;                      // initial model and every epoch's shuffle
  std::int64_t max_iterations_per_epoch = 0;   // 0 = no cap
  // Epoch 1, the warm-up when later epochs follow, capped at this many
  // iterations (under max_iterations_per_epoch too); 0 = no own cap.
  std::int64_t warmup_iterations = 0;
  // Before epoch 2 every rank waits until its cgroup's CPU quota is in force,
  // at most this long (a launcher that lifts the quota while the job starts
  // asks for it, so that the measured epochs run capped); 0 = no wait.
  double await_cpu_quota_s = 0;
  bool overlap = false;                        // exchange while backward and the next forward run
  std::uint64_t bucket_bytes = 65536;          // overlap: fuse finished layers up to this size
  std::uint64_t partition_bytes = 0;           // cut larger buckets into parts of this size; 0 = never
  bool pulls_in_turn = false;                  // ps, 1 server, whole: its pulls one worker at a time
  bool evaluate = true;                        // test accuracy after every epoch
  std::string timeline_path;                   // Chrome trace of every rank; "" = none
};

// The problem with `options` in one line ("" if none). Depends only on its
// arguments, so every rank reaches the same verdict without communicating.
// The architecture and servers are checked by MakeExchange (exchange.h).
std::string ValidateOptions(const TrainerOptions& options);

// Where rank 0 reports; both may be null (other ranks pass nulls).
struct TrainerOutputs {
  EventWriter* events = nullptr;    // run_start and one epoch event per epoch
  std::ostream* progress = nullptr; // human-readable lines
};

struct TrainResult {
  std::vector<float> parameters;    // the final model (workers; empty on servers)
  std::string parameter_checksum;   // sha256 hex of `parameters` (workers; "" on servers)
  std::vector<EpochEvent> epochs;   // complete on rank 0 only
  // Rank 0's clock: from the call of Train to run_start written (model,
  // scheme, the ranks' facts), and from then to the last epoch reported.
  double setup_s = 0;
  double epochs_s = 0;
};

// Raised by Train, with the same one-line message on every rank, when the
// CPU quota of some rank's cgroup was not in force within
// await_cpu_quota_s.
class QuotaWaitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the whole training. Throws std::invalid_argument, with the same
// one-line message on every rank, if the scheme cannot be built
// (MakeExchange) or the training set holds less than one global batch;
// QuotaWaitError as above.
TrainResult Train(const TrainerOptions& options, const Dataset& dataset,
                  const TrainerOutputs& outputs);

// Collective: the message of the lowest rank whose `local_error` is not
// empty, on every rank ("" when no rank failed). Lets a failure seen by some
// ranks (a corrupt dataset copy on one host) end the whole job cleanly.
std::string FirstError(const std::string& local_error);

// Collective: the largest peak resident set size of any rank, bytes.
std::int64_t PeakRssBytesOverRanks();

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_TRAINER_H_
