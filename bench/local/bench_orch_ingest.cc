// Ingest throughput: trainer event lines (schemas/trainer-events.md) parsed
// and stored into a fresh SQLite file through Ingest, as the run loop does
// (a burst like this one is group-committed, see ingest.h). Counts epoch
// rows plus per-rank phase rows per second; prints the median of several
// repetitions, by wall time and by this process's CPU time (the machine may
// be shared). Target: >= 100,000 rows/s.
// Usage: bench_orch_ingest [--epochs N] [--ranks R] [--repetitions K]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "common/sha256.h"
#include "orchestrator/ingest/ingest.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace bench = dmlbench::bench;

int main(int argc, char** argv) {
  int epochs = 2000, ranks = 8, repetitions = 5;
  CLI::App app("trainer events parsed and stored into a fresh database, rows per second");
  app.add_option("--epochs", epochs, "epochs per run")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--ranks", ranks, "ranks per epoch")->capture_default_str()->check(CLI::PositiveNumber);
  bench::AddRepetitions(app, &repetitions, 1, "--repetitions");
  CLI11_PARSE(app, argc, argv);
  dmlbench::testing::RunFacts facts;
  facts.workers = ranks;
  facts.epochs = epochs;
  dmlbench::LaunchedRun launched;
  launched.params.workers = ranks;
  launched.params.epochs = epochs;
  launched.dataset_sha256 = facts.dataset_sha256;
  std::vector<std::string> lines = {dmlbench::testing::RunStartLine(facts)};
  for (int e = 1; e <= epochs; ++e) lines.push_back(dmlbench::testing::EpochLine(e, ranks));
  lines.push_back(dmlbench::testing::RunEndLine());
  const double rows = static_cast<double>(epochs) * (1 + ranks);

  std::vector<double> rates, cpu_rates;
  for (int rep = 0; rep < repetitions; ++rep) {
    dmlbench::testing::TempDir dir;
    dmlbench::Store store(dir / "bench.db");
    dmlbench::Experiment experiment;
    experiment.name = "bench";
    experiment.source_path = "bench.toml";
    experiment.source_text = "bench";
    experiment.source_sha256 = dmlbench::Sha256Hex("bench");
    dmlbench::PlannedRun run;
    run.split = "validation";
    dmlbench::RunProvenance provenance{std::string(64, 't'), "synthetic", std::nullopt, std::nullopt};
    const auto run_id = store.AddRun(store.AddExperiment(experiment, 0), run, std::string(64, 'k'), provenance);
    const auto attempt_id = store.BeginAttempt(run_id, 0);

    const double start = bench::WallSeconds();
    const double cpu_start = bench::CpuSeconds(bench::CpuOf::kProcess);
    dmlbench::Ingest ingest(store, run_id, attempt_id, launched);
    for (const std::string& line : lines) ingest.Consume(line);
    const double seconds = bench::WallSeconds() - start;
    const double cpu_seconds = bench::CpuSeconds(bench::CpuOf::kProcess) - cpu_start;
    if (!ingest.run_end_ok() || !ingest.error().empty()) {
      std::fprintf(stderr, "bench_orch_ingest: ingest failed: %s\n", ingest.error().c_str());
      return 1;
    }
    rates.push_back(rows / seconds);
    cpu_rates.push_back(rows / cpu_seconds);
    std::printf("repetition %d: %.0f rows in %.3f s wall (%.0f rows/s), %.3f s CPU (%.0f rows/s)\n", rep + 1, rows,
                seconds, rows / seconds, cpu_seconds, rows / cpu_seconds);
  }
  std::printf("median: %.0f rows/s by wall time, %.0f rows/s by CPU time "
              "(%d epochs x (1 epoch row + %d rank rows), bursts group-committed)\n",
              bench::Summarize(rates).median, bench::Summarize(cpu_rates).median, epochs, ranks);
  return 0;
}
