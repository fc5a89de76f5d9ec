// Poll: the one way the trainer waits for MPI (DESIGN.md section 4): MPI_Testall
// polled with a short, backing-off sleep (after a bounded, yielding spin when
// every rank is on this machine), never a blocking call (those busy-poll and
// steal the cores other ranks need), and the TCP settings that waiting needs.
// Owns a scheme's private communicator and its requests. Not thread-safe: a
// Comm and its Requests belong to one thread.
#ifndef DMLBENCH_TRAINER_POLL_H_
#define DMLBENCH_TRAINER_POLL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace dmlbench {

// The MPI thread level the exchange schemes need, for MPI_Init_thread: every
// MPI call of a scheme is made from the thread that calls it, so this is
// MPI_THREAD_FUNNELED (BLAS threads never call MPI).
int RequiredMpiThreadLevel();

// Open MPI's TCP transport settings for this rank, put into the environment
// as OMPI_MCA_btl_tcp_* and OMPI_MCA_pml; call it before MPI_Init. A value
// the user gave (mpirun --mca or the environment) wins; one in an MCA
// parameter file does not. Other transports (shared memory) are untouched.
//
// The point-to-point layer is ob1, the one that drives the btls (tcp, vader,
// self) and the one Open MPI 4.1 picks here anyway: named, MPI_Init skips
// opening the others only to have them decline (cm and its psm/psm2
// transports load the InfiniPath and Omni-Path libraries and look for their
// devices): 0.19 s instead of 0.42 s of a 2-rank MPI_Init on a loaded 2-core
// machine (docs/trainer.md).
//
// Eager up to 1 MiB: above btl_tcp_eager_limit (64 KiB by default) a message
// goes by rendezvous, the rest following only after the receiver has
// answered, and here each side answers only at its next poll, so every such
// message costs extra sleeps. Measured on 4 emulated hosts (1 Gbit/s, 0.4
// core): the ring's 105 KB steps took 12.0 ms per iteration by rendezvous,
// 5.6 ms eager. Sets the eager limit, the rendezvous first fragment and the
// largest send fragment.
//
// Loopback only (btl_tcp_if_include = 127.0.0.1/8) when every rank of the job
// runs on this machine (mpirun's OMPI_COMM_WORLD_LOCAL_SIZE equals
// OMPI_COMM_WORLD_SIZE) and the user names no interfaces (btl_tcp_if_include
// or _exclude). Left alone, Open MPI opens a TCP module per interface present
// at MPI_Init and sends every k-th message over each. When one of them
// vanishes during the job (emulated clusters' bridges come and go), a module
// not yet connected fails its connect, and inside MPI_Comm_dup Open MPI 4.1
// then drops the message: the sender returns, its peer waits forever; data
// already on a connection over it is stuck too (scripts/diagnostics/stress_trainer_hangs.sh).
// Jobs over several hosts are left to the launcher, which names the network.
void SetTransportDefaults();

// What one polling step achieved.
enum class Progress { kIdle, kAdvanced, kDone };

// Calls `step` until it returns kDone. After kIdle, when mpirun started every
// rank of the job on this machine (shared memory, no CPU quota), it first
// polls again at once, yielding the core between polls (sched_yield), until
// 1 ms has passed since `step` last advanced; otherwise, and after that, it
// sleeps, 20 us at first, growing by a quarter each idle step up to 100 us.
// kAdvanced starts both over. A wake-up from a sleep thus comes at most ~25%,
// and never more than 100 us, after the awaited message. The cap matters where
// progress is invisible to `step`: MPI_Iallreduce moves to its next round only
// inside MPI_Test, so each of its rounds waits for a poll. With a 1 ms cap the
// `mpi` scheme did 38,000 samples/s on 4 emulated hosts (1 Gbit/s, 0.4 core),
// with 100 us 62,000; the ring did 72,000 with either. The spin is for ranks
// sharing a machine's cores: there a sleeping rank is woken late, behind the
// ranks that run (0.42 MB over 4 ranks on 2 cores: sleeps asked 0.44 ms per
// allreduce and took 1.68 ms), while a rank of a job over several hosts waits
// for a link and may run under a CPU quota that a spin would use up
// (DESIGN.md section 4). Adds the wall time spent here to *wait_s.
void PollUntil(const std::function<Progress()>& step, double* wait_s);

// Starts a new polling round on the calling thread. In a round each Comm
// makes MPI progress once, when the first of its Requests is tested, for all
// of its requests at once; later tests in the round only read what that
// found. PollUntil starts a round before every step; code that tests
// requests outside it (a scheme between the layers of backward) starts one
// first. Without rounds, each pending set tested paid its own pass of Open
// MPI's progress engine (MPI_Testall progresses whenever a request is still
// pending): a parameter server with its gradient in 26 parts made 26 such
// passes per poll.
void NewPollRound();

// What PollUntil has done on the calling thread since the thread began, for
// benchmarks that show where a wait's time goes (bench/local/bench_allreduce.cc).
struct PollCounts {
  std::uint64_t polls = 0;   // calls of `step`
  std::uint64_t yields = 0;  // idle polls while spinning, each followed by sched_yield
  std::uint64_t sleeps = 0;
  double slept_s = 0;        // wall time inside the sleeps, the kernel's lateness included
  double sleep_asked_s = 0;  // what the sleeps asked for
};
PollCounts PollCountsOfThisThread();

// Traffic of one rank, counted when a message is posted.
struct Traffic {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
};

class Requests;

// A duplicate of MPI_COMM_WORLD, so that a scheme's messages never match
// anyone else's. Construction is collective over MPI_COMM_WORLD. It must
// outlive the Requests made over it.
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
  // Once per polling round: one MPI_Testsome over every request pending in
  // this communicator's Requests, completing whatever has arrived; while an
  // MPI_Iallreduce is pending, up to kCollectivePasses of them as long as
  // each did work (poll.cc).
  void Progress();
  // One MPI_Testsome over every pending request; false if none is pending.
  bool TestPending();

  std::unique_ptr<Handle> handle_;
  int rank_ = 0;
  int size_ = 1;
  Traffic traffic_;
  std::vector<Requests*> requests_;  // every live Requests over this communicator
  std::uint64_t progressed_round_ = 0;
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
  // Completes only once the receiver has matched the message (MPI_Issend),
  // not when the sender's buffer may be reused.
  void SendAcknowledged(std::span<const float> data, int peer, int tag);
  void Receive(std::span<float> data, int peer, int tag);
  // Writes the sum of every rank's `data` to `sums` (MPI_Iallreduce; the
  // spans have the same length and must not overlap). Out of place on
  // purpose: Open MPI 4.1 reduces an in-place buffer with a binomial tree
  // whatever its size, which moves the whole buffer 2 log2(w) times; out of
  // place it picks reduce-scatter + allgather for large buffers.
  void AllreduceSum(std::span<const float> data, std::span<float> sums);

  // True when everything posted since the last completion has completed
  // (the set is then empty), also when nothing is posted. Makes the Comm's
  // progress for this polling round if it has not yet (NewPollRound).
  bool Test();

 private:
  // Send (MPI_Isend) or SendAcknowledged (MPI_Issend), counted alike.
  void PostSend(std::span<const float> data, int peer, int tag, bool acknowledged);
  friend class Comm;  // Comm::Progress tests every pending request at once
  struct Pending;
  Comm* comm_;
  std::unique_ptr<Pending> pending_;
  bool collective_ = false;  // an MPI_Iallreduce is among the pending
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_POLL_H_
