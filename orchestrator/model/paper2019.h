// Paper2019: the 2019 paper's equations as published, the model the
// corrected one must beat. Communication is counted once per epoch (PS push
// W/w, P2P bandwidth B/(2(w-1)), ring 2(w-1) W/w / B); the per-iteration
// processing time is fitted per architecture the paper's way, from total
// epoch times. Holds no parameter at a value. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_PAPER2019_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_PAPER2019_H_

#include <string_view>

#include "orchestrator/model/performance_model.h"

namespace dmlbench {

class Paper2019 : public PerformanceModel {
 public:
  std::string_view name() const override { return "paper2019"; }
  int version() const override { return 1; }
  // processing_s per architecture: least squares of (epoch - comm) on the
  // iterations per epoch, over the calibration runs of that architecture.
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override;
  using PerformanceModel::Fit;
 private:
  // processing_s plus the epoch's communication spread over its iterations.
  Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const override;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_PAPER2019_H_
