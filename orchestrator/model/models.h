// Models: the registry of the performance models fitted on calibration runs
// and judged on validation runs (DESIGN.md section 1). Each predicts the
// iteration time, epoch time and throughput of any configuration
// (architecture, w, k, b, model size, network profile, CPU share, overlap),
// also ones never run:
//   paper2019          the 2019 paper's equations as published (paper2019.h).
//   corrected          per-iteration alpha-beta terms x iterations per epoch,
//                      the larger in a p-norm of the critical path at full
//                      CPU speed and each rank's CPU work over its CPU share
//                      (corrected_terms.h), fitted jointly on every
//                      architecture (corrected.h).
//   corrected+overlap  the same parameters; with overlap the exchange of each
//                      bucket runs behind the backward pass.
//   linear             epoch time linear in w per architecture, profile and
//                      batch: the baseline a model must beat (linear.h).
//   counts             few terms, each identified: the architectures differ
//                      only by their counts, what a probe or the runs' CPU
//                      reports measure is not fitted (counts.h).
// A fit is a ModelFitRecord (store.h): it is stored, and a prediction needs
// nothing else, so a copied database predicts as well. This header also
// brings the interface (performance_model.h) and the reading of a fit
// (fitting.h). Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_

#include <memory>
#include <string_view>
#include <vector>

#include "orchestrator/model/fitting.h"
#include "orchestrator/model/performance_model.h"

namespace dmlbench {

// paper2019, corrected, corrected+overlap, linear, counts, in that order.
const std::vector<std::unique_ptr<PerformanceModel>>& Models();
// The model the project stands behind ("corrected", docs/model.md): the one
// `recommend` predicts with unless --model or --fit names another. The others
// are kept for comparison (docs/comparison-models.md).
std::string_view DefaultModelName();
// Throws ModelError naming the known models.
const PerformanceModel& ModelNamed(std::string_view name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_
