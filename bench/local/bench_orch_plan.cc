// Plan-time cost of the matrix: reads and expands a 10,000-run experiment
// (4 architectures, ps with 1 or 2 servers, 40 worker counts, 50 batch
// sizes, a split rule) and computes every run key. Prints the median over
// repeated trials; the target for a whole `plan` is <= 1 s, of which
// this is the part that does not touch the database.
//   build-dir/bench/bench_orch_plan [trials]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/matrix/matrix.h"

namespace {

namespace bench = dmlbench::bench;

constexpr std::size_t kExpectedRuns = 10000;
constexpr double kTargetMs = 1000;

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

}  // namespace

int main(int argc, char** argv) {
  int trials = 11;
  CLI::App app("expand a 10,000-run matrix and compute its run keys, median of the trials");
  bench::AddRepetitions(app, &trials, 1, "trials", "trials");
  CLI11_PARSE(app, argc, argv);

  const std::string text = TenThousandRunMatrix();
  const std::string trainer_sha256(64, 'a');
  const std::string dataset_sha256(64, 'b');
  std::vector<double> expand_ms, keys_ms, total_ms;
  std::size_t checksum = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const double start = bench::WallSeconds();
    dmlbench::Experiment experiment = dmlbench::ParseExperiment(text, "bench.toml");
    const double expanded = bench::WallSeconds();
    for (const dmlbench::PlannedRun& run : experiment.runs) {
      checksum += dmlbench::RunKey(run.params, trainer_sha256, dataset_sha256)[0];
    }
    const double keyed = bench::WallSeconds();
    expand_ms.push_back(1e3 * (expanded - start));
    keys_ms.push_back(1e3 * (keyed - expanded));
    total_ms.push_back(1e3 * (keyed - start));
    if (experiment.runs.size() != kExpectedRuns) {
      std::fprintf(stderr, "expected %zu runs, got %zu\n", kExpectedRuns, experiment.runs.size());
      return 1;
    }
  }
  const double median = bench::Summarize(total_ms).median;
  std::printf("matrix plan, %zu runs, %d trials: median %.1f ms (read+expand %.1f ms, "
              "run keys %.1f ms); target <= %.0f ms: %s [checksum %zu]\n",
              kExpectedRuns, trials, median, bench::Summarize(expand_ms).median, bench::Summarize(keys_ms).median,
              kTargetMs, median <= kTargetMs ? "met" : "MISSED", checksum);
  return median <= kTargetMs ? 0 : 1;
}
