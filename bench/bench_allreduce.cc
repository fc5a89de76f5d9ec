// Ring allreduce vs MPI_Iallreduce (both polled, never a blocking wait; the
// Iallreduce out of place into a kept buffer, as the `mpi` scheme calls it), and
// blocking MPI_Allreduce for reference, for the model's buffer (104,938
// floats, 0.42 MB) and 16 MB. Per repetition the time is the slowest rank's;
// the median over repetitions is printed. Run it through mpirun, e.g.
//   mpirun --oversubscribe -np 4 build/bench/bench_allreduce
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "trainer/allreduce_mpi.h"
#include "trainer/allreduce_ring.h"
#include "trainer/poll.h"

namespace {

using dmlbench::Comm;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Seconds of one call on the slowest rank.
double TimeOnce(const std::function<void()>& allreduce) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  allreduce();
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  CLI::App app("ring vs MPI allreduce, medians over repetitions");
  int small_repetitions = 300;
  int large_repetitions = 40;
  app.add_option("--small-repetitions", small_repetitions, "repetitions for 0.42 MB");
  app.add_option("--large-repetitions", large_repetitions, "repetitions for 16 MB");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    MPI_Finalize();
    return code;
  }
  {
    Comm comm;
    if (comm.rank() == 0) {
      std::printf("%-10s %6s %12s %14s %18s %10s\n", "bytes", "ranks", "ring_ms",
                  "iallreduce_ms", "blocking_allreduce_ms", "ring_speed");
    }
    struct Size {
      std::size_t floats;
      int repetitions;
    };
    for (const Size size : {Size{104938, small_repetitions}, Size{std::size_t{4} << 20, large_repetitions}}) {
      std::vector<float> data(size.floats, 1.0f);
      std::vector<float> sums(size.floats);
      double wait_s = 0;
      std::vector<double> ring, iallreduce, blocking;
      const auto run_ring = [&] { dmlbench::RingAllreduceSum(&comm, data, &wait_s); };
      const auto run_iallreduce = [&] { dmlbench::MpiAllreduceSum(&comm, data, sums, &wait_s); };
      const auto run_blocking = [&] {
        MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      };
      for (int warmup = 0; warmup < 3; ++warmup) {
        TimeOnce(run_ring);
        TimeOnce(run_iallreduce);
      }
      // Interleaved, so that drift in the machine's load hits all alike.
      for (int r = 0; r < size.repetitions; ++r) {
        std::fill(data.begin(), data.end(), 1.0f);
        ring.push_back(TimeOnce(run_ring));
        std::fill(data.begin(), data.end(), 1.0f);
        iallreduce.push_back(TimeOnce(run_iallreduce));
        if (r < std::max(5, size.repetitions / 10)) blocking.push_back(TimeOnce(run_blocking));
      }
      if (comm.rank() == 0) {
        std::printf("%-10zu %6d %12.3f %14.3f %18.3f %10.2f\n", size.floats * sizeof(float),
                    comm.size(), 1e3 * Median(ring), 1e3 * Median(iallreduce),
                    1e3 * Median(blocking), Median(iallreduce) / Median(ring));
      }
    }
  }
  MPI_Finalize();
  return 0;
}
