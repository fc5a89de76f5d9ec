// Ring allreduce and MPI_Iallreduce (both polled, never a blocking wait; the
// Iallreduce out of place into a kept buffer, as the `mpi` scheme calls it)
// against blocking MPI_Allreduce, for the model's buffer (104,938 floats,
// 0.42 MB) and 16 MB. Per repetition the time is the slowest rank's; the
// three are interleaved and the medians over repetitions printed, with each
// polled one's ratio to blocking (the target at 0.42 MB: at most 1.5).
//   mpirun --oversubscribe -np 4 build/bench/bench_allreduce
// --breakdown shows where the time of a 0.42 MB allreduce goes instead: per
// ring step the wait for the left neighbour's chunk (posted -> arrived) and
// the reduce, from the ring's timeline spans; per call of either scheme the
// polls and the poll's sleeps, asked for and actually slept.
//   mpirun --oversubscribe -np 4 build/bench/bench_allreduce --breakdown
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/local/harness.h"
#include "trainer/allreduce_mpi.h"
#include "trainer/allreduce_ring.h"
#include "trainer/poll.h"
#include "trainer/timeline.h"

namespace {

using dmlbench::Comm;
namespace bench = dmlbench::bench;
using bench::Summarize;

constexpr std::size_t kModelFloats = 104938;
constexpr double kTargetRatio = 1.5;

// Seconds of one call on the slowest rank.
double TimeOnce(const std::function<void()>& allreduce) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double mine = bench::TimeSeconds(allreduce);
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// Runs one allreduce of a scheme to completion through the trainer's poll.
void RunToCompletion(dmlbench::BucketExchange* allreduce) {
  double wait_s = 0;
  allreduce->Start();
  dmlbench::PollUntil([allreduce] { return allreduce->Advance(); }, &wait_s);
}

void Compare(Comm& comm, int small_repetitions, int large_repetitions) {
  if (comm.rank() == 0) {
    std::printf("%-10s %6s %9s %14s %12s %14s %20s\n", "bytes", "ranks", "ring_ms",
                "iallreduce_ms", "blocking_ms", "ring/blocking", "iallreduce/blocking");
  }
  struct Size {
    std::size_t floats;
    int repetitions;
  };
  for (const Size size :
       {Size{kModelFloats, small_repetitions}, Size{std::size_t{4} << 20, large_repetitions}}) {
    std::vector<float> data(size.floats, 1.0f);
    std::vector<float> sums(size.floats);
    dmlbench::RingAllreduce ring(&comm, data, /*tag=*/0);
    dmlbench::MpiAllreduce iallreduce(&comm, data, sums);
    const auto run_ring = [&] { RunToCompletion(&ring); };
    const auto run_iallreduce = [&] { RunToCompletion(&iallreduce); };
    const auto run_blocking = [&] {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    };
    for (int warmup = 0; warmup < 3; ++warmup) {
      TimeOnce(run_ring);
      TimeOnce(run_iallreduce);
      TimeOnce(run_blocking);
    }
    // Interleaved, so that drift in the machine's load hits all alike.
    std::vector<double> ring_s, iallreduce_s, blocking_s;
    for (int r = 0; r < size.repetitions; ++r) {
      std::fill(data.begin(), data.end(), 1.0f);
      ring_s.push_back(TimeOnce(run_ring));
      std::fill(data.begin(), data.end(), 1.0f);
      iallreduce_s.push_back(TimeOnce(run_iallreduce));
      std::fill(data.begin(), data.end(), 1.0f);
      blocking_s.push_back(TimeOnce(run_blocking));
    }
    if (comm.rank() == 0) {
      const double ring_median = Summarize(ring_s).median;
      const double iallreduce_median = Summarize(iallreduce_s).median;
      const double blocking = Summarize(blocking_s).median;
      std::printf("%-10zu %6d %9.3f %14.3f %12.3f %13.2fx %19.2fx\n", size.floats * sizeof(float),
                  comm.size(), 1e3 * ring_median, 1e3 * iallreduce_median, 1e3 * blocking,
                  ring_median / blocking, iallreduce_median / blocking);
      if (size.floats == kModelFloats) {
        const bool met =
            ring_median <= kTargetRatio * blocking && iallreduce_median <= kTargetRatio * blocking;
        std::printf("target at %zu bytes, both polled allreduces <= %.1fx blocking: %s\n",
                    size.floats * sizeof(float), kTargetRatio, met ? "met" : "NOT met");
      }
    }
  }
}

// Poll counts per call, averaged over every rank.
struct PerCall {
  double polls = 0, yields = 0, sleeps = 0, asked_ms = 0, slept_ms = 0;
};

PerCall AveragePerCall(const dmlbench::PollCounts& counts, int calls, int ranks) {
  double mine[5] = {double(counts.polls), double(counts.yields), double(counts.sleeps),
                    1e3 * counts.sleep_asked_s, 1e3 * counts.slept_s};
  double all[5] = {};
  MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double n = double(calls) * ranks;
  return PerCall{all[0] / n, all[1] / n, all[2] / n, all[3] / n, all[4] / n};
}

dmlbench::PollCounts Minus(const dmlbench::PollCounts& a, const dmlbench::PollCounts& b) {
  return dmlbench::PollCounts{a.polls - b.polls, a.yields - b.yields, a.sleeps - b.sleeps,
                              a.slept_s - b.slept_s, a.sleep_asked_s - b.sleep_asked_s};
}

void Add(dmlbench::PollCounts* sum, const dmlbench::PollCounts& delta) {
  sum->polls += delta.polls;
  sum->yields += delta.yields;
  sum->sleeps += delta.sleeps;
  sum->slept_s += delta.slept_s;
  sum->sleep_asked_s += delta.sleep_asked_s;
}

void Breakdown(Comm& comm, int repetitions) {
  const int w = comm.size();
  std::vector<float> data(kModelFloats, 1.0f);
  std::vector<float> sums(kModelFloats);
  dmlbench::Timeline timeline(/*enabled=*/true);
  dmlbench::RingAllreduce ring(&comm, data, /*tag=*/0, &timeline, /*track=*/1);
  dmlbench::MpiAllreduce iallreduce(&comm, data, sums);
  for (int warmup = 0; warmup < 3; ++warmup) {
    TimeOnce([&] { RunToCompletion(&iallreduce); });
  }
  dmlbench::PollCounts ring_counts, iallreduce_counts;
  std::vector<double> ring_s, iallreduce_s;
  MPI_Barrier(MPI_COMM_WORLD);
  timeline.SetOrigin();
  for (int r = 0; r < repetitions; ++r) {
    std::fill(data.begin(), data.end(), 1.0f);
    dmlbench::PollCounts before = dmlbench::PollCountsOfThisThread();
    ring_s.push_back(TimeOnce([&] { RunToCompletion(&ring); }));
    Add(&ring_counts, Minus(dmlbench::PollCountsOfThisThread(), before));
    before = dmlbench::PollCountsOfThisThread();
    iallreduce_s.push_back(TimeOnce([&] { RunToCompletion(&iallreduce); }));
    Add(&iallreduce_counts, Minus(dmlbench::PollCountsOfThisThread(), before));
  }
  const PerCall ring_per_call = AveragePerCall(ring_counts, repetitions, w);
  const PerCall iallreduce_per_call = AveragePerCall(iallreduce_counts, repetitions, w);

  // Every rank's spans, gathered into one file by rank 0.
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("bench_allreduce_timeline." + std::to_string(getpid()));
  timeline.Write(path.string(), comm.rank(), {});
  if (comm.rank() != 0) return;
  nlohmann::json trace;
  std::ifstream(path) >> trace;
  std::filesystem::remove(path);
  // Per rank, the spans in order: 2(w-1) steps and w-1 reduces per call.
  std::map<int, int> steps_seen, reduces_seen;
  std::vector<std::vector<double>> step_us(2 * (w - 1)), reduce_us(w - 1);
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    const std::string name = event["name"];
    const int rank = event["pid"];
    const double dur = event["dur"];
    if (name == "ring.reduce_scatter" || name == "ring.allgather") {
      step_us[steps_seen[rank]++ % step_us.size()].push_back(dur);
    } else if (name == "ring.reduce") {
      reduce_us[reduces_seen[rank]++ % reduce_us.size()].push_back(dur);
    }
  }
  std::printf("where the time of an allreduce of %zu bytes on %d ranks goes, %d repetitions\n",
              kModelFloats * sizeof(float), w, repetitions);
  std::printf("ring steps over repetitions and ranks, median (mean) in us:\n");
  std::printf("  %-16s %20s %16s\n", "step", "posted->arrived", "reduce");
  double steps_total_us = 0;
  for (std::size_t s = 0; s < step_us.size(); ++s) {
    const bool reduce_scatter = s < reduce_us.size();
    const std::string label = (reduce_scatter ? "reduce-scatter " : "allgather ") +
                              std::to_string(reduce_scatter ? s + 1 : s + 1 - reduce_us.size());
    const bench::Summary wait = Summarize(step_us[s]);
    steps_total_us += wait.mean;
    if (reduce_scatter) {
      const bench::Summary reduce = Summarize(reduce_us[s]);
      steps_total_us += reduce.mean;
      std::printf("  %-16s %9.1f (%8.1f) %6.1f (%7.1f)\n", label.c_str(), wait.median, wait.mean, reduce.median,
                  reduce.mean);
    } else {
      std::printf("  %-16s %9.1f (%8.1f) %16s\n", label.c_str(), wait.median, wait.mean, "-");
    }
  }
  std::printf("  sum of the means: %.3f ms\n", 1e-3 * steps_total_us);
  std::printf("per call, mean over ranks (wall: median of the slowest rank):\n");
  std::printf("  %-11s %8s %8s %8s %8s %14s %9s\n", "scheme", "wall_ms", "polls", "yields",
              "sleeps", "sleep_asked_ms", "slept_ms");
  for (const auto& [name, wall, per_call] :
       {std::tuple{"ring", Summarize(ring_s).median, ring_per_call},
        std::tuple{"iallreduce", Summarize(iallreduce_s).median, iallreduce_per_call}}) {
    std::printf("  %-11s %8.3f %8.1f %8.1f %8.1f %14.3f %9.3f\n", name, 1e3 * wall,
                per_call.polls, per_call.yields, per_call.sleeps, per_call.asked_ms,
                per_call.slept_ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  CLI::App app("polled ring and MPI_Iallreduce against blocking MPI_Allreduce, medians");
  int small_repetitions = 300;
  int large_repetitions = 40;
  bool breakdown = false;
  bench::AddRepetitions(app, &small_repetitions, 1, "--small-repetitions", "repetitions for 0.42 MB");
  bench::AddRepetitions(app, &large_repetitions, 1, "--large-repetitions", "repetitions for 16 MB");
  app.add_flag("--breakdown", breakdown,
               "where the time of a 0.42 MB allreduce goes (ring steps, polls, sleeps); "
               "--small-repetitions of each");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }
  {
    Comm comm;
    if (breakdown) {
      Breakdown(comm, small_repetitions);
    } else {
      Compare(comm, small_repetitions, large_repetitions);
    }
  }
  MPI_Finalize();
  return 0;
}
