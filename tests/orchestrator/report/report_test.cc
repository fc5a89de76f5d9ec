// Tests of orchestrator/report on real SQLite files with the committed
// reports/ definition and real gnuplot: the golden tables and pages of a
// small study, byte-identical regeneration (figures included), a database
// that never changes, empty and partial databases that say what is missing,
// and hostile names: an output path that would run code if pasted into a
// gnuplot command, and database text that would be markup if not escaped.
#include "orchestrator/report/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "common/sha256.h"
#include "orchestrator/report/definition.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::BuildReportStudy;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

const std::string kDefinition = std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml";
const std::string kGolden = std::string(DMLBENCH_SOURCE_DIR) + "/tests/orchestrator/report/golden";

ReportSummary Generate(const std::string& db, const std::string& out) {
  ReportOptions options;
  options.database = db;
  options.out_dir = out;
  options.definition = kDefinition;
  return GenerateReport(options);
}

// Every file under `dir`, relative to it, sorted.
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), dir).string());
  }
  return files;
}

bool IsFigure(const std::string& file) { return file.ends_with(".svg") || file.ends_with(".png"); }

// The rows of a figure's tab-separated data file, split into fields; the
// header line (starting with #) is left out.
std::vector<std::vector<std::string>> TsvRows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(ReadFile(path));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

class ReportTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// The tables, data files and pages of the small study are the committed
// ones (DMLBENCH_UPDATE_GOLDEN=1 rewrites them after a deliberate change).
// The database's own sha256 is masked: the fits' last bits, and so the
// file, may differ between compilers and sanitizer builds; the next test
// checks it is stable within one build.
TEST_F(ReportTest, SmallStudyMatchesTheGoldenFiles) {
  BuildReportStudy(dir_ / "study.db");
  const ReportSummary summary = Generate(dir_ / "study.db", dir_ / "out");
  EXPECT_EQ(summary.tables, 13);
  EXPECT_EQ(summary.figures, 6);
  ASSERT_EQ(summary.missing.size(), 1u);
  EXPECT_EQ(summary.missing[0], "failures: Every run that was started completed.");
  const std::string database_sha256 = Sha256FileHex(dir_ / "study.db");
  auto masked = [&](std::string text) {
    for (std::size_t at; (at = text.find(database_sha256)) != std::string::npos;) {
      text.replace(at, database_sha256.size(), "DATABASE-SHA256");
    }
    return text;
  };
  std::set<std::string> generated;
  for (const std::string& file : FilesUnder(dir_ / "out")) {
    if (!IsFigure(file)) generated.insert(file);
  }
  if (std::getenv("DMLBENCH_UPDATE_GOLDEN") != nullptr) {
    fs::remove_all(kGolden);
    for (const std::string& file : generated) {
      fs::create_directories((fs::path(kGolden) / file).parent_path());
      WriteFile((fs::path(kGolden) / file).string(), masked(ReadFile(dir_ / ("out/" + file))));
    }
  }
  EXPECT_EQ(generated, FilesUnder(kGolden));
  for (const std::string& file : generated) {
    EXPECT_EQ(masked(ReadFile(dir_ / ("out/" + file))), ReadFile((fs::path(kGolden) / file).string())) << file;
  }
  for (const char* figure :
       {"throughput_ranking", "throughput", "predicted_vs_measured", "error_cdf", "time_breakdown",
        "iteration_series"}) {
    for (const char* format : {".svg", ".png"}) {
      EXPECT_GT(fs::file_size(dir_ / ("out/figures/" + std::string(figure) + format)), 5000u) << figure << format;
    }
  }
}

// The bound line is a bound: no configuration's median throughput lies
// above it by more than the study's noise (its runs spread up to 2% around
// the truth, and the truth of a one-worker ps sits on the bound), and every
// configuration of the study has one.
TEST_F(ReportTest, NoMeasuredThroughputBeatsItsBound) {
  BuildReportStudy(dir_ / "study.db");
  Generate(dir_ / "study.db", dir_ / "out");
  std::map<std::pair<std::string, std::string>, double> bound;  // (series, workers) -> samples/s
  for (const auto& row : TsvRows(dir_ / "out/figures/throughput.bound.tsv")) {
    ASSERT_EQ(row.size(), 5u);
    bound[{row[0], row[3]}] = std::stod(row[4]);
  }
  const auto measured = TsvRows(dir_ / "out/figures/throughput.measured.tsv");
  ASSERT_FALSE(measured.empty());
  for (const auto& row : measured) {
    ASSERT_GE(row.size(), 7u);
    const auto found = bound.find({row[0], row[5]});
    ASSERT_NE(found, bound.end()) << row[0] << " w=" << row[5];
    EXPECT_LE(std::stod(row[6]), 1.02 * found->second) << row[0] << " w=" << row[5];
  }
}

// The per-iteration figure: one run per scheme, the median run of the
// largest configuration at the main batch size (4 workers, batch 100, 1
// Gbit/s, overlap off), every iteration of both its epochs numbered through
// the run, the warm-up epoch's marked and visibly slower at its start.
TEST_F(ReportTest, TheIterationSeriesShowsOneRunPerSchemeWithItsWarmUpMarked) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  Generate(dir_ / "study.db", dir_ / "out");
  // block scheme, panel, run, epoch, iteration, iteration_ms, warmup
  const auto rows = TsvRows(dir_ / "out/figures/iteration_series.iterations.tsv");
  std::map<std::string, std::vector<std::vector<std::string>>> by_scheme;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 7u);
    by_scheme[row[0]].push_back(row);
  }
  ASSERT_EQ(by_scheme.size(), 3u);
  const std::map<std::string, std::string> panels = {{"ps k=1", "1"}, {"p2p", "2"}, {"ring", "3"}};
  const std::int64_t iterations = 60000 / (100 * 4);
  for (const auto& [scheme, series] : by_scheme) {
    ASSERT_TRUE(panels.contains(scheme)) << scheme;
    ASSERT_EQ(series.size(), std::size_t(2 * iterations)) << scheme;
    double warmup_first = 0, steady_sum = 0;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const auto& row = series[i];
      EXPECT_EQ(row[1], panels.at(scheme));
      EXPECT_EQ(row[2], scheme + " w=4 b=100 1gbit") << "one run per scheme";
      const bool warmup = std::int64_t(i) < iterations;
      EXPECT_EQ(row[3], warmup ? "1" : "2") << scheme << " row " << i;
      EXPECT_EQ(row[4], std::to_string(i + 1)) << scheme;
      EXPECT_EQ(row[6], warmup ? "1" : "0") << scheme << " iteration " << i + 1;
      if (i == 0) warmup_first = std::stod(row[5]);
      if (!warmup) steady_sum += std::stod(row[5]);
    }
    EXPECT_GT(warmup_first, 3 * steady_sum / double(iterations)) << scheme;
  }
  // The epochs of the same runs: both epochs, their spans, the warm-up
  // first; the steady epoch is the median (third of six) of its configuration.
  const auto epochs = TsvRows(dir_ / "out/figures/iteration_series.epochs.tsv");
  ASSERT_EQ(epochs.size(), 6u);
  Store store(dir_ / "study.db", Store::Mode::kReadOnly);
  for (const auto& row : epochs) {
    ASSERT_EQ(row.size(), 8u);
    EXPECT_EQ(row[2], row[0] + " w=4 b=100 1gbit");
    const bool warmup = row[3] == "1";
    EXPECT_EQ(row[4], warmup ? "1" : std::to_string(iterations + 1));
    EXPECT_EQ(row[5], std::to_string(warmup ? iterations : 2 * iterations));
    EXPECT_EQ(row[7], warmup ? "1" : "0");
    if (warmup) continue;
    const QueryResult median = store.Query(
        "SELECT wall_s FROM complete_epochs WHERE architecture = '" + row[0].substr(0, row[0].find(' ')) +
        "' AND workers = 4 AND batch_size = 100 AND overlap = 0 AND epoch = 2 ORDER BY wall_s LIMIT 1 OFFSET 2");
    ASSERT_EQ(median.rows.size(), 1u);
    EXPECT_NEAR(std::stod(row[6]) * double(iterations) / 1e3, std::get<double>(median.rows[0][0]), 1e-4) << row[0];
  }
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_EQ(html.find("No per-iteration times"), std::string::npos);
  EXPECT_GT(fs::file_size(dir_ / "out/figures/iteration_series.png"), 5000u);
}

// Runs stored without per-iteration times (their trainer did not report
// them) still give the figure, drawn from the epoch means, and the page
// says what is missing.
TEST_F(ReportTest, WithoutIterationTimesTheSeriesFallsBackToEpochMeans) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  { Store(dir_ / "study.db").Query("DELETE FROM iterations"); }
  const ReportSummary summary = Generate(dir_ / "study.db", dir_ / "out");
  for (const std::string& missing : summary.missing) EXPECT_FALSE(missing.starts_with("iteration_series")) << missing;
  EXPECT_EQ(TsvRows(dir_ / "out/figures/iteration_series.epochs.tsv").size(), 6u);
  EXPECT_TRUE(TsvRows(dir_ / "out/figures/iteration_series.iterations.tsv").empty());
  EXPECT_GT(fs::file_size(dir_ / "out/figures/iteration_series.png"), 5000u);
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_NE(html.find("No per-iteration times for these runs: their trainer did not report them, so each epoch&#39;s "
                      "mean is drawn instead."),
            std::string::npos);
}

TEST_F(ReportTest, TheSameDatabaseGivesByteIdenticalFilesAndIsNotChanged) {
  BuildReportStudy(dir_ / "study.db");
  const std::string before = Sha256FileHex(dir_ / "study.db");
  Generate(dir_ / "study.db", dir_ / "first");
  Generate(dir_ / "study.db", dir_ / "second");
  EXPECT_EQ(Sha256FileHex(dir_ / "study.db"), before);
  const std::set<std::string> files = FilesUnder(dir_ / "first");
  EXPECT_EQ(files, FilesUnder(dir_ / "second"));
  int figures = 0;
  for (const std::string& file : files) {
    figures += IsFigure(file);
    EXPECT_EQ(ReadFile(dir_ / ("first/" + file)), ReadFile(dir_ / ("second/" + file))) << file;
  }
  EXPECT_EQ(figures, 12);
  // Regenerating over an older report leaves the same files.
  Generate(dir_ / "study.db", dir_ / "first");
  for (const std::string& file : files) {
    EXPECT_EQ(ReadFile(dir_ / ("first/" + file)), ReadFile(dir_ / ("second/" + file))) << file;
  }
}

TEST_F(ReportTest, TheFooterHoldsTheProvenanceAndNoClock) {
  BuildReportStudy(dir_ / "study.db");
  Generate(dir_ / "study.db", dir_ / "out");
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_NE(html.find("study.db sha256 " + Sha256FileHex(dir_ / "study.db")), std::string::npos);
  EXPECT_NE(html.find("experiments/model-test.toml, matrix sha256 " + Sha256Hex("name = 'model-test'") + ", 102 runs"),
            std::string::npos);
  EXPECT_NE(html.find("<td>trainer sha256</td><td class=\"long\">" + std::string(64, 't') + "</td>"),
            std::string::npos);
  EXPECT_NE(html.find("1970-01-01 00:00:02 to 1970-01-01 00:00:03"), std::string::npos);
  EXPECT_EQ(html.find(dir_.path()), std::string::npos) << "a path of this machine is in the page";
}

TEST_F(ReportTest, AnEmptyDatabaseSaysWhatIsMissingInEverySection) {
  WriteFile(dir_ / "empty.db", "");
  const ReportSummary summary = Generate(dir_ / "empty.db", dir_ / "out");
  EXPECT_EQ(summary.tables, 0);
  EXPECT_EQ(summary.figures, 0);
  EXPECT_EQ(summary.missing.size(), 20u);
  EXPECT_EQ(summary.missing[0], "factors: This database cannot give it: no such table: runs (its schema version is 0, "
                                "this dmlbench's is " + std::to_string(Store::KnownSchemaVersion()) + ").");
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_NE(html.find("<p class=\"missing\">This database cannot give it: no such table: runs"), std::string::npos);
  EXPECT_TRUE(FilesUnder(dir_ / "out/tables").empty());
  EXPECT_FALSE(fs::exists(dir_ / "out/figures"));  // no figure, no directory
}

TEST_F(ReportTest, ADatabaseWithoutFitsShowsMeasurementsAndSaysWhatTheModelsNeed) {
  BuildReportStudy(dir_ / "runs.db", {.fit_models = false});
  const ReportSummary summary = Generate(dir_ / "runs.db", dir_ / "out");
  const std::vector<std::string> expected = {
      "parameters: No model fit in this database: run dmlbench --db DB model fit (it needs complete calibration runs "
      "and a link probe of their profiles).",
      "errors: No predictions in this database: run dmlbench --db DB model fit, then dmlbench --db DB model validate.",
      "intervals: No prediction with an interval in this database: run dmlbench --db DB model fit (each fit carries "
      "its interval when it has 9 calibration configurations or more), then dmlbench --db DB model validate.",
      "interval_points: No prediction with an interval in this database: run dmlbench --db DB model fit, then "
      "dmlbench --db DB model validate.",
      "cpu: No prediction with a CPU account in this database: run dmlbench --db DB model fit, then dmlbench --db DB "
      "model validate (the corrected models keep one, for runs whose trainer reported each rank's CPU time).",
      "predicted_vs_measured: No predictions in this database: run dmlbench --db DB model fit, then dmlbench --db DB "
      "model validate.",
      "error_cdf: No predictions in this database: run dmlbench --db DB model fit, then dmlbench --db DB model validate.",
      "failures: Every run that was started completed."};
  EXPECT_EQ(summary.missing, expected);
  EXPECT_TRUE(fs::exists(dir_ / "out/figures/throughput.svg"));
  EXPECT_TRUE(fs::exists(dir_ / "out/tables/settling.csv"));
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_NE(html.find("No model lines: the database has no predictions"), std::string::npos);
}

TEST_F(ReportTest, ASectionThatBecameEmptyLeavesNoStaleFiles) {
  BuildReportStudy(dir_ / "study.db");
  Generate(dir_ / "study.db", dir_ / "out");
  ASSERT_TRUE(fs::exists(dir_ / "out/figures/error_cdf.png"));
  BuildReportStudy(dir_ / "runs.db", {.fit_models = false});
  Generate(dir_ / "runs.db", dir_ / "out");
  EXPECT_FALSE(fs::exists(dir_ / "out/figures/error_cdf.png"));
  EXPECT_FALSE(fs::exists(dir_ / "out/figures/error_cdf.errors.tsv"));
  EXPECT_FALSE(fs::exists(dir_ / "out/tables/errors.md"));
}

// Output and database paths named to break out of a quoted gnuplot string
// (or to be a pipe): pasted into a command, system() would create a file
// named "pwned" where gnuplot runs.
TEST_F(ReportTest, PathsAreNeverCodeForGnuplot) {
  BuildReportStudy(dir_ / "study.db");
  const std::string payload = "x'; system(\"touch pwned\"); y=\"\"; print '";
  Generate(dir_ / "study.db", dir_ / payload);
  EXPECT_GT(fs::file_size(fs::path(dir_ / payload) / "figures/throughput.png"), 5000u);
  Generate(dir_ / "study.db", dir_ / ("|touch pwned; " + payload));
  fs::copy_file(dir_ / "study.db", dir_ / (payload + ".db"));
  Generate(dir_ / (payload + ".db"), dir_ / "out");
  for (const std::string& file : FilesUnder(dir_.path())) EXPECT_FALSE(file.ends_with("pwned")) << file;
  EXPECT_FALSE(fs::exists("pwned"));
}

TEST_F(ReportTest, EveryTextFromTheDatabaseIsEscapedInTheHtml) {
  const std::string name = "<img src=x onerror=alert(1)>&'\".db";
  BuildReportStudy(dir_ / name);
  {
    Store store(dir_ / name);
    Experiment hostile;
    hostile.name = "<script>alert(\"x\")</script>";
    hostile.source_path = "a&b<c>.toml";
    hostile.source_text = "x";
    hostile.source_sha256 = Sha256Hex("x");
    store.AddExperiment(hostile, 5);
  }
  Generate(dir_ / name, dir_ / "out");
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;&amp;&#39;&quot;.db"), std::string::npos);
  EXPECT_NE(html.find("experiment &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a&amp;b&lt;c&gt;.toml"), std::string::npos);
}

// A scope narrows every section to its runs: the ring's alone, said at the
// top of the page; the other schemes are in no table and no figure.
TEST_F(ReportTest, AScopeNarrowsEverySectionToItsRuns) {
  BuildReportStudy(dir_ / "study.db");
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "out";
  options.definition = kDefinition;
  options.scope.only = "architecture=ring";
  const ReportSummary summary = GenerateReport(options);
  EXPECT_EQ(summary.covers, "54 of the 102 runs: --only architecture=ring");
  const std::string html = ReadFile(dir_ / "out/index.html");
  EXPECT_NE(html.find("<p class=\"scope\">Runs covered: 54 of the 102 runs: --only architecture=ring.</p>"),
            std::string::npos);
  std::istringstream rows(ReadFile(dir_ / "out/tables/configurations.csv"));
  std::string line;
  std::getline(rows, line);  // the header
  int configurations = 0;
  while (std::getline(rows, line)) {
    EXPECT_TRUE(line.starts_with("ring ")) << line;
    ++configurations;
  }
  EXPECT_EQ(configurations, 9);
  for (const auto& row : TsvRows(dir_ / "out/figures/throughput.measured.tsv")) EXPECT_EQ(row[0].substr(0, 5), "ring ");
  // The runs in the factors and the hosts' attempts are the ring's too.
  EXPECT_NE(ReadFile(dir_ / "out/tables/factors.csv").find("runs,\"54 complete"), std::string::npos);
  EXPECT_EQ(ReadFile(dir_ / "out/tables/factors.csv").find("p2p"), std::string::npos);
}

// The experiment and the tag choose with the filter: every condition holds.
TEST_F(ReportTest, AScopeOfAnExperimentAndATag) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  {
    Store store(dir_ / "study.db");
    for (const RunRecord& run : store.Runs()) {
      if (run.params.workers == 4) store.TagRun(run.run_id, {"four"}, 5);
    }
  }
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "out";
  options.definition = kDefinition;
  options.scope = {.experiment = "model-test", .tag = "four", .only = "architecture=p2p|ps"};
  const ReportSummary summary = GenerateReport(options);
  EXPECT_EQ(summary.covers, "12 of the 102 runs: experiment model-test, tag four, --only architecture=p2p|ps");
  options.scope = {};
  options.out_dir = dir_ / "all";
  EXPECT_EQ(GenerateReport(options).covers, "all 102 runs (experiment model-test)");
}

// An invalid steady epoch is left out of a scoped report as of any other,
// and named only by the report whose scope holds its run.
TEST_F(ReportTest, AScopedReportLeavesOutItsRunsInvalidEpochsAlone) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  {
    Store(dir_ / "study.db")
        .Query("UPDATE epochs SET wall_s = -1 WHERE rowid = (SELECT e.rowid FROM epochs e JOIN runs r USING (run_id) "
               "WHERE r.architecture = 'ring' AND e.epoch = 2 ORDER BY e.rowid LIMIT 1)");
  }
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "ring";
  options.definition = kDefinition;
  options.scope.only = "architecture=ring";
  const ReportSummary ring = GenerateReport(options);
  ASSERT_EQ(ring.left_out.size(), 1u);
  EXPECT_NE(ring.left_out[0].find("wall_s = -1 is not a positive finite time"), std::string::npos) << ring.left_out[0];
  options.out_dir = dir_ / "p2p";
  options.scope.only = "architecture=p2p";
  EXPECT_TRUE(GenerateReport(options).left_out.empty());
}

// Error paths of report.cc follow.

TEST_F(ReportTest, AScopeThatChoosesNothingSaysWhy) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "out";
  options.definition = kDefinition;
  auto message = [&](const ReportScope& scope) {
    options.scope = scope;
    try {
      GenerateReport(options);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string db = dir_ / "study.db";
  EXPECT_EQ(message({.experiment = "quickstart"}),
            "--experiment quickstart: no experiment of that name in " + db + "; it has model-test");
  EXPECT_EQ(message({.tag = "baseline"}), "--tag baseline: no run in " + db + " has that tag");
  EXPECT_EQ(message({.only = "workers>=64"}),
            "the scope (--only workers>=64) chooses none of the 102 runs in " + db);
  EXPECT_EQ(message({.only = "workers>="}), "--only: column 10: expected a value after '>='");
}

TEST_F(ReportTest, AMissingDatabaseIsAnError) {
  try {
    Generate(dir_ / "none.db", dir_ / "out");
    FAIL() << "no error";
  } catch (const ReportError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "none.db") + ": no such database (it is created by `dmlbench run MATRIX`)");
  }
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(ReportTest, AnSqlFileThatFailsOnACurrentDatabaseNamesItself) {
  BuildReportStudy(dir_ / "study.db");
  fs::create_directories(dir_ / "def/sql");
  WriteFile(dir_ / "def/report.toml",
            "title = \"t\"\n[[section]]\nid = \"a\"\ntitle = \"A\"\ntable = \"sql/a.sql\"\nempty = \"none\"\n");
  WriteFile(dir_ / "def/sql/a.sql", "SELECT no_such_column FROM runs");
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "out";
  options.definition = dir_ / "def/report.toml";
  try {
    GenerateReport(options);
    FAIL() << "no error";
  } catch (const ReportError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "def/sql/a.sql") + ": no such column: no_such_column");
  }
}

TEST_F(ReportTest, AFailingTemplateQuotesGnuplot) {
  BuildReportStudy(dir_ / "study.db", {.fit_models = false});
  fs::create_directories(dir_ / "def");
  WriteFile(dir_ / "def/report.toml",
            "title = \"t\"\n[[section]]\nid = \"f\"\ntitle = \"F\"\nfigure = \"f.gp\"\nempty = \"none\"\n"
            "data = [{ name = \"d\", sql = \"d.sql\" }]\n");
  WriteFile(dir_ / "def/d.sql", "SELECT 'b', workers FROM runs");
  WriteFile(dir_ / "def/f.gp", "plot no_such_variable\n");
  ReportOptions options;
  options.database = dir_ / "study.db";
  options.out_dir = dir_ / "out";
  options.definition = dir_ / "def/report.toml";
  try {
    GenerateReport(options);
    FAIL() << "no error";
  } catch (const ReportError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with((dir_ / "def/f.gp") + ": gnuplot failed (exit status 1): ")) << message;
    EXPECT_NE(message.find("undefined variable: no_such_variable"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dmlbench
