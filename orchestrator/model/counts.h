// CountsModel: `counts` — few terms, each identified. The architectures
// differ only by the counts physics.h derives from their protocols (latency
// steps, bytes through the busiest link, messages, the job's link bytes);
// no factor is fitted per architecture, scheme or link profile. What a
// probe or the runs' own CPU reports measure is measured, not fitted; the
// nonlinear fit is left with the costs no measurement gives. Pure;
// thread-safe.
//
// Per iteration, every term in seconds:
//
//   iteration   = max(path, worker_cpu / (q s), server_cpu / (q s))
//   path        = compute + wire
//   wire        = latency_steps alpha + paced_bytes / B
//   paced_bytes = link_bytes, less a token bucket's burst per transfer in
//                 sequence that starts on an idle direction of a shaped link;
//                 where both links of a transfer are shared by several flows
//                 (ps with w > 1 and k > 1, p2p with w > 2), link_bytes is
//                 (sender_link^r + receiver_link^r)^(1/r)
//   compute     = cpu_overhead_s + cpu_per_sample_parameter_s b P    (P: the network's parameters)
//   worker_cpu  = compute + network + cpu_per_wait_s worker_waits + cpu_while_waiting wire
//   server_cpu  = network + cpu_per_wait_s server_waits + cpu_while_waiting path   (ps only)
//   network     = cpu_per_network_byte_s network_bytes / ranks
//
// s is a host's CPU share in cores (1 when uncapped), alpha and B the link
// probe's; every count (latency steps, link bytes and bursts, waits, the
// job's link bytes and ranks) is physics.h's. The parameters, their units
// and how each is identified: CountsParameters() and docs/model.md.
//
// Fit, on the calibration runs without overlap: (1) cpu_overhead_s and
// cpu_per_sample_parameter_s by weighted least squares of the measured CPU
// time per iteration of the one-worker runs of ring, mpi and p2p (which
// exchange nothing) on b P; (2) quota_efficiency, the median of measured CPU / (s x
// iteration) over the runs whose busiest rank used at least 3/4 of its
// share; (3) the rest by nonlinear least squares of the relative error of
// every run's iteration time, each as the logarithm of its value (r as
// log(r - 1)), without a prior: an interval is the data's alone, widened by
// what the measured parameters' own uncertainty moves the fit. Any
// parameter can be held at a value instead (`model fit --fix`) and is then
// left out of its stage.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_COUNTS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_COUNTS_H_

#include <string_view>
#include <vector>

#include "orchestrator/model/fitting.h"
#include "orchestrator/model/parameter_table.h"
#include "orchestrator/model/performance_model.h"

namespace dmlbench {

// The coefficients of the equation above, by value.
struct CountsCoefficients {
  double overhead = 0, per_sample_parameter = 0, quota = 1;                   // measured
  double per_network_byte = 0, per_wait = 0, while_waiting = 0, balance = 2;  // fitted
};

// The parameters: name, unit, scope, how identified and fitted.
const ParameterTable& CountsParameters();
// The coefficients of `values`, one per parameter in the table's order.
CountsCoefficients CountsCoefficientsOf(const std::vector<double>& values);

// One configuration's iteration and its parts.
struct CountsTerms {
  double iteration = 0, compute = 0, path = 0;
  double worker_cpu = 0, server_cpu = 0;  // CPU s per iteration, before the quota stretches them
  std::string_view limited_by;            // "path", "worker CPU" or "server CPU": the largest term
};

// compute above: CPU s per iteration of the forward and backward passes and the update.
double Compute(const CountsCoefficients& k, const ModelConfig& config);
// The equation above for `config` on `link`.
CountsTerms Evaluate(const CountsCoefficients& k, const ModelConfig& config, const LinkParameters& link);

class CountsModel : public PerformanceModel {
 public:
  std::string_view name() const override { return "counts"; }
  int version() const override { return 1; }
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override;
  using PerformanceModel::Fit;
 private:
  Prediction PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const override;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_COUNTS_H_
