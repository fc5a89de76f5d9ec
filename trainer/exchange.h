// Exchange: the contract between the training loop and a communication scheme
// (ring, mpi, ps, p2p; DESIGN.md section 1). A scheme turns every worker's
// local mean gradient into the synchronously updated model on every worker.
// It borrows the flat parameter and gradient buffers for its lifetime and owns
// nothing of the model. One instance per rank, called from the training
// thread only (a scheme may run its own communication thread inside).
#ifndef DMLBENCH_TRAINER_EXCHANGE_H_
#define DMLBENCH_TRAINER_EXCHANGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dmlbench {

class Timeline;

// A contiguous run [offset, offset + count) of the flat parameter buffer.
struct Slice {
  std::size_t offset = 0;
  std::size_t count = 0;
};

enum class Role { kWorker, kServer };

struct ExchangeOptions {
  std::string architecture;       // "ring" | "mpi" | "ps" | "p2p"
  int servers = 0;                // ps: k server ranks, the LAST k ranks of MPI_COMM_WORLD
  bool overlap = false;           // start a slice's exchange as soon as its backward is done
  std::size_t bucket_bytes = 0;   // overlap: fuse finished slices until this many bytes
  std::size_t partition_bytes = 0;  // cut buckets larger than this into equal parts; 0 = never
  // ps with one server and a whole exchange: the server sends the new model
  // to one worker at a time, each send acknowledged before the next
  // (parameter_server.h).
  bool pulls_in_turn = false;
  float learning_rate = 0.05f;    // SGD step, params -= learning_rate * mean gradient
  // The runs of the gradient the backward pass finishes one at a time (whole
  // layers or row blocks of them, Mlp::gradient_slices()), in buffer order;
  // they tile the buffer and are finished last first.
  std::vector<Slice> slices;
};

// Per-iteration accounting of one rank, seconds on a monotonic clock.
struct ExchangeStats {
  double exchange_s = 0;          // time inside the scheme's calls, minus update_s
  double update_s = 0;            // time applying SGD on this rank
  double exposed_comm_s = 0;      // time blocked waiting for the exchange to complete
  double comm_s = 0;              // first send posted -> last byte of the new model here
  double wait_s = 0;              // time in polling waits (sleeping between MPI_Test calls)
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
};

class Exchange {
 public:
  virtual ~Exchange() = default;

  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  virtual Role role() const = 0;
  // Workers are numbered 0..workers()-1; they are ranks 0..w-1 of the world.
  virtual int worker_index() const = 0;
  virtual int workers() const = 0;

  // Worker, each iteration: BeginIteration() before the backward pass;
  // SliceReady(s) as soon as slice s's gradient (already divided by the
  // local batch size) is final in the gradient buffer, called for the last
  // slice first; FinishIteration() after the whole backward pass. When
  // FinishIteration() returns, the parameter buffer holds the model updated
  // with the mean of all workers' gradients, identical on every worker.
  virtual void BeginIteration() = 0;
  virtual void SliceReady(int slice) = 0;
  virtual void FinishIteration() = 0;

  // Worker, the same iteration split so that the next forward pass can run
  // while the exchange ends: FinishBackward() after the backward pass starts
  // what has not started and returns at once; AwaitSlice(s) returns when
  // the parameters under slice s hold the updated model (the next forward
  // pass calls it before it first reads them: Mlp::Forward's `await`);
  // CompleteIteration() returns when the whole model is updated, and only
  // then is LastStats() the iteration's. FinishIteration() is
  // FinishBackward() then CompleteIteration(). The next BeginIteration()
  // must come after CompleteIteration().
  virtual void FinishBackward() = 0;
  virtual void AwaitSlice(int slice) = 0;
  virtual void CompleteIteration() = 0;

  // Server (ps only): serves `iterations` iterations, then returns.
  virtual void Serve(std::int64_t iterations) = 0;

  // Accounting of the last iteration (worker) or of the last Serve() call.
  virtual ExchangeStats LastStats() const = 0;

 protected:
  Exchange() = default;
};

// Creates the scheme named by options.architecture over MPI_COMM_WORLD.
// `params` and `grads` must outlive the scheme; they are the same length and
// tiled by options.slices. `timeline` may be null (no trace). Throws
// std::invalid_argument with a one-line message for an unknown architecture,
// too few ranks for the servers, or more servers than parameters.
// Where pulls in turn apply: a parameter server that answers the whole
// gradient at once (ps, 1 server, overlap off, no parts).
bool PullsInTurnApply(const std::string& architecture, int servers, bool overlap, std::size_t partition_bytes);

std::unique_ptr<Exchange> MakeExchange(const ExchangeOptions& options,
                                       std::span<float> params,
                                       std::span<float> grads,
                                       Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_EXCHANGE_H_
