#include "orchestrator/model/corrected.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "orchestrator/core/link_text.h"
#include "orchestrator/core/statistics.h"
#include "orchestrator/model/corrected_terms.h"
#include "orchestrator/model/fitting.h"
#include "orchestrator/model/least_squares.h"
#include "orchestrator/model/parameter_table.h"

namespace dmlbench {
namespace {

// What a parameter sets in the coefficients, and so its scope: one value,
// one per scheme (SchemeLabel), or one per link profile (ProfileScope).
using SchemeValues = std::map<std::string, double>;
using ProfileValues = std::map<std::string, std::pair<double, double>>;
using Field = std::variant<double CorrectedCoefficients::*, SchemeValues CorrectedCoefficients::*,
                           ProfileValues CorrectedCoefficients::*>;

// A parameter of corrected: its spec (scope "": a fit's table gives each
// scheme or profile a row of its own) and the coefficient it sets.
struct CorrectedParameter {
  ParameterSpec spec;
  Field field;
  bool unscoped() const { return std::holds_alternative<double CorrectedCoefficients::*>(field); }
  bool per_scheme() const { return std::holds_alternative<SchemeValues CorrectedCoefficients::*>(field); }
  bool per_profile() const { return std::holds_alternative<ProfileValues CorrectedCoefficients::*>(field); }

  // `k` with this parameter of `scope` at `value`.
  void Set(CorrectedCoefficients& k, const std::string& scope, double value) const {
    if (unscoped()) k.*std::get<double CorrectedCoefficients::*>(field) = value;
    if (per_scheme()) (k.*std::get<SchemeValues CorrectedCoefficients::*>(field))[scope] = value;
    // The scope is ProfileScope's text, which starts with the rate.
    if (per_profile()) (k.*std::get<ProfileValues CorrectedCoefficients::*>(field))[scope] = {std::stod(scope), value};
  }
};

// Every parameter, in the order a fit stores them: compute and the quota
// measured (stages 1 and 2), then those stage 3 fits, each in the unit that
// makes its coordinate of order one at 0 (the scale itself; p and r 2; wire
// factors 1; a share 1/2), then forward_share, measured.
const std::vector<CorrectedParameter>& Parameters() {
  using K = CorrectedCoefficients;
  static const std::vector<CorrectedParameter> parameters = {
      {{"cpu_overhead_s", "s", "", Identified::kMeasured}, &K::overhead},
      {{"cpu_per_sample_s", "s/sample", "", Identified::kMeasured}, &K::per_sample},
      {{"quota_efficiency", "1", "", Identified::kMeasured}, &K::quota},
      {{"cpu_per_byte_s", "s/byte", "", Identified::kFitted, Transform::kLog, 1e-9}, &K::per_byte},
      {{"cpu_per_message_s", "s/message", "", Identified::kFitted, Transform::kLog, 1e-5}, &K::per_message},
      {{"combine_exponent", "1", "", Identified::kFitted, Transform::kLogAboveOne}, &K::exponent},
      {{"cpu_per_wait_s", "s/wait", "", Identified::kFitted, Transform::kLog, 1e-5}, &K::per_wait},
      {{"link_balance_exponent", "1", "", Identified::kFitted, Transform::kLogAboveOne}, &K::balance_exponent},
      {{"cpu_while_waiting", "s/s", "", Identified::kFitted, Transform::kLog, 0.05}, &K::while_waiting},
      {{"wire_factor", "1", "", Identified::kFitted, Transform::kLog, 1}, &K::wire_factor},
      {{"cpu_per_network_byte_s", "s/byte", "", Identified::kFitted, Transform::kLog, 1e-9}, &K::per_network_byte},
      // Of the first peer's reply, the share hidden under the sends to the
      // others (physics.h early_reply_bytes).
      {{"first_peer_share", "1", "", Identified::kFitted, Transform::kLogit}, &K::first_peer_share},
      {{"forward_share", "1", "", Identified::kMeasured, Transform::kLogit}, &K::forward_share},
  };
  return parameters;
}

// The parameter of that name, or nullptr.
const CorrectedParameter* ParameterNamed(std::string_view name) {
  for (const CorrectedParameter& p : Parameters()) {
    if (p.spec.name == name) return &p;
  }
  return nullptr;
}

// The table of a fit: a row per scheme of each per-scheme parameter, per
// profile of each per-profile one.
ParameterTable TableOf(std::string model, const std::set<std::string>& schemes, const std::set<std::string>& profiles) {
  std::vector<ParameterSpec> specs;
  for (const CorrectedParameter& p : Parameters()) {
    if (p.unscoped()) specs.push_back(p.spec);
    for (const std::string& scope : p.per_scheme() ? schemes : p.per_profile() ? profiles : std::set<std::string>{}) {
      specs.push_back(p.spec);
      specs.back().scope = scope;
    }
  }
  return ParameterTable(std::move(model), std::move(specs));
}

// The coefficients of `values`, one per parameter of `table` in its order.
CorrectedCoefficients CoefficientsOf(const ParameterTable& table, const std::vector<double>& values) {
  CorrectedCoefficients k;
  for (std::size_t j = 0; j < table.size(); ++j) {
    ParameterNamed(table.spec(j).name)->Set(k, table.spec(j).scope, values[j]);
  }
  return k;
}

// The samples of a batch, what compute's per-sample cost multiplies.
double BatchSize(const ModelConfig& config) { return config.batch_size; }

// Each stage-3 coordinate has a weak prior at 0: moving a coefficient by a
// factor e costs as much as a 0.3% error on one run, so that one the runs
// cannot determine (the wire of an architecture a CPU always binds) stays
// put instead of wandering, and every interval is finite.
constexpr double kPriorWeight = 0.003;

// `asked` with every key one the model fits and every value in its range; a
// profile's scope rewritten as ProfileScope writes it. Throws ModelError
// naming the key.
FixedParameters CheckHeld(std::string_view model, const FixedParameters& asked) {
  FixedParameters fixed;
  for (const auto& [key, value] : asked) {
    const std::size_t space = key.find(' ');
    const std::string name = key.substr(0, space);
    std::string scope = space == std::string::npos ? "" : key.substr(space + 1);
    const CorrectedParameter* p = ParameterNamed(name);
    if (p == nullptr || p->unscoped() != scope.empty()) {
      std::string names;
      for (Identified stage : {Identified::kMeasured, Identified::kFitted}) {
        for (const CorrectedParameter& q : Parameters()) {
          if (q.unscoped() && q.spec.identified == stage) names += (names.empty() ? "" : ", ") + q.spec.name;
        }
      }
      throw ModelError(std::string(model) + " fits no parameter \"" + key + "\" to hold; it fits " + names +
                       ", wire_factor SCHEME (e.g. \"wire_factor ps k=1\"), cpu_per_network_byte_s PROFILE "
                       "(e.g. \"cpu_per_network_byte_s 1 Gbit/s, 0 µs\") and first_peer_share PROFILE");
    }
    if (p->per_profile()) {
      // As `model fit` prints it ("1 Gbit/s, 0 µs", LinkText) or as it is
      // stored ("<rate>bit/s <latency>s"), the rate 0 for an unshaped link.
      std::istringstream text(scope);
      double rate = 0, latency = 0;
      std::string unit;
      if (const std::optional<Link> link = ParseLinkText(scope)) {
        rate = link->bandwidth_bits_per_s;
        latency = link->latency_s;
      } else if (!(text >> rate) || !(text >> unit) || unit != "bit/s" || !(text >> latency)) {
        throw ModelError(std::string(model) + ": cannot hold " + key + ": the scope of " + name +
                         " is a link profile as `model fit` prints it, e.g. \"1 Gbit/s, 0 µs\"");
      }
      scope = ProfileScope(rate, latency);
    }
    CheckHoldable(model, p->spec, key, value);
    fixed[HeldKey(name, scope)] = value;
  }
  return fixed;
}

// One fit of corrected or corrected+overlap: the state its stages share,
// each stage a method, run top to bottom by Run.
class CorrectedFit {
 public:
  CorrectedFit(const PerformanceModel& model, bool overlap, FixedParameters fixed)
      : model_(model), name_(model.name()), overlap_(overlap), fixed_(std::move(fixed)) {}

  ModelFitRecord Run(const ModelData& data) {
    fit_ = NewFit(model_);
    AddLinks(data, fit_);
    SelectRuns(data);
    SurveyRuns();
    HoldParameters();
    MeasureForwardShare();
    MeasureCompute();
    MeasureQuota();
    FitExchange();
    RecordParameters();
    RecordRuns();
    return std::move(fit_);
  }

 private:
  void SelectRuns(const ModelData& data) {
    for (const RunObservation* run : UsableRuns(data)) {
      // corrected never hides its exchange, so a run with overlap would
      // only mislead its fit; corrected+overlap, whose bucket schedule is
      // the one such a run follows, is fitted on them too
      // (experiments/overlap-calibration.toml): they are the only runs with
      // more than one exchange per iteration, so the only ones to tell what
      // a rank pays per bucket.
      if (!run->config.overlap || overlap_) runs_.push_back(run);
    }
    if (std::none_of(runs_.begin(), runs_.end(), [](const RunObservation* run) { return !run->config.overlap; })) {
      throw ModelError(name_ + ": no calibration run without overlap");
    }
  }

  // Each run's link, forward share and configuration, and the schemes and
  // profiles whose exchange the runs calibrate.
  void SurveyRuns() {
    for (const RunObservation* run : runs_) {
      if (!run->worker_cpu_s || (run->config.architecture == Architecture::kPs && !run->server_cpu_s)) {
        throw ModelError(name_ + ": calibration run " + run->run_key.substr(0, 12) +
                         " has no CPU time per rank: its trainer predates the epoch event's cpu_s "
                         "(schemas/trainer-events.md); run the calibration runs again with the current trainer");
      }
      links_.push_back(LinkFor(fit_, run->config));
      // With overlap, backward also polls the buckets in flight: not compute alone.
      if (!run->config.overlap && run->forward_s + run->backward_s > 0) {
        shares_.push_back(run->forward_s / (run->forward_s + run->backward_s));
      }
      points_.insert(ConfigLabel(run->config) + ProfileScope(run->config.network.bandwidth_bits_per_s, run->config.network.latency_s));
      // A wire factor needs runs that exchange.
      if (run->config.workers > 1 || run->config.architecture == Architecture::kPs) {
        schemes_.insert(SchemeLabel(run->config));
        profiles_.insert(ProfileScope(run->config.network.bandwidth_bits_per_s, run->config.network.latency_s));
      }
    }
  }

  // The fit's table, with the schemes and profiles the runs calibrate and
  // those a held parameter names (the fit's all the same), and the held
  // parameters settled.
  void HoldParameters() {
    for (const auto& [key, value] : fixed_) {
      const std::size_t space = key.find(' ');
      if (space == std::string::npos) continue;
      const CorrectedParameter& p = *ParameterNamed(key.substr(0, space));
      (p.per_scheme() ? schemes_ : profiles_).insert(key.substr(space + 1));
    }
    table_.emplace(TableOf(name_, schemes_, profiles_));
    settled_ = table_->Held(fixed_);
    // Stage 3 holds a parameter at its coordinate: its value is the one the
    // coordinate maps back to, the value asked to within a rounding (which
    // an ill-conditioned fit can carry into the other parameters' digits).
    for (std::size_t j = 0; j < table_->size(); ++j) {
      if (settled_[j] && table_->spec(j).identified == Identified::kFitted) {
        settled_[j]->value = table_->Value(j, table_->Coordinate(j, settled_[j]->value));
      }
    }
  }

  void MeasureForwardShare() {
    const std::size_t j = table_->Index("forward_share");
    if (settled_[j]) return;
    const MedianInterval forward = MedianConfidenceInterval(shares_.empty() ? std::vector<double>{0.5} : shares_);
    settled_[j] = Measured(Coefficient{"forward_share", forward.median, 0, forward.low, forward.high}, "1");
  }

  // (1) Compute: the CPU time of runs that exchange nothing (less what is held).
  void MeasureCompute() {
    try {
      dmlbench::MeasureCompute(*table_, "cpu_per_sample_s", BatchSize, runs_, settled_);
    } catch (const FitError& e) {
      throw ModelError(name_ + ": compute needs one-worker runs of ring, mpi or p2p at two "
                       "batch sizes or more (experiments/compute.toml): " + e.what());
    }
  }

  // (2) What a capped rank that its CPU binds gets of its share.
  void MeasureQuota() { dmlbench::MeasureQuota(*table_, runs_, settled_); }

  // (3) The rest, on every run, each at its coordinate (ParameterTable):
  // the relative error of each run's iteration, and the prior.
  void FitExchange() {
    const std::vector<std::string> free = table_->FreeKeys(settled_);
    if (free.empty()) return;
    try {
      exchange_ = FitNonlinearLeastSquares(
          free, std::vector<double>(free.size(), 0.0), runs_.size() + free.size(),
          [&](const std::vector<double>& x, std::vector<double>& r) {
            const CorrectedCoefficients c = CoefficientsOf(*table_, table_->Values(settled_, x));
            for (std::size_t i = 0; i < runs_.size(); ++i) {
              const RunObservation& run = *runs_[i];
              r[i] = Evaluate(c, run.config, 4.0 * run.parameters, links_[i], overlap_).iteration / run.iteration_s - 1;
            }
            for (std::size_t j = 0; j < x.size(); ++j) r[runs_.size() + j] = kPriorWeight * x[j];
          });
    } catch (const FitError& e) {
      throw ModelError(name_ + ": the exchange's costs need calibration runs of several workers "
                       "and both link profiles: " + e.what());
    }
  }

  void RecordParameters() {
    const std::vector<ModelParameterRow> rows = table_->Rows(settled_, exchange_);
    fit_.parameters.insert(fit_.parameters.end(), rows.begin(), rows.end());
    std::vector<double> values;
    for (const ModelParameterRow& row : rows) values.push_back(row.value);
    k_ = CoefficientsOf(*table_, values);
  }

  // Each run's fitted iteration, and their residual.
  void RecordRuns() {
    double squares = 0;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const double fitted = Evaluate(k_, runs_[i]->config, 4.0 * runs_[i]->parameters, links_[i], overlap_).iteration;
      fit_.runs.push_back({runs_[i]->run_id, runs_[i]->iteration_s, fitted});
      squares += (fitted - runs_[i]->iteration_s) * (fitted - runs_[i]->iteration_s);
    }
    fit_.points = static_cast<int>(points_.size());
    fit_.residual_rms_s = std::sqrt(squares / static_cast<double>(runs_.size()));
  }

  const PerformanceModel& model_;
  const std::string name_;
  const bool overlap_;
  const FixedParameters fixed_;
  ModelFitRecord fit_;
  std::vector<const RunObservation*> runs_;  // those fitted on
  std::vector<LinkParameters> links_;        // each run's
  std::vector<double> shares_;               // forward / (forward + backward) of the runs without overlap
  std::set<std::string> points_;             // configurations and profiles
  std::set<std::string> schemes_;            // with a wire factor
  std::set<std::string> profiles_;           // whose job's traffic costs were calibrated
  std::optional<ParameterTable> table_;      // once the schemes and profiles are known
  SettledRows settled_;                      // held, and once measured the measured ones
  LeastSquaresFit exchange_;                 // stage 3, over the free parameters
  CorrectedCoefficients k_;
};

// The coefficients a fit of the model stored.
CorrectedCoefficients CoefficientsOf(const ModelFitRecord& fit) {
  CorrectedCoefficients k;
  for (const CorrectedParameter& p : Parameters()) {
    if (p.unscoped()) {
      const double value = Parameter(fit, p.spec.name);
      CheckStored(fit.fit_id, p.spec, "", value);
      p.Set(k, "", value);
      continue;
    }
    for (const ModelParameterRow& row : fit.parameters) {
      if (row.name != p.spec.name || row.scope.empty()) continue;
      CheckStored(fit.fit_id, p.spec, row.scope, row.value);
      p.Set(k, row.scope, row.value);
    }
  }
  return k;
}

}  // namespace

ModelFitRecord CorrectedModel::Fit(const ModelData& data, const FixedParameters& asked) const {
  return CorrectedFit(*this, overlap_, CheckHeld(name(), asked)).Run(data);
}

Prediction CorrectedModel::PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const {
  const CorrectedCoefficients k = CoefficientsOf(fit);
  const CorrectedTerms terms = Evaluate(k, config, GradientBytes(config), LinkFor(fit, config), overlap_);
  Prediction p;
  const double share = CpuShare(config) < 1 ? k.quota * CpuShare(config) : 1.0;
  p.compute_s = std::min(terms.capped > terms.path ? terms.compute / share : terms.compute, terms.iteration);
  p.comm_s = terms.iteration - p.compute_s;
  p.hidden_comm_s = terms.hidden;
  p.worker_cpu_s = terms.worker_cpu;
  p.server_cpu_s = terms.server_cpu;
  p.limited_by = terms.limited_by;
  return FinishPrediction(config, terms.iteration, p);
}

}  // namespace dmlbench
