// Tests of `dmlbench model judge` as users run it: on a small synthetic
// sweep (its text, its JSON, that it writes nothing, its refusals), and on
// the five committed sweeps of the paper's study, where its figures must be
// well-formed, be what docs/model-judgements.md records for the models'
// current versions and be what README.md's results summary quotes. No
// other test pins a model's figures on committed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sha256.h"
#include "orchestrator/model/models.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/model_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;
using testing::ReadFile;
using testing::TempDir;

class ModelJudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(db_);
    testing::AddLinearSweep(store);
  }

  TempDir dir_;
  std::string db_ = dir_ / "sweep.db";
};

TEST_F(ModelJudgeTest, PrintsEachSchemesErrorBesideTheSplitHalfAndTheIntervalsCoverage) {
  const std::string before = Sha256Hex(ReadFile(db_));
  const CommandOutput judged = Dmlbench({"model", "judge", "--model", "linear", db_});
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  EXPECT_NE(judged.out.find("sweep  model      architecture  val configs  median   p95   max  split half  covered  "
                            "coverage  half-width\n"),
            std::string::npos)
      << judged.out;
  const std::string row = "\nsweep  linear v" + std::to_string(ModelNamed("linear").version()) + "  ";
  EXPECT_NE(judged.out.find(row + "mpi  "), std::string::npos) << judged.out;
  EXPECT_NE(judged.out.find(row + "ring  "), std::string::npos) << judged.out;
  EXPECT_NE(judged.out.find("  sweep: linear has no interval of its own beyond its calibration's workers"),
            std::string::npos)
      << judged.out;
  EXPECT_EQ(Sha256Hex(ReadFile(db_)), before) << "judge wrote into the database";
}

TEST_F(ModelJudgeTest, JsonHoldsEveryFigureOfEveryScheme) {
  const CommandOutput judged = Dmlbench({"model", "judge", "--model", "linear", "--json", "--level", "0.8", db_});
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  const nlohmann::json json = nlohmann::json::parse(judged.out);
  EXPECT_EQ(json["level"], 0.8);
  ASSERT_EQ(json["sweeps"].size(), 1u);
  const nlohmann::json& sweep = json["sweeps"][0];
  EXPECT_EQ(sweep["sweep"], "sweep");
  EXPECT_EQ(sweep["database"], db_);
  ASSERT_EQ(sweep["models"].size(), 1u);
  const nlohmann::json& linear = sweep["models"][0];
  EXPECT_EQ(linear["model"], "linear");
  EXPECT_EQ(linear["calibration_configurations"], 10);
  EXPECT_EQ(linear["interval"]["level"], 0.8);
  // Two configurations at the largest worker count are too few for an
  // interval of their own beyond it (interval.h, BeyondWorkersRow).
  EXPECT_TRUE(linear["interval"]["beyond_workers"].is_null()) << judged.out;
  ASSERT_EQ(linear["schemes"].size(), 2u);
  for (const nlohmann::json& scheme : linear["schemes"]) {
    EXPECT_EQ(scheme["validation_configurations"], 4);
    EXPECT_EQ(scheme["split_half_configurations"], 4);
    EXPECT_GT(scheme["split_half_median"].get<double>(), 0);
    EXPECT_LE(scheme["median_abs_error"].get<double>(), scheme["max_abs_error"].get<double>());
    EXPECT_DOUBLE_EQ(scheme["coverage"].get<double>(), scheme["covered"].get<int>() / 4.0);
    EXPECT_GT(scheme["median_half_width"].get<double>(), 0);
  }
}

// Error paths of judge follow.
TEST_F(ModelJudgeTest, ALevelOutsideZeroToOneIsRefused) {
  const CommandOutput judged = Dmlbench({"model", "judge", "--level", "1.5", db_});
  EXPECT_NE(judged.exit_code, 0);
  EXPECT_NE(judged.err.find("--level must be between 0 and 1 (e.g. 0.9), got 1.5"), std::string::npos) << judged.err;
}

TEST_F(ModelJudgeTest, ADatabaseThatIsNotThereIsRefused) {
  const CommandOutput judged = Dmlbench({"model", "judge", dir_ / "none.db"});
  EXPECT_NE(judged.exit_code, 0);
  EXPECT_NE(judged.err.find("none.db"), std::string::npos) << judged.err;
}

// ---- the committed sweeps ---------------------------------------------------

const char* const kCommittedSweeps[] = {"paper-reproduction", "paper-reproduction-rerun", "paper-reproduction-rerun2",
                                        "paper-reproduction-rerun3", "paper-reproduction-adaptive"};

// The rows of judge's table: the lines that start with a sweep's name.
std::vector<std::string> TableRows(const std::string& text) {
  std::vector<std::string> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    for (const char* sweep : kCommittedSweeps) {
      if (line.starts_with(std::string(sweep) + " ")) {
        rows.push_back(line);
        break;
      }
    }
  }
  return rows;
}

// The model and version of a row ("corrected v19").
std::string ModelOf(const std::string& row) {
  static const std::regex model(R"(^\S+\s+(\S+ v\d+)\s)");
  std::smatch match;
  return std::regex_search(row, match, model) ? match[1].str() : "";
}

// The rows docs/model-judgements.md records last for each model version:
// a judgement (a section "## date: ...") that records rows of a version
// supersedes an earlier one's, as when a new way of computing the interval
// judges the same model versions again.
std::map<std::string, std::vector<std::string>> LatestRecordedRows(const std::string& log) {
  std::map<std::string, std::vector<std::string>> latest;
  std::string section;
  const auto close_section = [&] {
    std::map<std::string, std::vector<std::string>> here;
    for (const std::string& row : TableRows(section)) here[ModelOf(row)].push_back(row);
    for (auto& [model, rows] : here) latest[model] = std::move(rows);
    section.clear();
  };
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("## ")) close_section();
    section += line + "\n";
  }
  close_section();
  return latest;
}

// `model judge` of the recorded models on the five committed sweeps: every
// figure well-formed, and every row docs/model-judgements.md records for a
// model at its current version printed exactly so; every judged model has
// its current version recorded; and README.md's results summary is what
// scripts/results-summary makes of this very output. A change of a model's
// equations raises its version, so it fails here until the new judgement
// is recorded and the summary regenerated.
TEST(ModelJudgeCommittedTest, TheCommittedSweepsJudgeAsTheJudgementLogAndTheReadmeRecord) {
  std::vector<std::string> databases;
  for (const char* sweep : kCommittedSweeps) {
    databases.push_back(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/" + sweep + ".db");
  }
  std::vector<std::string> args = {"model", "judge", "--model", "paper2019", "--model", "linear",
                                   "--model", "corrected", "--model", "counts"};
  args.insert(args.end(), databases.begin(), databases.end());
  const CommandOutput judged = Dmlbench(args, 900);
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  const std::vector<std::string> rows = TableRows(judged.out);
  ASSERT_FALSE(rows.empty()) << judged.out;

  // sweep, model vN, architecture (one or two words), configurations,
  // median, p95, max, split half, covered/n, coverage, half-width.
  static const std::regex row_form(
      R"(^\S+\s+\S+ v\d+\s+\S+( k=\d| \S+)?\s+(\d+)\s+(\d+\.\d)%\s+(\d+\.\d)%\s+(\d+\.\d)%\s+(\d+\.\d)%\s+)"
      R"((\d+)/(\d+)\s+(\d+\.\d)%\s+(\d+\.\d)%$)");
  std::set<std::string> judged_models;
  for (const std::string& row : rows) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(row, m, row_form)) << "not well-formed: " << row;
    const int configurations = std::stoi(m[2]);
    EXPECT_GT(configurations, 0) << row;
    EXPECT_LE(std::stod(m[3]), std::stod(m[4])) << row;
    EXPECT_LE(std::stod(m[4]), std::stod(m[5])) << row;
    EXPECT_LE(std::stoi(m[7]), std::stoi(m[8])) << row;
    EXPECT_EQ(std::stoi(m[8]), configurations) << row;
    EXPECT_GT(std::stod(m[10]), 0) << row;
    judged_models.insert(ModelOf(row));
  }
  EXPECT_EQ(judged_models.size(), 4u) << judged.out;

  // What the log records last for the current versions: every row, and
  // no fewer than judge prints.
  const std::string log = ReadFile(std::string(DMLBENCH_SOURCE_DIR) + "/docs/model-judgements.md");
  const std::map<std::string, std::vector<std::string>> recorded = LatestRecordedRows(log);
  // Each interval beyond the calibration's workers, as the log records it.
  std::istringstream lines(judged.out);
  int beyond_notes = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("'s interval beyond ") == std::string::npos) continue;
    ++beyond_notes;
    EXPECT_NE(log.find(line + "\n"), std::string::npos) << "docs/model-judgements.md does not record:\n" << line;
  }
  EXPECT_EQ(beyond_notes, 20) << "4 models on 5 sweeps, each with 12 configurations at 4 workers\n" << judged.out;
  const std::set<std::string> printed(rows.begin(), rows.end());
  for (const std::string& model : judged_models) {
    const auto it = recorded.find(model);
    if (it == recorded.end()) {
      ADD_FAILURE() << model << " is not recorded in docs/model-judgements.md: judge it and record the output there";
      continue;
    }
    for (const std::string& row : it->second) {
      EXPECT_TRUE(printed.count(row)) << "docs/model-judgements.md records, but judge does not print:\n" << row;
    }
    const auto printed_of_model = std::count_if(rows.begin(), rows.end(),
                                                [&](const std::string& row) { return ModelOf(row) == model; });
    EXPECT_EQ(static_cast<std::ptrdiff_t>(it->second.size()), printed_of_model)
        << "docs/model-judgements.md's latest judgement of " << model << " does not record every row judge prints";
  }

  // What the README quotes: its summary, generated from this judgement.
  TempDir dir;
  const std::string judgement = dir / "judged.txt";
  testing::WriteFile(judgement, judged.out);
  std::vector<std::string> summary = {std::string(DMLBENCH_SOURCE_DIR) + "/scripts/results-summary",
                                      testing::DmlbenchProgram()};
  summary.insert(summary.end(), databases.begin(), databases.end());
  summary.insert(summary.end(), {"--judged", judgement, "--check", std::string(DMLBENCH_SOURCE_DIR) + "/README.md"});
  const CommandOutput checked = RunCommand(summary, 120);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
}

}  // namespace
}  // namespace dmlbench
