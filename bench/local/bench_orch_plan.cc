// Plan-time cost of the matrix: reads and expands a 10,000-run experiment
// (4 architectures, ps with 1 or 2 servers, 40 worker counts, 50 batch
// sizes, a split rule) and computes every run key. Prints the median over
// repeated trials; the target for a whole `plan` is <= 1 s, of which
// this is the part that does not touch the database.
//   build-dir/bench/bench_orch_plan [trials]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "orchestrator/matrix/matrix.h"

namespace {

constexpr std::size_t kExpectedRuns = 10000;

std::string List(int from, int to) {
  std::string list = "[";
  for (int i = from; i <= to; ++i) list += std::to_string(i) + (i < to ? ", " : "]");
  return list;
}

// ring, mpi, p2p, ps k=1, ps k=2: 5 x 40 workers x 50 batch sizes = 10,000.
std::string TenThousandRunMatrix() {
  return "[experiment]\nname = \"bench\"\n"
         "[defaults]\nmax_iterations_per_epoch = 10\n"
         "[matrix]\n"
         "architecture = [\"ring\", \"mpi\", \"ps\", \"p2p\"]\n"
         "servers = [1, 2]\n"
         "workers = " + List(1, 40) + "\n"
         "batch_size = " + List(1, 50) + "\n"
         "[split]\ncalibration = { workers = [1] }\n";
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  int trials = argc > 1 ? std::atoi(argv[1]) : 11;
  if (trials < 1) {
    std::fprintf(stderr, "usage: bench_orch_plan [trials >= 1]\n");
    return 2;
  }
  const std::string text = TenThousandRunMatrix();
  const std::string trainer_sha256(64, 'a');
  const std::string dataset_sha256(64, 'b');
  std::vector<double> expand_ms, keys_ms, total_ms;
  std::size_t checksum = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto start = std::chrono::steady_clock::now();
    dmlbench::Experiment experiment = dmlbench::ParseExperiment(text, "bench.toml");
    double expanded = MillisecondsSince(start);
    auto keys_start = std::chrono::steady_clock::now();
    for (const dmlbench::PlannedRun& run : experiment.runs) {
      checksum += dmlbench::RunKey(run.params, trainer_sha256, dataset_sha256)[0];
    }
    keys_ms.push_back(MillisecondsSince(keys_start));
    expand_ms.push_back(expanded);
    total_ms.push_back(MillisecondsSince(start));
    if (experiment.runs.size() != kExpectedRuns) {
      std::fprintf(stderr, "expected %zu runs, got %zu\n", kExpectedRuns, experiment.runs.size());
      return 1;
    }
  }
  double median = Median(total_ms);
  std::printf("matrix plan, %zu runs, %d trials: median %.1f ms (read+expand %.1f ms, "
              "run keys %.1f ms); target <= 1000 ms: %s [checksum %zu]\n",
              kExpectedRuns, trials, median, Median(expand_ms), Median(keys_ms),
              median <= 1000 ? "met" : "MISSED", checksum);
  return median <= 1000 ? 0 : 1;
}
