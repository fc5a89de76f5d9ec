// The readers of stored epochs — `model fit`, `model validate`, `model
// predict`, `report` and `compare` — on a database holding epochs that
// ingest refuses today (an older dmlbench's, or one edited by hand):
// each leaves them out, names the run and why, and goes on; none prints a
// raw SQLite message, nan, inf or a negative figure. One test per kind of
// bad value, on the report's small study corrupted through SQL.
#include <gtest/gtest.h>

#include <string>

#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;
using testing::TempDir;

struct Corruption {
  const char* name;
  const char* set;   // SQL assignments applied to the chosen epochs
  const char* why;   // what the warning says of them
};

class InvalidEpochsTest : public ::testing::TestWithParam<Corruption> {
 protected:
  void SetUp() override {
    testing::BuildReportStudy(db_, {.fit_models = false});
    Store store(db_);
    // Every epoch of one calibration run of the ring at 2 workers, and the
    // last epoch of one at 4. Each run has one warm-up and one steady
    // epoch, so each loses its one steady epoch.
    const std::string set = GetParam().set;
    store.ExecuteScript(
        "UPDATE epochs SET " + set + " WHERE run_id = (SELECT min(run_id) FROM runs WHERE architecture = 'ring' "
        "AND workers = 2 AND split = 'calibration');"
        "UPDATE epochs SET " + set + " WHERE epoch = 2 AND run_id = (SELECT min(run_id) FROM runs "
        "WHERE architecture = 'ring' AND workers = 4 AND batch_size = 100 AND split = 'calibration');");
  }

  // Neither a raw SQLite message nor a figure that no epoch can take.
  static void ExpectNoBadFigure(const CommandOutput& output) {
    for (const std::string& text : {output.out, output.err}) {
      EXPECT_EQ(text.find("nan"), std::string::npos) << text;
      EXPECT_EQ(text.find("inf%"), std::string::npos) << text;
      EXPECT_EQ(text.find(" inf "), std::string::npos) << text;
      EXPECT_EQ(text.find("constraint failed"), std::string::npos) << text;
      EXPECT_EQ(text.find("gnuplot"), std::string::npos) << text;
    }
  }

  // Two runs named, each with its one steady epoch (of 2 epochs, the first
  // is warm-up, which no reader takes).
  static void ExpectLeftOut(const std::string& text, bool markdown = false) {
    const std::string said = "left out 1 epoch of run ";
    const size_t first = text.find(said);
    ASSERT_NE(first, std::string::npos) << text;
    EXPECT_NE(text.find(said, first + said.size()), std::string::npos) << text;
    std::string why = GetParam().why;
    if (markdown) why = EscapedUnderscores(why);
    EXPECT_NE(text.find(why), std::string::npos) << text;
  }

  // The report's Markdown writes "wall_s" as "wall\_s".
  static std::string EscapedUnderscores(const std::string& text) {
    std::string escaped;
    for (const char c : text) {
      if (c == '_') escaped += '\\';
      escaped += c;
    }
    return escaped;
  }

  TempDir dir_;
  std::string db_ = dir_ / "study.db";
};

TEST_P(InvalidEpochsTest, ModelFitLeavesThemOutAndSaysSo) {
  const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", "linear"});
  EXPECT_EQ(fit.exit_code, 0) << fit.out << fit.err;
  ExpectLeftOut(fit.err);
  ExpectNoBadFigure(fit);
}

TEST_P(InvalidEpochsTest, ModelValidateAndPredictGiveOnlyValidFigures) {
  ASSERT_EQ(Dmlbench({"--db", db_, "model", "fit", "--model", "linear"}).exit_code, 0);
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate", "--model", "linear"});
  EXPECT_EQ(validate.exit_code, 0) << validate.out << validate.err;
  ExpectLeftOut(validate.err);
  ExpectNoBadFigure(validate);
  const CommandOutput predict =
      Dmlbench({"--db", db_, "model", "predict", "--model", "linear", "architecture=ring", "workers=4"});
  EXPECT_EQ(predict.exit_code, 0) << predict.out << predict.err;
  ExpectNoBadFigure(predict);
}

TEST_P(InvalidEpochsTest, ReportRendersWithoutThemAndListsThem) {
  const CommandOutput report = Dmlbench({"--db", db_, "report", dir_ / "report"});
  EXPECT_EQ(report.exit_code, 0) << report.out << report.err;
  ExpectLeftOut(report.out);
  ExpectNoBadFigure(report);
  ExpectLeftOut(testing::ReadFile(dir_ / "report/report.md"), /*markdown=*/true);
}

TEST_P(InvalidEpochsTest, CompareSaysWhichEpochsItLeftOut) {
  const CommandOutput compare = Dmlbench({"compare", db_, db_});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  ExpectLeftOut(compare.err);
  ExpectNoBadFigure(compare);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, InvalidEpochsTest,
    ::testing::Values(Corruption{"negative", "wall_s = -1", "wall_s = -1 is not a positive finite time"},
                      Corruption{"zero", "wall_s = 0", "wall_s = 0 is not a positive finite time"},
                      Corruption{"huge", "wall_s = 1e308", "wall_s = 1e+308 is not a positive finite time"},
                      Corruption{"iterations_zero", "iterations = 0", "iterations = 0 is not 1 or more"},
                      Corruption{"negative_samples", "samples = -5", "samples = -5 is negative"}),
    [](const ::testing::TestParamInfo<Corruption>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace dmlbench
