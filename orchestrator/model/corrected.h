// CorrectedModel: `corrected` and `corrected+overlap` — the equation of
// corrected_terms.h (per-iteration alpha-beta terms, and each rank's CPU work
// over its CPU share, combined by a fitted p-norm) fitted on calibration runs
// and read back to predict. corrected+overlap uses the same parameters, and
// with overlap the exchange of each bucket runs behind the backward pass.
// Pure; thread-safe.
//
// Fit, on calibration runs (corrected: those without overlap; corrected+
// overlap: every one, each with its own bucket schedule): (1) compute from
// the one-worker runs of ring, mpi and p2p, which exchange nothing: weighted
// least squares of their measured CPU time per iteration (the trainer
// reports each rank's, schema version 9) on b; (2) q, the median of
// measured CPU / (s x iteration) over the runs whose busiest rank used at
// least 3/4 of its share; (3) the rest by nonlinear least squares of the
// relative error of the iteration time over every run, each coefficient
// fitted as the logarithm of its value (p and r as log(p - 1), the first
// peer's share as its logit), so that none leaves its physical range, with
// a weak prior at its start. forward_share (forward's part of compute;
// with overlap the exchange hides behind the rest, backward) is the median
// of forward / (forward + backward) over the runs without overlap. Any of
// these can be held at a value instead
// (FixedParameters, `model fit --fix`): it is left out of its stage and the
// rest are fitted around it. The parameters, each with its unit, scope
// (none, a scheme or a link profile), stage and transform, are one table
// (ParameterTable) that drives packing, holding, intervals and the stored rows.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_H_

#include <string_view>

#include "orchestrator/model/performance_model.h"

namespace dmlbench {

class CorrectedModel : public PerformanceModel {
 public:
  // `overlap`: corrected+overlap, else corrected.
  explicit CorrectedModel(bool overlap) : overlap_(overlap) {}
  std::string_view name() const override { return overlap_ ? "corrected+overlap" : "corrected"; }
  // How each version came: docs/history/model-versions.md.
  int version() const override { return 19; }
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override;
  using PerformanceModel::Fit;
 private:
  // Per term: compute (stretched by the quota when a CPU binds), the
  // exchange left on the path, and with overlap what ran behind backward.
  Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const override;

  bool overlap_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_H_
