// Tests of `dmlbench model recommend` as users run it, on the committed
// study's database with the emulated cluster's catalog: every epoch time it
// ranks is the one `model predict` prints for the row's settings, totals and
// costs follow from it, a deadline no candidate meets keeps none, and a
// malformed catalog is named at its file, line and column.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/orchestrator/support/dmlbench_program.h"
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

}  // namespace
}  // namespace dmlbench
