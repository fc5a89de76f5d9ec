// LinearModel: the baseline a model must beat — epoch time linear in the
// number of workers, one line per architecture, batch size and link profile,
// fitted on the calibration runs without overlap. It knows nothing of why;
// it only interpolates. Holds no parameter at a value. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_LINEAR_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_LINEAR_H_

#include <string_view>

#include "orchestrator/model/performance_model.h"

namespace dmlbench {

class LinearModel : public PerformanceModel {
 public:
  std::string_view name() const override { return "linear"; }
  int version() const override { return 1; }
  // epoch_s = intercept + slope w, per architecture, batch and profile (the
  // intercept alone, the slope held at 0, where the runs have one w).
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override;
  using PerformanceModel::Fit;
 private:
  // The group of the configuration, else the same architecture and profile
  // at the nearest batch size (the baseline knows nothing of batches).
  Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const override;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_LINEAR_H_
