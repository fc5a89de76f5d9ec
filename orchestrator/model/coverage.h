// Coverage: what a prediction rests on. A fitted model answers for any
// configuration (`dmlbench model predict`), but it was fitted on the
// calibration runs and probes its fit records and judged only on the
// validation runs the database holds. For one configuration this tells
// which of its settings lie beyond what the fit saw (more workers, another
// link, CPU share, batch size or layer widths, overlap or parts when no
// calibration run had them, MPI's allreduce in an algorithm never
// calibrated), and how far the model missed the held-out configurations of
// the same architecture. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/validation.h"

namespace dmlbench {

struct Coverage {
  std::string architecture;              // "ring", "ps k=2", ...
  // The model's errors on the validation configurations of that
  // architecture under this fit; empty when the database has none.
  std::optional<ErrorSummary> held_out;
  // Each setting of the configuration beyond what the fit saw, as a phrase
  // naming the setting, its value and what the calibration covered.
  std::vector<std::string> beyond;
};

// `data` holds the runs and probes of the database (LoadModelData); the
// fit's calibration runs are those of fit.runs found among them.
Coverage CoverageOf(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data,
                    const ModelConfig& config);

// Open MPI 4.1's non-blocking allreduce (libnbc) for w ranks and a gradient
// above 64 KiB, as orchestrator/model/physics.cc counts it: "none" for one
// rank, "binomial tree" below 4, "halving and doubling" for powers of two,
// "halving and doubling with a fold" otherwise.
std::string MpiAllreduceAlgorithm(int workers);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_
