// Tests of orchestrator/model/fit_output: the closing verdict of `model
// fit`, one line per model, a reason every model shares said once; and the
// phrases of a fit it prints, on fits built by hand.
#include "orchestrator/model/fit_output.h"
#include "orchestrator/model/interval.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

FitOutcome Fitted(const std::string& model, std::int64_t fit_id, double residual_rms_s) {
  ModelFitRecord fit;
  fit.fit_id = fit_id;
  fit.model = model;
  fit.residual_rms_s = residual_rms_s;
  return {model, fit, ""};
}

FitOutcome NotFitted(const std::string& model, const std::string& why) { return {model, std::nullopt, why}; }

const std::string kNoProbe =
    "no calibration run with a probed link in results.db: probe the links (dmlbench cluster probe)";

TEST(FitVerdictTest, OneLinePerModelAndTheCountFirst) {
  EXPECT_EQ(FitVerdict({Fitted("paper2019", 3, 0.0514), Fitted("corrected", 4, 0.001234),
                        NotFitted("counts", "counts: the exchange's costs need calibration runs of several workers")}),
            "model fit: 2 of 3 models fitted\n"
            "  paper2019  fitted: fit 3, residual rms 51.400 ms per iteration\n"
            "  corrected  fitted: fit 4, residual rms 1.234 ms per iteration\n"
            "  counts     not fitted: counts: the exchange's costs need calibration runs of several workers\n");
}

TEST(FitVerdictTest, AReasonEveryModelSharesIsSaidOnce) {
  EXPECT_EQ(FitVerdict({NotFitted("paper2019", kNoProbe), NotFitted("corrected", kNoProbe),
                        NotFitted("corrected+overlap", kNoProbe), NotFitted("linear", kNoProbe),
                        NotFitted("counts", kNoProbe)}),
            "model fit: none of the 5 models fitted, all for one reason: " + kNoProbe + "\n");
  EXPECT_EQ(FitVerdict({NotFitted("counts", kNoProbe)}), "model fit: counts not fitted: " + kNoProbe + "\n");
}

TEST(FitVerdictTest, AReasonSomeShareIsGivenOnceAndNamedAfter) {
  EXPECT_EQ(FitVerdict({Fitted("linear", 9, 0.002), NotFitted("paper2019", kNoProbe), NotFitted("corrected", kNoProbe)}),
            "model fit: 1 of 3 models fitted\n"
            "  linear     fitted: fit 9, residual rms 2.000 ms per iteration\n"
            "  paper2019  not fitted: " + kNoProbe + "\n"
            "  corrected  not fitted, as paper2019\n");
}

TEST(FitOutputTest, ReachAndTheIntervalOfAFit) {
  EXPECT_EQ(ReachText(0.1), "-9.5% / +10.5%");
  ModelFitRecord fit;
  EXPECT_EQ(FitIntervalOutput(fit).text,
            "no prediction interval: too few calibration configurations to leave out for 90.0%\n");
  fit.intervals.push_back({"", 0.9, 0.1, 24, 0});
  const IntervalOutput output = FitIntervalOutput(fit);
  EXPECT_EQ(output.text, "90.0% prediction interval of epoch time (split-conformal on 24 calibration "
                         "configurations, each left out and predicted by a fit on the others): -9.5% / +10.5% of the "
                         "prediction\n");
  EXPECT_FALSE(output.table);
  EXPECT_EQ(output.after, "");
}

TEST(FitOutputTest, TheParametersAsATable) {
  ModelFitRecord fit;
  ModelParameterRow row;
  row.name = "cpu_overhead_s";
  row.value = 0.00012345;
  row.ci_low = 0.0001;
  row.ci_high = 0.00015;
  row.unit = "s";
  row.source = "measured";
  fit.parameters.push_back(row);
  const TextTable table = FitParameterTable(fit);
  EXPECT_EQ(table.headers, (std::vector<std::string>{"parameter", "scope", "value", "95% CI", "unit", "source"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0],
            (std::vector<std::string>{"cpu_overhead_s", "", "0.0001234", "[0.0001, 0.00015]", "s", "measured"}));
}

}  // namespace
}  // namespace dmlbench
