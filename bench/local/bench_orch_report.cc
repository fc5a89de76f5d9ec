// Benchmark: `dmlbench report` of a paper-sized study (the shape of
// experiments/paper-reproduction.toml, settling.toml and overlap.toml: 624
// runs of 2 epochs, every model fitted and validated), regenerated from
// scratch: tables, figures (gnuplot, SVG and PNG) and the page. Prints the
// median and range over the repetitions. Target: 5 s.
//   bench_orch_report [--reps N] [--out DIR]   (--out keeps the last report there, to look at)
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/report/report.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace bench = dmlbench::bench;

int main(int argc, char** argv) {
  int reps = 5;
  std::string out;
  CLI::App app("dmlbench report of a paper-sized study, regenerated from scratch");
  bench::AddRepetitions(app, &reps);
  app.add_option("--out", out, "keep the last report in this directory, to look at");
  CLI11_PARSE(app, argc, argv);
  dmlbench::testing::TempDir dir;
  if (out.empty()) out = dir / "out";
  dmlbench::testing::BuildReportStudy(dir / "study.db", {.fit_models = true, .paper_sized = true});
  const std::vector<double> seconds = bench::Repeat(0, reps, [&] {
    std::filesystem::remove_all(out);
    dmlbench::ReportOptions options;
    options.database = dir / "study.db";
    options.out_dir = out;
    options.definition = std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml";
    return bench::TimeSeconds([&] { dmlbench::GenerateReport(options); });
  });
  std::printf("report of a paper-sized study (624 runs): %s\n",
              bench::Describe(bench::Summarize(seconds), 1, "s", 2).c_str());
  return 0;
}
