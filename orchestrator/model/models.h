// Models: the performance models fitted on calibration runs and judged on
// validation runs (DESIGN.md section 1). Each predicts the iteration time,
// epoch time and throughput of any configuration (architecture, w, k, b,
// model size, network profile, CPU share, overlap), also ones never run:
//   paper2019          the 2019 paper's equations as published: communication
//                      counted once per epoch, PS push W/w, P2P bandwidth
//                      B/(2(w-1)); its per-iteration processing time fitted per
//                      architecture the paper's way (from total epoch times).
//   corrected          per-iteration alpha-beta terms x iterations per epoch
//                      (physics.h): the larger of the critical path at full
//                      CPU speed (compute + latencies + bytes / B) and each
//                      rank's CPU work over its CPU share (compute, bytes
//                      through its network stack, messages); the CPU costs
//                      fitted jointly on every architecture.
//   corrected+overlap  the same parameters; with overlap the exchange of each
//                      bucket runs behind the backward pass (Tfwd + max(...)).
//   linear             epoch time linear in w per architecture, profile and
//                      batch: the baseline a model must beat.
// A fit is a ModelFitRecord (store.h): it is stored, and a prediction needs
// nothing else, so a copied database predicts as well. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_

#include <map>
#include <memory>
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
  virtual int version() const = 0;
  // Fits on `data`, whose runs must all be calibration runs (the store
  // refuses the fit otherwise), holding `fixed` at their values. Throws
  // ModelError, also for a parameter the model does not fit or a value
  // outside its range.
  virtual ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const = 0;
  ModelFitRecord Fit(const ModelData& data) const { return Fit(data, {}); }
  // Predicts `config` from a fit of this model. Throws ModelError.
  virtual Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const = 0;
};

// paper2019, corrected, corrected+overlap, linear, in that order.
const std::vector<std::unique_ptr<PerformanceModel>>& Models();
// Throws ModelError naming the known models.
const PerformanceModel& ModelNamed(std::string_view name);

// The link a fit knows for a configuration's profile: the probe of that
// profile, else (a profile never probed) the configured rate times the
// median ratio measured/configured of the shaped probes and the median
// alpha. Throws ModelError when nothing applies (an unshaped profile
// without its probe).
struct LinkParameters {
  double alpha_s = 0;
  double bytes_per_s = 0;
};
LinkParameters LinkFor(const ModelFitRecord& fit, const ModelConfig& config);

// The fit's parameter of that name and scope ("" = none), or nullptr.
const ModelParameterRow* FindParameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope);

// The profile scope of a fit's link parameters, e.g. "1000000000bit/s 0s".
std::string ProfileScope(double bandwidth_bits_per_s, double latency_s);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_MODELS_H_
