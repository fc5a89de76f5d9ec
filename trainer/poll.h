// Poll: the one way the trainer waits for MPI (DESIGN.md section 4): MPI_Testall
// polled with a short, backing-off sleep, never a blocking call (those busy-poll
// and steal the cores other ranks need). Owns a scheme's private communicator
// and its requests. Not thread-safe: a Comm and its Requests belong to one thread.
#ifndef DMLBENCH_TRAINER_POLL_H_
#define DMLBENCH_TRAINER_POLL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

namespace dmlbench {

// The MPI thread level the exchange schemes need, for MPI_Init_thread: every
// MPI call of a scheme is made from the thread that calls it, so this is
// MPI_THREAD_FUNNELED (BLAS threads never call MPI).
int RequiredMpiThreadLevel();

// What one polling step achieved.
enum class Progress { kIdle, kAdvanced, kDone };

// Calls `step` until it returns kDone. After kIdle it sleeps, 20 us at first,
// growing by a quarter each idle step up to 1 ms (so a wake-up comes at most
// ~25% after the awaited message); kAdvanced resets the sleep to 20 us. Adds
// the wall time spent here to *wait_s.
void PollUntil(const std::function<Progress()>& step, double* wait_s);

// Traffic of one rank, counted when a message is posted.
struct Traffic {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
};

// A duplicate of MPI_COMM_WORLD, so that a scheme's messages never match
// anyone else's. Construction is collective over MPI_COMM_WORLD.
class Comm {
 public:
  Comm();
  ~Comm();  // frees the communicator unless MPI is already finalized
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Traffic& traffic() { return traffic_; }

 private:
  friend class Requests;
  struct Handle;
  std::unique_ptr<Handle> handle_;
  int rank_ = 0;
  int size_ = 1;
  Traffic traffic_;
};

// The requests of one protocol step: post some, then Test() until they have
// all completed. Buffers must stay valid until then. The destructor cancels
// and frees whatever is still pending and never throws.
class Requests {
 public:
  explicit Requests(Comm* comm);
  ~Requests();
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;

  void Send(std::span<const float> data, int peer, int tag);
  void Receive(std::span<float> data, int peer, int tag);
  // Sums `data` in place over every rank of the communicator (MPI_Iallreduce).
  void AllreduceSum(std::span<float> data);

  // MPI_Testall over everything posted since the last completion: true when
  // all of it has completed (the set is then empty), also when nothing is posted.
  bool Test();

 private:
  struct Pending;
  Comm* comm_;
  std::unique_ptr<Pending> pending_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_POLL_H_
