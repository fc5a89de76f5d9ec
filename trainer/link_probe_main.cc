// dmlbench-linkprobe: MPI ping-pong between rank 0 and rank 1 (two emulated
// hosts) over message sizes from --min-bytes to --max-bytes, each a power of
// two apart. Rank 0 prints one JSON line per size on standard output:
//   {"event":"link_probe","format_version":1,"message_bytes":..,
//    "repetitions":..,"median_round_trip_s":..,"median_one_way_s":..,
//    "bandwidth_bytes_per_s":..,"hosts":["h0","h1"]}
// Waiting polls MPI_Test: it spins for a short while (so that small messages
// measure the link, not a sleep) and then sleeps between tests, so that a
// rank under a CPU quota does not burn its share while a large message is
// in flight. Emulated hosts share this machine's cores, so each rank takes a
// core of its own, as it would have on its own host, and a spin yields the
// core in case the peer has to answer from it. Fits of alpha and B are the
// orchestrator's job.
#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trainer/poll.h"

#ifdef DMLBENCH_SANITIZE_BUILD
// Sanitizer build: no leak report at exit. Open MPI's allocations that
// outlive MPI_Finalize sit in plug-ins it has unloaded, where LeakSanitizer
// can neither attribute nor suppress them; ranks started over ssh get no
// ASAN_OPTIONS from the test, so the default lives in the binary.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace {

constexpr double kSpinS = 0.001;          // spin this long before sleeping
constexpr auto kSleep = std::chrono::microseconds(20);

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Wait(MPI_Request* request) {
  const double start = Now();
  int done = 0;
  MPI_Test(request, &done, MPI_STATUS_IGNORE);
  while (!done) {
    if (Now() - start > kSpinS) {
      std::this_thread::sleep_for(kSleep);
    } else {
      // When both ranks may use only the same core, a spin that does not
      // yield holds the core the answer has to come from: every one-way time
      // was the whole spin plus a sleep (1.03 ms; 16 us yielding).
      std::this_thread::yield();
    }
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
  }
}

void Send(std::vector<char>& buffer, std::size_t bytes, int peer) {
  MPI_Request request;
  MPI_Isend(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &request);
  Wait(&request);
}

void Receive(std::vector<char>& buffer, std::size_t bytes, int peer) {
  MPI_Request request;
  MPI_Irecv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &request);
  Wait(&request);
}

// Moves the calling thread to the rank-th of the CPUs it may use; leaves it
// where it is when it may use only one. Left to the scheduler, the two ranks
// shared one core in 10 of 23 probes on a busy 2-core machine (0.4 core per
// host), and small messages then took 15 us to 1 ms one way: the time the
// scheduler took to hand over the core. On cores of their own: 10-15 us
// (TCP between the same hosts: 10 us).
void TakeACoreOfItsOwn(int rank) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  int skip = rank % CPU_COUNT(&allowed);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || skip-- > 0) continue;
    cpu_set_t own;
    CPU_ZERO(&own);
    CPU_SET(cpu, &own);
    // Failing leaves the rank to the scheduler: slower, still correct.
    sched_setaffinity(0, sizeof own, &own);
    return;
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The probe's options, as given on the command line.
struct ProbeOptions {
  std::size_t min_bytes = 1;
  std::size_t max_bytes = 4 << 20;
  int repetitions = 10;
  double max_seconds_per_size = 2;
};

void AddOptions(CLI::App& app, ProbeOptions& options) {
  app.add_option("--min-bytes", options.min_bytes, "smallest message")->check(CLI::Range(1, 1 << 30));
  app.add_option("--max-bytes", options.max_bytes, "largest message")->check(CLI::Range(1, 1 << 30));
  app.add_option("--repetitions", options.repetitions, "round trips per size (after one warm-up)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-seconds-per-size", options.max_seconds_per_size,
                 "stop repeating a size after this long (at least 3 round trips)")
      ->check(CLI::PositiveNumber);
}

// Both ranks' hostnames, indexed by rank.
std::vector<std::string> ExchangeHostnames(int rank, int peer) {
  std::vector<std::string> hosts(2);
  char mine[256] = {};
  char theirs[256] = {};
  const std::string name = Hostname();
  name.copy(mine, sizeof mine - 1);
  MPI_Sendrecv(mine, sizeof mine, MPI_CHAR, peer, 1, theirs, sizeof theirs, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  hosts[rank] = mine;
  hosts[peer] = theirs;
  return hosts;
}

// A warm-up round trip, whose time decides how many to measure: at least
// 3, at most --repetitions, about --max-seconds-per-size in all. Rank 0
// decides and tells rank 1; both return the count.
int WarmUpAndCount(std::vector<char>& buffer, std::size_t bytes, int rank, int peer, const ProbeOptions& options) {
  int count = 0;
  if (rank == 0) {
    const double start = Now();
    Send(buffer, bytes, peer);
    Receive(buffer, bytes, peer);
    const double warm_up = Now() - start;
    count = std::clamp(static_cast<int>(options.max_seconds_per_size / warm_up), 3,
                       std::max(options.repetitions, 3));
    std::vector<char> count_message(reinterpret_cast<char*>(&count), reinterpret_cast<char*>(&count) + sizeof count);
    Send(count_message, sizeof count, peer);
  } else {
    Receive(buffer, bytes, peer);
    Send(buffer, bytes, peer);
    std::vector<char> count_message(sizeof count);
    Receive(count_message, sizeof count, peer);
    std::copy(count_message.begin(), count_message.end(), reinterpret_cast<char*>(&count));
  }
  return count;
}

// `count` round trips of `bytes`: rank 0 sends first and returns the time
// of each; rank 1 answers and returns none.
std::vector<double> RoundTrips(std::vector<char>& buffer, std::size_t bytes, int rank, int peer, int count) {
  std::vector<double> round_trips;
  for (int i = 0; i < count; ++i) {
    if (rank == 0) {
      const double start = Now();
      Send(buffer, bytes, peer);
      Receive(buffer, bytes, peer);
      round_trips.push_back(Now() - start);
    } else {
      Receive(buffer, bytes, peer);
      Send(buffer, bytes, peer);
    }
  }
  return round_trips;
}

// The JSON line of one message size (the format in this file's header).
void PrintLine(std::size_t bytes, const std::vector<double>& round_trips, const std::vector<std::string>& hosts) {
  const double round_trip = Median(round_trips);
  const double one_way = round_trip / 2;
  const nlohmann::json line = {{"event", "link_probe"},
                               {"format_version", 1},
                               {"message_bytes", bytes},
                               {"repetitions", round_trips.size()},
                               {"median_round_trip_s", round_trip},
                               {"median_one_way_s", one_way},
                               {"bandwidth_bytes_per_s", static_cast<double>(bytes) / one_way},
                               {"hosts", hosts}};
  std::cout << line.dump() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MPI ping-pong between two hosts: latency and bandwidth per message size"};
  ProbeOptions options;
  AddOptions(app, options);
  CLI11_PARSE(app, argc, argv);
  if (options.min_bytes > options.max_bytes) {
    std::cerr << "dmlbench-linkprobe: error: --min-bytes " << options.min_bytes << " exceeds --max-bytes "
              << options.max_bytes << "\n";
    return 2;
  }
  // Precise short sleeps: the default 50 us timer slack would dominate.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

  // The messages are timed the way the trainer sends them.
  dmlbench::SetTransportDefaults();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::cerr << "dmlbench-linkprobe: error: needs exactly 2 ranks, got " << size << "\n";
    MPI_Finalize();
    return 2;
  }
  TakeACoreOfItsOwn(rank);
  const int peer = 1 - rank;
  const std::vector<std::string> hosts = ExchangeHostnames(rank, peer);

  std::vector<char> buffer(options.max_bytes, 'x');
  for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
    const int count = WarmUpAndCount(buffer, bytes, rank, peer, options);
    const std::vector<double> round_trips = RoundTrips(buffer, bytes, rank, peer, count);
    if (rank == 0) PrintLine(bytes, round_trips, hosts);
    if (bytes > options.max_bytes / 2) break;
  }
  MPI_Finalize();
  return 0;
}
