// Judge: a model judged the one way that cannot leak (docs/model.md, "How a
// model is judged"). On one sweep's data each model is fitted on the
// calibration runs alone, with its interval from them (interval.h), and
// predicts the validation runs; per scheme its error on the validation
// configurations stands beside the sweep's own split-half noise on those
// configurations and the interval's coverage of them. Nothing is written
// (`dmlbench model judge` reads each database read-only). Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_JUDGE_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_JUDGE_H_

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/interval.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/performance_model.h"

namespace dmlbench {

// One model on the validation configurations of one scheme.
struct SchemeJudgement {
  std::string architecture;          // SchemeLabel: "ring", "ps k=2", ...
  int configurations = 0;            // validation configurations predicted
  double median_abs = 0, p95_abs = 0, max_abs = 0;  // absolute relative error of epoch time
  // The sweep's split-half noise (SplitHalfError, validation.h) on that
  // scheme's validation configurations of 4 runs or more: their number and
  // median. None without such a configuration.
  int split_half_configurations = 0;
  std::optional<double> split_half_median;
  // How many of the configurations' measured medians the interval holds,
  // and the median of its half-width relative to the prediction; none
  // when the fit has no interval.
  int covered = 0;
  std::optional<double> coverage, median_half_width;
};

struct ModelJudgement {
  std::string model;
  int version = 0;
  int calibration_configurations = 0;  // the fit's points
  std::string not_fitted;              // why, when the model could not be fitted; then nothing else is set
  double level = 0;
  bool scaled_by_regime = false;       // the interval has rows per regime
  // The interval's row for predictions beyond the calibration's workers
  // (BeyondWorkersRow), if it has one.
  std::optional<ModelIntervalRow> beyond_workers;
  std::vector<SchemeJudgement> schemes;  // in scheme order
  std::vector<std::string> skipped;      // validation configurations the model cannot predict
};

// Each of `models` judged on `data` (a whole sweep, LoadModelData) at
// interval `level`. Throws ModelError when `data` has no validation run.
std::vector<ModelJudgement> Judge(const ModelData& data, const std::vector<const PerformanceModel*>& models,
                                  double level = kDefaultIntervalLevel);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_JUDGE_H_
