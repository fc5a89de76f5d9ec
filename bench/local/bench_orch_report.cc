// Benchmark: `dmlbench report` of a paper-sized study (the shape of
// experiments/paper-reproduction.toml, settling.toml and overlap.toml: 624
// runs of 2 epochs, every model fitted and validated), regenerated from
// scratch: tables, figures (gnuplot, SVG and PNG) and the page. Prints the
// median and range over the repetitions. Target: 5 s.
//   bench_orch_report [--reps N] [--out DIR]   (--out keeps the last report there, to look at)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "orchestrator/report/report.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

int main(int argc, char** argv) {
  int reps = 5;
  std::string out;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--out") == 0) out = argv[i + 1];
  }
  dmlbench::testing::TempDir dir;
  if (out.empty()) out = dir / "out";
  dmlbench::testing::BuildReportStudy(dir / "study.db", {.fit_models = true, .paper_sized = true});
  std::vector<double> seconds;
  for (int rep = 0; rep < reps; ++rep) {
    std::filesystem::remove_all(out);
    dmlbench::ReportOptions options;
    options.database = dir / "study.db";
    options.out_dir = out;
    options.definition = std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml";
    const auto start = std::chrono::steady_clock::now();
    dmlbench::GenerateReport(options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("report of a paper-sized study (624 runs): median %.2f s, min %.2f s, max %.2f s over %d runs\n",
              seconds[seconds.size() / 2], seconds.front(), seconds.back(), reps);
  return 0;
}
