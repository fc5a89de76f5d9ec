#include "trainer/poll.h"

#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

namespace dmlbench {
namespace {

constexpr auto kSpin = std::chrono::microseconds(1000);
constexpr useconds_t kFirstSleepUs = 20;
constexpr useconds_t kLongestSleepUs = 100;
// libnbc, which runs MPI_Iallreduce, moves its schedule on by one round per
// pass of Open MPI's progress engine, and a round that only sums (after each
// receive of the reduce-scatter) is a round of its own; so with one pass per
// poll each sum was followed by a whole sleep (up to 100 us, the sleep having
// grown while the receive was awaited) before the next messages were posted.
// While a collective is pending, a pass that did work is followed by another,
// up to kCollectivePasses in a poll. A pass that did work is one that took
// kBusyPass or longer: on the emulated cluster (mpi, 4 hosts, 1 Gbit/s) 60 %
// of first passes took 2-4 us, idle; those that received a fragment or
// summed took 8 us to over 64 us. Measured side by side
// (bench/cluster/bench_poll_cluster.sh, mpi, 4 hosts x 0.4 core, medians of 5):
// 1.04-1.07x the samples/s at 1 Gbit/s in three runs (B faster than A in
// 14 of 15 pairs), overlap off and on, with the same CPU per iteration;
// 1.00x at 100 Mbit/s, where a sleep is a small part of each round.
constexpr int kCollectivePasses = 3;
constexpr auto kBusyPass = std::chrono::microseconds(8);

thread_local PollCounts counts;
thread_local std::uint64_t poll_round = 1;  // Comms start at round 0: their first test progresses

// mpirun gives every rank both counts; without them (no mpirun, another
// launcher) nothing is known about where the other ranks run.
bool EveryRankOnThisMachine() {
  const char* local_ranks = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char* ranks = getenv("OMPI_COMM_WORLD_SIZE");
  return local_ranks && ranks && std::string_view(local_ranks) == ranks;
}

// MPI counts are int: a message holds fewer than 2^31 floats (8 GiB), far
// more than any model here.
int CountOf(std::size_t elements) { return static_cast<int>(elements); }

}  // namespace

int RequiredMpiThreadLevel() { return MPI_THREAD_FUNNELED; }

void SetTransportDefaults() {
  constexpr const char* kOneMebibyte = "1048576";
  for (const char* name : {"OMPI_MCA_btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_rndv_eager_limit",
                           "OMPI_MCA_btl_tcp_max_send_size"}) {
    setenv(name, kOneMebibyte, /*overwrite=*/0);
  }
  setenv("OMPI_MCA_pml", "ob1", /*overwrite=*/0);
  const bool one_machine = EveryRankOnThisMachine();
  const bool interfaces_named =
      getenv("OMPI_MCA_btl_tcp_if_include") || getenv("OMPI_MCA_btl_tcp_if_exclude");
  if (one_machine && !interfaces_named) {
    setenv("OMPI_MCA_btl_tcp_if_include", "127.0.0.1/8", /*overwrite=*/0);
  }
}

void PollUntil(const std::function<Progress()>& step, double* wait_s) {
  // The kernel may stretch a sleep by the thread's timer slack (50 us by
  // default), more than the sleep itself; ask for precise wake-ups.
  static thread_local const bool precise_sleeps = prctl(PR_SET_TIMERSLACK, 1UL) == 0;
  (void)precise_sleeps;
  const bool spin = EveryRankOnThisMachine();
  const auto start = std::chrono::steady_clock::now();
  auto advanced = start;  // when `step` last made progress
  useconds_t sleep_us = kFirstSleepUs;
  for (;;) {
    NewPollRound();
    const Progress progress = step();
    ++counts.polls;
    if (progress == Progress::kDone) break;
    const auto now = std::chrono::steady_clock::now();
    if (progress == Progress::kAdvanced) {
      advanced = now;
      sleep_us = kFirstSleepUs;
      continue;
    }
    if (spin && now - advanced < kSpin) {
      sched_yield();
      ++counts.yields;
      continue;
    }
    usleep(sleep_us);
    counts.slept_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - now).count();
    counts.sleep_asked_s += 1e-6 * sleep_us;
    ++counts.sleeps;
    sleep_us = std::min(kLongestSleepUs, sleep_us + sleep_us / 4);
  }
  *wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

PollCounts PollCountsOfThisThread() { return counts; }

void NewPollRound() { ++poll_round; }

struct Comm::Handle {
  MPI_Comm comm = MPI_COMM_NULL;
  // Comm::Progress's scratch, kept to spare an allocation per poll.
  std::vector<MPI_Request> handles;
  std::vector<MPI_Request*> owners;
  std::vector<int> indices;
};

Comm::Comm() : handle_(std::make_unique<Handle>()) {
  MPI_Comm_dup(MPI_COMM_WORLD, &handle_->comm);
  MPI_Comm_rank(handle_->comm, &rank_);
  MPI_Comm_size(handle_->comm, &size_);
}

Comm::~Comm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && handle_->comm != MPI_COMM_NULL) MPI_Comm_free(&handle_->comm);
}

struct Requests::Pending {
  std::vector<MPI_Request> requests;
};

void Comm::Progress() {
  if (progressed_round_ == poll_round) return;
  progressed_round_ = poll_round;
  const bool collective = std::any_of(requests_.begin(), requests_.end(), [](const Requests* set) {
    return set->collective_ && !set->pending_->requests.empty();
  });
  const int passes = collective ? kCollectivePasses : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const auto began = std::chrono::steady_clock::now();
    if (!TestPending()) return;
    if (std::chrono::steady_clock::now() - began < kBusyPass) return;
  }
}

bool Comm::TestPending() {
  Handle& h = *handle_;
  h.handles.clear();
  h.owners.clear();
  for (Requests* set : requests_) {
    for (MPI_Request& request : set->pending_->requests) {
      if (request == MPI_REQUEST_NULL) continue;
      h.handles.push_back(request);
      h.owners.push_back(&request);
    }
  }
  if (h.handles.empty()) return false;
  h.indices.resize(h.handles.size());
  int completed = 0;
  // Frees each completed request and sets its handle to MPI_REQUEST_NULL.
  MPI_Testsome(static_cast<int>(h.handles.size()), h.handles.data(), &completed, h.indices.data(),
               MPI_STATUSES_IGNORE);
  for (std::size_t i = 0; i < h.handles.size(); ++i) *h.owners[i] = h.handles[i];
  return true;
}

Requests::Requests(Comm* comm) : comm_(comm), pending_(std::make_unique<Pending>()) {
  comm_->requests_.push_back(this);
}

Requests::~Requests() {
  std::erase(comm_->requests_, this);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Request& request : pending_->requests) {
    if (request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&request);
    MPI_Request_free(&request);
  }
}

void Requests::Send(std::span<const float> data, int peer, int tag) { PostSend(data, peer, tag, false); }

void Requests::SendAcknowledged(std::span<const float> data, int peer, int tag) { PostSend(data, peer, tag, true); }

void Requests::PostSend(std::span<const float> data, int peer, int tag, bool acknowledged) {
  MPI_Request& request = pending_->requests.emplace_back(MPI_REQUEST_NULL);
  (acknowledged ? MPI_Issend : MPI_Isend)(data.data(), CountOf(data.size()), MPI_FLOAT, peer, tag,
                                          comm_->handle_->comm, &request);
  comm_->traffic_.bytes_sent += data.size_bytes();
  comm_->traffic_.messages_sent += 1;
}

void Requests::Receive(std::span<float> data, int peer, int tag) {
  MPI_Request& request = pending_->requests.emplace_back(MPI_REQUEST_NULL);
  MPI_Irecv(data.data(), CountOf(data.size()), MPI_FLOAT, peer, tag, comm_->handle_->comm, &request);
  comm_->traffic_.bytes_received += data.size_bytes();
}

void Requests::AllreduceSum(std::span<const float> data, std::span<float> sums) {
  MPI_Request& request = pending_->requests.emplace_back(MPI_REQUEST_NULL);
  MPI_Iallreduce(data.data(), sums.data(), CountOf(data.size()), MPI_FLOAT, MPI_SUM,
                 comm_->handle_->comm, &request);
  collective_ = true;
  // What leaves this rank depends on Open MPI's algorithm; count the buffer once.
  comm_->traffic_.bytes_sent += data.size_bytes();
  comm_->traffic_.bytes_received += data.size_bytes();
  comm_->traffic_.messages_sent += 1;
}

bool Requests::Test() {
  std::vector<MPI_Request>& requests = pending_->requests;
  if (requests.empty()) return true;
  comm_->Progress();
  if (std::any_of(requests.begin(), requests.end(),
                  [](MPI_Request request) { return request != MPI_REQUEST_NULL; })) {
    return false;
  }
  requests.clear();
  collective_ = false;
  return true;
}

}  // namespace dmlbench
