// Tests of `dmlbench model recommend` as users run it, on the committed
// study's database with the emulated cluster's catalog: every epoch time it
// ranks is the one `model predict` prints for the row's settings, totals and
// costs follow from it, a deadline no candidate meets keeps none, and a
// malformed catalog is named at its file, line and column. Then the
// honesty checks, on the report's small study and on a copy of the
// committed validation's calibration, each fitted by `model fit --model
// corrected`: under a deadline that the cheapest candidate's interval
// crosses, every ranked epoch time and interval is the one `model predict`
// prints, the crossing is said, and the pick at the interval's upper end is
// named beside the point estimate's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrator/recommend/answer.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;
using testing::TempDir;

const std::string kDb = std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db";
const std::string kCatalog = std::string(DMLBENCH_SOURCE_DIR) + "/experiments/instances/emulated-cluster.toml";

std::string Short(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::vector<std::string> Recommend(const std::string& goal, const std::string& value) {
  return {"--db", kDb, "model", "recommend", "--catalog", kCatalog, "--epochs", "10", "--workers", "1,2,4",
          "--servers", "1,2", goal, value, "--json"};
}

TEST(ModelRecommendTest, EveryRankedEpochTimeIsWhatPredictPrints) {
  const CommandOutput out = Dmlbench(Recommend("--deadline", "1h"));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const nlohmann::json json = nlohmann::json::parse(out.out);
  ASSERT_FALSE(json["ranked"].empty());
  for (const nlohmann::json& row : json["ranked"]) {
    std::vector<std::string> args = {"--db", kDb, "model", "predict", "--fit", std::to_string(json["fit"].get<int>())};
    std::string settings = row["predict_settings"], word;
    std::istringstream words(settings);
    while (words >> word) args.push_back(word);
    const CommandOutput predicted = Dmlbench(args);
    ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
    const double epoch = row["epoch_s"];
    EXPECT_NE(predicted.out.find("  " + Short(epoch) + "  "), std::string::npos)
        << settings << ": recommend " << Short(epoch) << ", predict:\n" << predicted.out;
    EXPECT_DOUBLE_EQ(row["total_s"].get<double>(), 10 * epoch);
    EXPECT_LE(row["total_s"].get<double>(), 3600);
  }
}

// The question of docs/recommend.md: every candidate meets half an hour,
// which one line says; the one-worker candidates that predict alike (no
// exchange, so any scheme on either link) are one row each that says how
// many it stands for; money is in the catalog's currency, never with an
// exponent.
TEST(ModelRecommendTest, TheDocsQuestionMergesCandidatesAlikeAndSaysEveryOneMeetsTheDeadline) {
  const CommandOutput out = Dmlbench({"--db", kDb, "model", "recommend", "--catalog", kCatalog, "--epochs", "10",
                                      "--workers", "1,2,4,8", "--servers", "1,2", "--deadline", "30m"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\nevery one of the 80 candidates meets the deadline at its point estimate and at its "
                         "interval's upper end: the ranking is by cost alone\n"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("  #1 stands for 6 candidates of the same predicted time and cost: ring w=1 b=100 on "
                         "cpu0.15-100mbit, cpu0.15-1gbit; mpi w=1 b=100 on cpu0.15-100mbit, cpu0.15-1gbit; p2p w=1 "
                         "b=100 on cpu0.15-100mbit, cpu0.15-1gbit\n"),
            std::string::npos)
      << out.out;
  EXPECT_FALSE(std::regex_search(out.out, std::regex("[0-9]e-[0-9]"))) << out.out;
  EXPECT_NE(out.out.find(" USD "), std::string::npos) << out.out;
  // No two rows of the table alike but for their rank.
  std::set<std::string> rows;
  std::istringstream lines(out.out.substr(out.out.find("----")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && line.find("  #") != 0 && line.find("  and ") != 0) {
    EXPECT_TRUE(rows.insert(line.substr(6)).second) << "a row alike another but for its rank:\n" << out.out;
  }
  EXPECT_EQ(rows.size(), 10u) << out.out;
}

// Edge cases of the goal follow.
TEST(ModelRecommendTest, ADeadlineNoCandidateMeetsKeepsNoneAndRulesEveryOneOut) {
  const CommandOutput out = Dmlbench(Recommend("--deadline", "0.001s"));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const nlohmann::json json = nlohmann::json::parse(out.out);
  EXPECT_TRUE(json["ranked"].empty());
  EXPECT_TRUE(json["at_point_estimate"].is_null());
  EXPECT_EQ(json["ruled_out"].size(), json["candidates"].get<std::size_t>());
}

TEST(ModelRecommendTest, UnderABudgetTheFastestComesFirstAndNoneCostsMore) {
  const CommandOutput out = Dmlbench(Recommend("--budget", "0.001"));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const nlohmann::json json = nlohmann::json::parse(out.out);
  double last = 0;
  for (const nlohmann::json& row : json["ranked"]) {
    EXPECT_LE(row["cost"].get<double>(), 0.001);
    EXPECT_GE(row["total_s"].get<double>(), last);
    last = row["total_s"];
  }
}

TEST(ModelRecommendTest, AMalformedDurationIsRefused) {
  const CommandOutput out = Dmlbench(Recommend("--deadline", "2x"));
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("a duration must be numbers with units d, h, m or s (e.g. 2h, 90m, 1h30m), got \"2x\""),
            std::string::npos)
      << out.err;
}

TEST(ModelRecommendTest, AMalformedCatalogIsNamedAtItsLineAndColumn) {
  TempDir dir;
  const std::string catalog = dir / "bad.toml";
  std::ofstream(catalog) << "format_version = 1\ncurrency = \"USD\"\nprices = \"x\"\nprices_as_of = \"2026-12-05\"\n"
                            "[[type]]\nname = \"a\"\ncores = \"2\"\n";
  const CommandOutput out = Dmlbench({"--db", kDb, "model", "recommend", "--catalog", catalog, "--epochs", "1",
                                      "--workers", "1", "--deadline", "1h"});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find(catalog + ":7:9: cores must be a number, got string \"2\""), std::string::npos) << out.err;
}

// ---- the honesty checks, on a study fitted here ------------------------------

// The cells of a table's line: its columns are two or more spaces apart
// (cli/table.h), and no cell holds two spaces in a row.
std::vector<std::string> Cells(const std::string& line) {
  static const std::regex gap(" {2,}");
  std::vector<std::string> cells;
  for (std::sregex_token_iterator it(line.begin(), line.end(), gap, -1), end; it != end; ++it) {
    if (!it->str().empty()) cells.push_back(*it);
  }
  return cells;
}

// The cells of the first line of `text` whose first cell is `first`, or none.
std::vector<std::string> RowOf(const std::string& text, const std::string& first) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells = Cells(line);
    if (!cells.empty() && cells.front() == first) return cells;
  }
  return {};
}

// "[low, high] (90%)", as both predict and recommend print an epoch interval.
std::string IntervalCell(const nlohmann::json& row) {
  return "[" + Short(row["epoch_low_s"]) + ", " + Short(row["epoch_high_s"]) + "] (" +
         Short(100 * row["interval_level"].get<double>()) + "%)";
}

// A study fitted with `model fit --model corrected`, as docs/recommend.md
// tells a user, and a question to recommend of it.
class RecommendIntervalTest : public ::testing::Test {
 protected:
  void Fit() {
    const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", "corrected"});
    ASSERT_EQ(fit.exit_code, 0) << fit.out << fit.err;
  }

  CommandOutput Recommend(const std::string& deadline, const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"--db", db_, "model", "recommend", "--catalog", catalog_,
                                     "--epochs", std::to_string(epochs_)};
    args.insert(args.end(), space_.begin(), space_.end());
    args.insert(args.end(), {"--deadline", deadline});
    args.insert(args.end(), extra.begin(), extra.end());
    return Dmlbench(args);
  }

  // The largest deadline, in seconds, at which the cheapest candidate that
  // meets it at its point estimate crosses it at its interval's upper end
  // while a dearer one meets it there: of the midpoints between two
  // neighbouring totals (points or upper ends) of the candidates
  // `everything` ranks, so that no total lies on it. Largest, so that the
  // most candidates are kept.
  static std::optional<double> SplittingDeadline(const nlohmann::json& everything) {
    std::vector<double> totals;
    for (const nlohmann::json& row : everything["ranked"]) {
      totals.push_back(row["total_s"]);
      totals.push_back(row["total_high_s"]);
    }
    std::sort(totals.begin(), totals.end(), std::greater<>());
    for (std::size_t i = 0; i + 1 < totals.size(); ++i) {
      const double deadline = (totals[i] + totals[i + 1]) / 2;
      if (!(totals[i + 1] < deadline && deadline < totals[i])) continue;
      // Ranked by cost, the order a tighter deadline keeps.
      std::optional<double> cheapest_high;
      bool dearer_meets = false;
      for (const nlohmann::json& row : everything["ranked"]) {
        if (row["total_s"].get<double>() > deadline) continue;
        if (!cheapest_high) {
          cheapest_high = row["total_high_s"];
        } else if (row["total_high_s"].get<double>() <= deadline) {
          dearer_meets = true;
          break;
        }
      }
      if (cheapest_high && *cheapest_high > deadline && dearer_meets) return deadline;
    }
    return std::nullopt;
  }

  // Asks the question at a deadline that splits the point estimate's pick
  // from the upper end's and checks the answer: every ranked epoch time and
  // interval is what `model predict --fit N` prints for the row's settings,
  // every row whose upper end is past the deadline says that it crosses,
  // and both picks are named, in --json and in the table. Returns the
  // answer's JSON.
  nlohmann::json ExpectHonestAnswer() const {
    const CommandOutput everything = Recommend("1000d", {"--json"});
    EXPECT_EQ(everything.exit_code, 0) << everything.err;
    const std::optional<double> deadline = SplittingDeadline(nlohmann::json::parse(everything.out));
    if (!deadline) {
      ADD_FAILURE() << "no deadline splits the point estimate's pick from the upper end's:\n" << everything.out;
      return {};
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.17gs", *deadline);

    const CommandOutput out = Recommend(text, {"--json"});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    const nlohmann::json json = nlohmann::json::parse(out.out);
    const nlohmann::json& ranked = json["ranked"];
    EXPECT_DOUBLE_EQ(json["goal"]["deadline_s"].get<double>(), *deadline);

    // Every row: the interval is predict's, the totals are epochs times it,
    // and it crosses the deadline exactly when its upper end is past it.
    std::optional<std::size_t> first_sure;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const nlohmann::json& row = ranked[i];
      const std::string settings = row["predict_settings"];
      if (!row["interval_level"].is_number()) {
        ADD_FAILURE() << settings << ": no interval";
        continue;
      }
      EXPECT_LT(row["epoch_low_s"].get<double>(), row["epoch_s"].get<double>()) << settings;
      EXPECT_GT(row["epoch_high_s"].get<double>(), row["epoch_s"].get<double>()) << settings;
      EXPECT_DOUBLE_EQ(row["total_low_s"].get<double>(), epochs_ * row["epoch_low_s"].get<double>()) << settings;
      EXPECT_DOUBLE_EQ(row["total_high_s"].get<double>(), epochs_ * row["epoch_high_s"].get<double>()) << settings;
      EXPECT_LE(row["total_s"].get<double>(), *deadline) << settings;
      const bool crosses = row["total_high_s"].get<double>() > *deadline;
      EXPECT_EQ(row["crosses_goal"].get<bool>(), crosses) << settings;
      EXPECT_EQ(row["meets_at_upper_end"].get<bool>(), !crosses) << settings;
      if (!crosses && !first_sure) first_sure = i;

      std::vector<std::string> args = {"--db", db_, "model", "predict", "--fit",
                                       std::to_string(json["fit"].get<int>())};
      std::istringstream words(settings);
      for (std::string word; words >> word;) args.push_back(word);
      const CommandOutput predicted = Dmlbench(args);
      EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
      // model, fit, iteration_ms, epoch_s, samples/s, compute_ms, update_ms,
      // comm_ms, hidden_ms, epoch interval_s
      const std::vector<std::string> cells = RowOf(predicted.out, "corrected");
      if (cells.size() < 10) {
        ADD_FAILURE() << settings << ": no row of corrected in\n" << predicted.out;
        continue;
      }
      EXPECT_EQ(cells[3], Short(row["epoch_s"])) << settings << ":\n" << predicted.out;
      EXPECT_EQ(cells[9], IntervalCell(row)) << settings << ":\n" << predicted.out;
    }

    // The point estimate's pick is the cheapest and its interval crosses;
    // the upper end's is the first that does not, a dearer one.
    EXPECT_EQ(json["at_point_estimate"], 1);
    if (ranked.empty() || !first_sure) {
      ADD_FAILURE() << "no pick at the upper end:\n" << out.out;
      return json;
    }
    EXPECT_TRUE(ranked[0]["crosses_goal"].get<bool>());
    EXPECT_EQ(json["at_upper_end"], *first_sure + 1);
    EXPECT_NE(json["at_upper_end"], json["at_point_estimate"]);
    EXPECT_GT(ranked[*first_sure]["cost"].get<double>(), ranked[0]["cost"].get<double>());

    // The table says the same, and shows the upper end's pick beside the
    // point estimate's even when --top leaves only the first row.
    const CommandOutput table = Recommend(text, {"--top", "1"});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    const nlohmann::json& point = ranked[0];
    const nlohmann::json& sure = ranked[*first_sure];
    const std::string sure_rank = std::to_string(*first_sure + 1);
    // rank, configuration, type, hosts, epoch_s, epoch interval_s, total_s,
    // total interval_s, cost, cost interval, at the upper end, rests on
    const std::vector<std::string> point_cells = RowOf(table.out, "1");
    const std::vector<std::string> sure_cells = RowOf(table.out, sure_rank);
    if (point_cells.size() < 11 || sure_cells.size() < 11) {
      ADD_FAILURE() << "no row #1 or #" << sure_rank << " in\n" << table.out;
      return json;
    }
    EXPECT_EQ(point_cells[1], point["configuration"].get<std::string>()) << table.out;
    EXPECT_EQ(point_cells[4], Short(point["epoch_s"])) << table.out;
    EXPECT_EQ(point_cells[5], IntervalCell(point)) << table.out;
    EXPECT_EQ(point_cells[10], "crosses: up to " + Short(point["total_high_s"]) + " s") << table.out;
    EXPECT_EQ(sure_cells[1], sure["configuration"].get<std::string>()) << table.out;
    EXPECT_EQ(sure_cells[4], Short(sure["epoch_s"])) << table.out;
    EXPECT_EQ(sure_cells[5], IntervalCell(sure)) << table.out;
    EXPECT_EQ(sure_cells[10], "meets it") << table.out;
    EXPECT_NE(table.out.find("at the point estimate: #1 " + point["configuration"].get<std::string>() + " on " +
                             point["instance_type"].get<std::string>() + ", " + Short(point["total_s"]) + " s, " +
                             Money(point["cost"], "USD") + " — its interval crosses the deadline (up to " +
                             Short(point["total_high_s"]) + " s)\n"),
              std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("at the interval's upper end: #" + sure_rank + " " +
                             sure["configuration"].get<std::string>() + " on " +
                             sure["instance_type"].get<std::string>() + ", up to " + Short(sure["total_high_s"]) +
                             " s, up to " + Money(sure["cost_high"], "USD") + "\n"),
              std::string::npos)
        << table.out;
    return json;
  }

  TempDir dir_;
  std::string db_ = dir_ / "study.db", catalog_;
  int epochs_ = 0;
  std::vector<std::string> space_;  // recommend's options of the candidate space
};

// The report's small study (ring, p2p and ps at 1 to 4 workers on one CPU
// share of 0.25 core and 1 Gbit/s), whose fit has one interval for all
// schemes, with a catalog of its share and of twice it.
TEST_F(RecommendIntervalTest, OnTheReportStudyTheAnswerIsPredictsAndNamesBothPicks) {
  testing::BuildReportStudy(db_, {.fit_models = false});
  ASSERT_NO_FATAL_FAILURE(Fit());
  catalog_ = dir_ / "types.toml";
  testing::WriteFile(catalog_,
                     "format_version = 1\ncurrency = \"USD\"\nprices = \"a nominal rate\"\n"
                     "prices_as_of = \"2026-12-06\"\n"
                     "[[type]]\nname = \"share0.25\"\ncores = 0.25\nmemory_gib = 1\nbandwidth_mbit_per_s = 1000\n"
                     "price_per_core_hour = 0.04\ncpu_share = 0.25\ncompute = \"calibrated\"\n"
                     "[[type]]\nname = \"share0.5\"\ncores = 0.5\nmemory_gib = 1\nbandwidth_mbit_per_s = 1000\n"
                     "price_per_core_hour = 0.04\ncpu_share = 0.5\ncompute = \"quota\"\n");
  epochs_ = 20;
  space_ = {"--architecture", "ring,ps,p2p", "--workers", "1,2,3,4", "--batch", "50,100"};
  const nlohmann::json answer = ExpectHonestAnswer();
  EXPECT_GE(answer["ranked"].size(), 2u);
}

// A copy of the committed validation's calibration on the emulated cluster,
// fitted again, asked docs/recommend.md's question: its fit scales the
// interval per scheme (ring's wider than ps's), so the answer's rows of
// both schemes are each checked against predict's own interval.
TEST_F(RecommendIntervalTest, OnTheValidationCalibrationEachSchemesIntervalIsPredicts) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/recommend-validation.db", db_);
  ASSERT_NO_FATAL_FAILURE(Fit());
  catalog_ = std::string(DMLBENCH_SOURCE_DIR) + "/experiments/instances/emulated-calibrated.toml";
  epochs_ = 100;
  space_ = {"--samples", "12000", "--architecture", "ring,ps", "--workers", "2,3,4", "--servers", "1",
            "--batch", "100"};
  const nlohmann::json answer = ExpectHonestAnswer();
  // A row of each scheme, their intervals of different relative widths.
  std::optional<double> ring_width, ps_width;
  for (const nlohmann::json& row : answer["ranked"]) {
    const double width = row["epoch_high_s"].get<double>() / row["epoch_s"].get<double>();
    (row["architecture"] == "ring" ? ring_width : ps_width) = width;
  }
  ASSERT_TRUE(ring_width && ps_width) << answer.dump(2);
  EXPECT_GT(*ring_width, *ps_width) << answer.dump(2);
}

}  // namespace
}  // namespace dmlbench
