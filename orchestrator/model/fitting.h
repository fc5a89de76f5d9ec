// Fitting: what every model's Fit and Predict share — a fit record's
// parameters written (fitted with an interval, held at a value, or from a
// link probe) and read back, the links a fit knows, the calibration runs a
// fit may use, the stages counts and corrected measure before their
// nonlinear fit (compute, the quota), and a prediction completed from its
// iteration time. Holds no model's equations (paper2019.h, corrected.h,
// linear.h, counts.h do). Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_FITTING_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_FITTING_H_

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/model/least_squares.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/parameter_table.h"
#include "orchestrator/model/performance_model.h"
#include "orchestrator/model/physics.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// ---- reading a fit ----------------------------------------------------------

// The profile scope of a fit's link parameters, e.g. "1000000000bit/s 0s".
std::string ProfileScope(double bandwidth_bits_per_s, double latency_s);

// The fit's parameter of that name and scope ("" = none), or nullptr.
const ModelParameterRow* FindParameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope);
// Its value. Throws ModelError naming the fit and the parameter it lacks.
double Parameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope = "");

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

// ---- writing a fit ----------------------------------------------------------

// An empty fit of `model`, stamped with its name, version and the time now.
ModelFitRecord NewFit(const PerformanceModel& model);

// A fitted coefficient as a parameter row, with its interval.
ModelParameterRow Fitted(const Coefficient& c, std::string unit, std::string scope = "");
// A parameter measured before the nonlinear fit by a stage of its own (the runs'
// CPU reports, their phase times), with its interval: source "measured".
ModelParameterRow Measured(const Coefficient& c, std::string unit, std::string scope = "");
// A parameter held at a value (FixedParameters): no interval.
ModelParameterRow Held(std::string name, double value, std::string unit, std::string scope = "");
// The key of a parameter in FixedParameters: "name" or "name scope".
std::string HeldKey(std::string_view name, std::string_view scope);
// For models fitted in closed form per group, which hold nothing at a
// value: throws ModelError unless `fixed` is empty.
void RefuseFixed(const PerformanceModel& model, const FixedParameters& fixed);

// Every probed link, as parameters of the fit (probe values, no CI), and the
// shaped links' measured/configured ratio for profiles never probed.
void AddLinks(const ModelData& data, ModelFitRecord& fit);

// Calibration runs whose link was probed; the others cannot be used.
// Throws ModelError for a run of another split, or when none is left.
std::vector<const RunObservation*> UsableRuns(const ModelData& data);

// ---- the measured stages of counts and corrected -----------------------------

// s: the configuration's CPU share of a host in cores, at most 1 (a rank
// runs on one core); 1 when uncapped.
double CpuShare(const ModelConfig& config);

// compute = cpu_overhead_s + per_work x work(config), CPU s per iteration:
// those of the two `settled` leaves open, by weighted least squares
// (weights 1 / cpu^2) of the measured CPU time per iteration of the
// one-worker runs of ring, mpi and p2p among `runs` (they exchange
// nothing), less what `settled` holds; their rows are set in `settled`,
// as measured.
// `table` has both parameters. Throws FitError when the runs cannot tell
// them apart.
void MeasureCompute(const ParameterTable& table, std::string_view per_work, double (*work)(const ModelConfig&),
                    const std::vector<const RunObservation*>& runs, SettledRows& settled);

// quota_efficiency, unless `settled` holds it: the median of measured CPU /
// (s x iteration) over the runs whose busiest rank used at least 3/4 of its
// share s (1 when none did), with its interval, as measured. Every run of
// `runs` has its worker's CPU time.
void MeasureQuota(const ParameterTable& table, const std::vector<const RunObservation*>& runs, SettledRows& settled);

// ---- predicting -------------------------------------------------------------

// W, the gradient's bytes, of the configuration's model (4 bytes a parameter).
double GradientBytes(const ModelConfig& config);

// `p` with the iterations per epoch, epoch time and throughput that
// `iteration_s` gives. Throws ModelError for less than one iteration per epoch.
Prediction FinishPrediction(const ModelConfig& config, double iteration_s, Prediction p);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_FITTING_H_
