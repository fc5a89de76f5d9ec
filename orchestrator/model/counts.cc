#include "orchestrator/model/counts.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/statistics.h"
#include "orchestrator/model/least_squares.h"

namespace dmlbench {
namespace {

// A parameter of the table and the coefficient it sets.
struct CountsParameter {
  ParameterSpec spec;
  double CountsCoefficients::*field;
};

// Measured before the fit (stages 1 and 2), then fitted (stage 3); each
// fitted one in the unit that makes its coordinate of order one at 0.
const std::vector<CountsParameter>& Parameters() {
  static const std::vector<CountsParameter> parameters = {
      {{"cpu_overhead_s", "s", "", Identified::kMeasured}, &CountsCoefficients::overhead},
      {{"cpu_per_sample_parameter_s", "s/(sample parameter)", "", Identified::kMeasured},
       &CountsCoefficients::per_sample_parameter},
      {{"quota_efficiency", "1", "", Identified::kMeasured}, &CountsCoefficients::quota},
      {{"cpu_per_network_byte_s", "s/byte", "", Identified::kFitted, Transform::kLog, 1e-9},
       &CountsCoefficients::per_network_byte},
      {{"cpu_per_wait_s", "s/wait", "", Identified::kFitted, Transform::kLog, 1e-5}, &CountsCoefficients::per_wait},
      {{"cpu_while_waiting", "s/s", "", Identified::kFitted, Transform::kLog, 0.05},
       &CountsCoefficients::while_waiting},
      {{"link_balance_exponent", "1", "", Identified::kFitted, Transform::kLogAboveOne}, &CountsCoefficients::balance},
  };
  return parameters;
}

// b P, what compute's per-sample cost multiplies.
double SamplesTimesParameters(const ModelConfig& config) {
  return config.batch_size * static_cast<double>(ParameterCount(config));
}

// What a rank gets of a second: q s when capped, all of it when not.
double Speed(const CountsCoefficients& k, const ModelConfig& config) {
  return CpuShare(config) < 1 ? k.quota * CpuShare(config) : 1.0;
}

// The bytes the busiest link moves in sequence, less the token bucket's bursts.
double PacedLinkBytes(const ModelConfig& config, const IterationTraffic& t, double balance_exponent) {
  const double r = balance_exponent;
  const double bytes =
      t.ends_shared ? std::pow(std::pow(t.sender_link_bytes, r) + std::pow(t.receiver_link_bytes, r), 1 / r)
                    : t.link_bytes;
  if (config.network.bandwidth_bits_per_s <= 0) return bytes;
  return PacedBytes(bytes, t.link_bursts, config.network.bandwidth_bits_per_s);
}

}  // namespace

double Compute(const CountsCoefficients& k, const ModelConfig& config) {
  return k.overhead + k.per_sample_parameter * config.batch_size * static_cast<double>(ParameterCount(config));
}

const ParameterTable& CountsParameters() {
  static const ParameterTable table = [] {
    std::vector<ParameterSpec> specs;
    for (const CountsParameter& p : Parameters()) specs.push_back(p.spec);
    return ParameterTable("counts", specs);
  }();
  return table;
}

CountsCoefficients CountsCoefficientsOf(const std::vector<double>& values) {
  CountsCoefficients k;
  for (std::size_t j = 0; j < Parameters().size(); ++j) k.*Parameters()[j].field = values[j];
  return k;
}

CountsTerms Evaluate(const CountsCoefficients& k, const ModelConfig& config, const LinkParameters& link) {
  const IterationTraffic t = Traffic(config, GradientBytes(config));
  CountsTerms terms;
  terms.compute = Compute(k, config);
  const double wire = t.latency_steps * link.alpha_s + PacedLinkBytes(config, t, k.balance) / link.bytes_per_s;
  terms.path = terms.compute + wire;
  const double network = k.per_network_byte * t.network_bytes / t.ranks;
  terms.worker_cpu = terms.compute + network + k.per_wait * t.worker_cpu_waits + k.while_waiting * wire;
  if (config.architecture == Architecture::kPs) {
    terms.server_cpu = network + k.per_wait * t.server_cpu_waits + k.while_waiting * terms.path;
  }
  const double speed = Speed(k, config);
  const double worker = terms.worker_cpu / speed, server = terms.server_cpu / speed;
  terms.iteration = std::max({terms.path, worker, server});
  terms.limited_by = terms.iteration == terms.path ? "path" : terms.iteration == worker ? "worker CPU" : "server CPU";
  return terms;
}

namespace {

// One fit of counts: the state its stages share, each stage a method, run
// top to bottom by Run.
class CountsFit {
 public:
  CountsFit(const PerformanceModel& model, const FixedParameters& fixed)
      : model_(model), table_(CountsParameters()), settled_(table_.Held(fixed)) {}

  ModelFitRecord Run(const ModelData& data) {
    fit_ = NewFit(model_);
    AddLinks(data, fit_);
    SelectRuns(data);
    MeasureCompute();
    MeasureQuota();
    FitCosts();
    RecordParameters();
    RecordRuns();
    return std::move(fit_);
  }

 private:
  // The runs without overlap (the model hides no exchange behind backward),
  // each with its CPU times, and their links.
  void SelectRuns(const ModelData& data) {
    for (const RunObservation* run : UsableRuns(data)) {
      if (run->config.overlap) continue;
      if (!run->worker_cpu_s || (run->config.architecture == Architecture::kPs && !run->server_cpu_s)) {
        throw ModelError("counts: calibration run " + run->run_key.substr(0, 12) +
                         " has no CPU time per rank: its trainer predates the epoch event's cpu_s "
                         "(schemas/trainer-events.md); run the calibration runs again with the current trainer");
      }
      runs_.push_back(run);
      links_.push_back(LinkFor(fit_, run->config));
    }
    if (runs_.empty()) throw ModelError("counts: no calibration run without overlap");
  }

  // (1) Compute: the CPU time of the runs that exchange nothing, less what
  // is held, on b P: each sample's forward and backward pass multiplies and
  // adds through every weight.
  void MeasureCompute() {
    try {
      dmlbench::MeasureCompute(table_, "cpu_per_sample_parameter_s", SamplesTimesParameters, runs_, settled_);
    } catch (const FitError& e) {
      throw ModelError(std::string("counts: compute needs one-worker runs of ring, mpi or p2p at two "
                                   "batch sizes (or layer widths) or more (experiments/compute.toml): ") + e.what());
    }
  }

  // (2) What a capped rank that its CPU binds gets of its share.
  void MeasureQuota() { dmlbench::MeasureQuota(table_, runs_, settled_); }

  // (3) The costs no measurement gives, from the relative error of every
  // run's iteration; their intervals widened by what the measured
  // parameters' own uncertainty moves them (Propagate).
  void FitCosts() {
    const std::vector<std::string> free = table_.FreeKeys(settled_);
    if (free.empty()) return;
    costs_ = FitCostsGiven(settled_, std::vector<double>(free.size(), 0.0));
    Propagate();
  }

  LeastSquaresFit FitCostsGiven(const SettledRows& settled, const std::vector<double>& start) const {
    try {
      return FitNonlinearLeastSquares(
          table_.FreeKeys(settled), start, runs_.size(), [&](const std::vector<double>& x, std::vector<double>& r) {
            const CountsCoefficients k = CountsCoefficientsOf(table_.Values(settled, x));
            for (std::size_t i = 0; i < runs_.size(); ++i) {
              r[i] = Evaluate(k, runs_[i]->config, links_[i]).iteration / runs_[i]->iteration_s - 1;
            }
          });
    } catch (const FitError& e) {
      throw ModelError(std::string("counts: the exchange's costs need calibration runs of several workers, "
                                   "of ps with several servers and of both link profiles: ") + e.what());
    }
  }

  // Each measured parameter moved by its standard error (its interval's
  // half-width over 1.96), the costs fitted again: the shift of each
  // coordinate is added in quadrature to its standard error, so that an
  // interval covers the measurement's uncertainty as well as the fit's.
  void Propagate() {
    std::vector<double> x, variance;
    for (const Coefficient& c : costs_.coefficients) {
      x.push_back(c.value);
      variance.push_back(c.standard_error * c.standard_error);
    }
    for (std::size_t j = 0; j < table_.size(); ++j) {
      const std::optional<ModelParameterRow>& row = settled_[j];
      if (!row || row->source != "measured") continue;
      SettledRows moved = settled_;
      moved[j]->value += (*row->ci_high - *row->ci_low) / 2 / 1.96;
      const LeastSquaresFit shifted = FitCostsGiven(moved, x);
      for (std::size_t f = 0; f < x.size(); ++f) {
        variance[f] += std::pow(shifted.coefficients[f].value - x[f], 2);
      }
    }
    const double t = costs_.degrees_of_freedom > 0 ? StudentTQuantile(0.975, costs_.degrees_of_freedom) : 0;
    for (std::size_t f = 0; f < x.size(); ++f) {
      Coefficient& c = costs_.coefficients[f];
      c.standard_error = std::sqrt(variance[f]);
      c.ci_low = c.value - t * c.standard_error;
      c.ci_high = c.value + t * c.standard_error;
    }
  }

  void RecordParameters() {
    const std::vector<ModelParameterRow> rows = table_.Rows(settled_, costs_);
    fit_.parameters.insert(fit_.parameters.end(), rows.begin(), rows.end());
    std::vector<double> values;
    for (const ModelParameterRow& row : rows) values.push_back(row.value);
    k_ = CountsCoefficientsOf(values);
  }

  // Each run's fitted iteration, and their residual.
  void RecordRuns() {
    double squares = 0;
    std::set<std::string> points;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunObservation& run = *runs_[i];
      const double fitted = Evaluate(k_, run.config, links_[i]).iteration;
      fit_.runs.push_back({run.run_id, run.iteration_s, fitted});
      squares += (fitted - run.iteration_s) * (fitted - run.iteration_s);
      points.insert(ConfigLabel(run.config) + ProfileScope(run.config.network.bandwidth_bits_per_s, run.config.network.latency_s));
    }
    fit_.points = static_cast<int>(points.size());
    fit_.residual_rms_s = std::sqrt(squares / static_cast<double>(runs_.size()));
  }

  const PerformanceModel& model_;
  const ParameterTable& table_;
  SettledRows settled_;                      // held, and once measured the measured ones
  ModelFitRecord fit_;
  std::vector<const RunObservation*> runs_;  // those fitted on
  std::vector<LinkParameters> links_;        // each run's
  LeastSquaresFit costs_;                    // stage 3, over the free parameters
  CountsCoefficients k_;
};

}  // namespace

ModelFitRecord CountsModel::Fit(const ModelData& data, const FixedParameters& fixed) const {
  return CountsFit(*this, fixed).Run(data);
}

Prediction CountsModel::PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const {
  const CountsCoefficients k = CountsCoefficientsOf(CountsParameters().ValuesOf(fit));
  const CountsTerms terms = Evaluate(k, config, LinkFor(fit, config));
  Prediction p;
  p.compute_s = terms.limited_by == "path" ? terms.compute : std::min(terms.compute / Speed(k, config), terms.iteration);
  p.comm_s = terms.iteration - p.compute_s;
  p.worker_cpu_s = terms.worker_cpu;
  p.server_cpu_s = terms.server_cpu;
  p.limited_by = terms.limited_by;
  return FinishPrediction(config, terms.iteration, p);
}

}  // namespace dmlbench
