// PerformanceModel: the interface every performance model implements (one
// file per model: paper2019.h, corrected.h, linear.h, counts.h; the registry is
// models.h), what a prediction holds, the one error type of the model
// stage, and the parameters a fit may be asked to hold at a value. Does
// not fit or predict anything itself. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_PERFORMANCE_MODEL_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_PERFORMANCE_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/physics.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A model that cannot be fitted or cannot predict a configuration. what()
// says which and why.
class ModelError : public Error {
 public:
  using Error::Error;
};

struct Prediction {
  std::int64_t iterations = 0;        // per epoch
  double iteration_s = 0;
  double epoch_s = 0;
  double throughput_samples_per_s = 0;
  // Per iteration: what each part costs on the critical path.
  double compute_s = 0;               // forward + backward
  double update_s = 0;
  double comm_s = 0;                  // exchange not hidden behind backward
  double hidden_comm_s = 0;           // exchange running behind backward (overlap)
  // The model's CPU time per iteration of the busiest worker and of the
  // busiest server (0: the model keeps no CPU account, or there is no
  // server), and what sets the iteration: "path" (compute and the wire at
  // full CPU speed), "worker CPU" or "server CPU" (that rank's CPU over its
  // quota); empty without a CPU account.
  double worker_cpu_s = 0;
  double server_cpu_s = 0;
  std::string limited_by;
};

// Parameters a fit holds at a given value instead of fitting them (`model
// fit --fix`), keyed as the fit's parameter table prints them: the name,
// and for a scoped one a space and the scope ("wire_factor ps k=1"). A held
// parameter is stored with source "fixed" and no interval, so every
// prediction from the fit uses it: for asking what a measured value, put in
// place of a fitted one, does to the errors.
using FixedParameters = std::map<std::string, double>;
// `--fix` arguments, each NAME=VALUE or "NAME SCOPE=VALUE" with the whole
// value a number. Throws ModelError naming the one that is not, or a key
// given twice. Whether the model fits that parameter is Fit's to say.
FixedParameters ParseFixedParameters(const std::vector<std::string>& fixes);

class PerformanceModel {
 public:
  virtual ~PerformanceModel() = default;
  virtual std::string_view name() const = 0;
  // Stored with each fit and raised whenever the model's equations or its
  // fit change: a stored fit of another version is not used to predict.
  virtual int version() const = 0;
  // Fits on `data`, whose runs must all be calibration runs (the store
  // refuses the fit otherwise), holding `fixed` at their values. Throws
  // ModelError, also for a parameter the model does not fit or a value
  // outside its range.
  virtual ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const = 0;
  ModelFitRecord Fit(const ModelData& data) const { return Fit(data, {}); }
  // Predicts `config` from a fit of this model. Throws ModelError, also
  // when the fit's values give no time: an epoch that is not a positive
  // finite time (EpochFault, store/epoch_validity.h) or a part of the
  // iteration that is not finite. Every command that predicts (predict,
  // validate, recommend, judge) comes through here, so a fit edited into
  // nonsense is refused alike by each.
  Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const;

 private:
  // The model's own equations, unchecked.
  virtual Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const = 0;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_PERFORMANCE_MODEL_H_
