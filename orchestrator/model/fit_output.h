// FitOutput: what `model fit` says, as text and tables the command line
// prints: per model fitted a summary line, its parameters and its prediction
// interval; at the end the verdict, one line per model (fitted, or not and
// why), a reason every model shares said once. The phrases of an interval's
// reach are interval.h's. Reads nothing; pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_FIT_OUTPUT_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_FIT_OUTPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/core/text_table.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// "corrected: fit 12 on 120 calibration runs (240 points) and 46 probe rows;
// residual rms 1.234 ms per iteration, largest 4.2%".
std::string FitSummaryLine(const std::string& model, const ModelFitRecord& fit);

// The fit's parameters: name, scope, value, 95% interval, unit, source.
TextTable FitParameterTable(const ModelFitRecord& fit);

// The fit's prediction interval: its level, what it rests on and its reach
// per regime (interval.h): text, a table when it is scaled per scheme, and
// text after it. Every text ends with a line break or is empty.
struct IntervalOutput {
  std::string text;
  std::optional<TextTable> table;
  std::string after;
};
IntervalOutput FitIntervalOutput(const ModelFitRecord& fit);

// One model's outcome of `model fit`.
struct FitOutcome {
  std::string model;
  std::optional<ModelFitRecord> fit;  // set when fitted
  std::string failure;                // else why not
};

// The closing lines: "model fit: 4 of 5 models fitted", then one line per
// model, "  corrected  fitted: fit 12, residual rms 1.234 ms per iteration"
// or "  counts  not fitted: <why>" ("not fitted, as linear" for a reason
// given above); when no model was fitted and all for one reason, that
// reason once: "model fit: none of the 5 models fitted, all for one reason:
// <why>" ("model fit: counts not fitted: <why>" for one model). Every line
// ends with a line break.
std::string FitVerdict(const std::vector<FitOutcome>& outcomes);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_FIT_OUTPUT_H_
