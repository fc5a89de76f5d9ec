#include "orchestrator/model/corrected.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/core/link_text.h"
#include "orchestrator/core/statistics.h"
#include "orchestrator/model/corrected_terms.h"
#include "orchestrator/model/fitting.h"
#include "orchestrator/model/least_squares.h"

namespace dmlbench {
namespace {

constexpr char kOverhead[] = "cpu_overhead_s";
constexpr char kPerSample[] = "cpu_per_sample_s";
constexpr char kQuotaEfficiency[] = "quota_efficiency";
constexpr char kForwardShare[] = "forward_share";
// Stage 3: name, unit, and the unit it is fitted in (so each is of order one).
struct StageThree {
  const char* name;
  const char* unit;
  double scale;
};
const std::vector<StageThree> kStageThree = {{"cpu_per_byte_s", "s/byte", 1e-9},
                                             {"cpu_per_message_s", "s/message", 1e-5},
                                             {"combine_exponent", "1", 1},
                                             {"cpu_per_wait_s", "s/wait", 1e-5},
                                             {"link_balance_exponent", "1", 1},
                                             {"cpu_while_waiting", "s/s", 0.05}};
constexpr std::size_t kExponentIndex = 2;  // fitted as log(p - 1)
constexpr std::size_t kPerWaitIndex = 3;
constexpr std::size_t kBalanceIndex = 4;   // fitted as log(r - 1)
constexpr std::size_t kWaitingIndex = 5;   // cpu_while_waiting
constexpr char kWireFactor[] = "wire_factor";
// Per link profile (scope: ProfileScope), fitted in ns/byte.
constexpr char kNetworkByte[] = "cpu_per_network_byte_s";
constexpr double kNetworkByteScale = 1e-9;
// Per link profile: of the first peer's reply, the share hidden under the
// sends to the others (physics.h early_reply_bytes), fitted as its logit.
constexpr char kFirstPeer[] = "first_peer_share";
// A run whose busiest rank burned at least this share of its quota is bound by it.
constexpr double kCpuBoundShare = 0.75;
// Each stage-3 coefficient starts at x = 0 (the scale itself; p and r 2;
// wire factors 1) and has a weak prior there: moving a coefficient by a
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
    const std::string parameter = key.substr(0, space);
    std::string scope = space == std::string::npos ? "" : key.substr(space + 1);
    bool known = false, exponent = false, fraction = parameter == kForwardShare;
    for (const char* unscoped : {kOverhead, kPerSample, kQuotaEfficiency, kForwardShare}) {
      known = known || (scope.empty() && parameter == unscoped);
    }
    for (std::size_t j = 0; j < kStageThree.size(); ++j) {
      if (!scope.empty() || parameter != kStageThree[j].name) continue;
      known = true;
      exponent = j == kExponentIndex || j == kBalanceIndex;
    }
    if (parameter == kWireFactor && !scope.empty()) known = true;
    if ((parameter == kNetworkByte || parameter == kFirstPeer) && !scope.empty()) {
      // As `model fit` prints it ("1 Gbit/s, 0 µs", LinkText) or as it is
      // stored ("<rate>bit/s <latency>s"), the rate 0 for an unshaped link.
      std::istringstream text(scope);
      double rate = 0, latency = 0;
      std::string unit;
      if (const std::optional<Link> link = ParseLinkText(scope)) {
        rate = link->bandwidth_bits_per_s;
        latency = link->latency_s;
      } else if (!(text >> rate) || !(text >> unit) || unit != "bit/s" || !(text >> latency)) {
        throw ModelError(std::string(model) + ": cannot hold " + key + ": the scope of " + parameter +
                         " is a link profile as `model fit` prints it, e.g. \"1 Gbit/s, 0 µs\"");
      }
      scope = ProfileScope(rate, latency);
      known = true;
      fraction = parameter == kFirstPeer;
    }
    if (!known) {
      std::string names = std::string(kOverhead) + ", " + kPerSample + ", " + kQuotaEfficiency + ", " + kForwardShare;
      for (const StageThree& c : kStageThree) names += std::string(", ") + c.name;
      throw ModelError(std::string(model) + " fits no parameter \"" + key + "\" to hold; it fits " + names + ", " +
                       kWireFactor + " SCHEME (e.g. \"wire_factor ps k=1\"), " + kNetworkByte +
                       " PROFILE (e.g. \"" + kNetworkByte + " 1 Gbit/s, 0 µs\") and " + kFirstPeer + " PROFILE");
    }
    const double floor = exponent ? 1 : 0;
    if (!std::isfinite(value) || value <= floor || (fraction && value >= 1)) {
      std::ostringstream text;
      text << std::string(model) << ": cannot hold " << key << " at " << value << ": it must be above " << floor
           << (fraction ? " and below 1" : "");
      throw ModelError(text.str());
    }
    fixed[HeldKey(parameter, scope)] = value;
  }
  return fixed;
}

// The coefficients stage 3 fits, as one vector x in the order kStageThree,
// a wire factor per scheme, cpu_per_network_byte_s per profile,
// first_peer_share per profile; each x_j the logarithm its value is fitted
// as (value = scale e^x; p and r 1 + e^x; a share its logit).
class ExchangeCoefficients {
 public:
  ExchangeCoefficients(std::vector<std::string> schemes, std::map<std::string, double> profiles)
      : schemes_(std::move(schemes)), profiles_(std::move(profiles)) {
    for (const StageThree& c : kStageThree) names_.push_back(c.name);
    for (const std::string& scope : schemes_) names_.push_back(std::string(kWireFactor) + " " + scope);
    first_network_ = names_.size();
    for (const auto& [scope, bits] : profiles_) names_.push_back(std::string(kNetworkByte) + " " + scope);
    first_share_ = names_.size();
    for (const auto& [scope, bits] : profiles_) names_.push_back(std::string(kFirstPeer) + " " + scope);
  }

  std::size_t size() const { return names_.size(); }
  // As FixedParameters keys it: "name" or "name scope".
  const std::string& key(std::size_t j) const { return names_[j]; }
  // The parameter's name, unit and scope as the fit stores it.
  const char* name(std::size_t j) const {
    return j < kStageThree.size() ? kStageThree[j].name : j >= first_share_ ? kFirstPeer
                                                        : j >= first_network_ ? kNetworkByte
                                                                              : kWireFactor;
  }
  const char* unit(std::size_t j) const {
    const bool network = j < first_share_ && j >= first_network_;
    return j < kStageThree.size() ? kStageThree[j].unit : network ? "s/byte" : "1";
  }
  std::string scope(std::size_t j) const {
    return j < kStageThree.size() ? ""
           : j >= first_share_    ? std::next(profiles_.begin(), j - first_share_)->first
           : j >= first_network_  ? std::next(profiles_.begin(), j - first_network_)->first
                                  : schemes_[j - kStageThree.size()];
  }

  double Value(std::size_t j, double x) const {
    if (j >= first_share_) return 1 / (1 + std::exp(-x));
    if (j == kExponentIndex || j == kBalanceIndex) return 1 + std::exp(x);
    if (j >= first_network_) return kNetworkByteScale * std::exp(x);
    return (j < kStageThree.size() ? kStageThree[j].scale : 1.0) * std::exp(x);
  }
  // Value's inverse.
  double Logarithm(std::size_t j, double value) const {
    if (j >= first_share_) return std::log(value / (1 - value));
    if (j == kExponentIndex || j == kBalanceIndex) return std::log(value - 1);
    if (j >= first_network_) return std::log(value / kNetworkByteScale);
    return std::log(value / (j < kStageThree.size() ? kStageThree[j].scale : 1.0));
  }

  // `c` with every coefficient of x in place.
  CorrectedCoefficients With(CorrectedCoefficients c, const std::vector<double>& x) const {
    c.per_byte = Value(0, x[0]);
    c.per_message = Value(1, x[1]);
    c.exponent = Value(kExponentIndex, x[kExponentIndex]);
    c.per_wait = Value(kPerWaitIndex, x[kPerWaitIndex]);
    c.balance_exponent = Value(kBalanceIndex, x[kBalanceIndex]);
    c.while_waiting = Value(kWaitingIndex, x[kWaitingIndex]);
    for (std::size_t a = 0; a < schemes_.size(); ++a) {
      c.wire_factor[schemes_[a]] = Value(kStageThree.size() + a, x[kStageThree.size() + a]);
    }
    std::size_t j = first_network_;
    for (const auto& [scope, bits] : profiles_) c.per_network_byte[scope] = {bits, Value(j, x[j])}, ++j;
    for (const auto& [scope, bits] : profiles_) c.first_peer_share[scope] = {bits, Value(j, x[j])}, ++j;
    return c;
  }

 private:
  std::vector<std::string> schemes_;        // SchemeLabel of each wire factor
  std::map<std::string, double> profiles_;  // ProfileScope -> link rate, bits/s
  std::vector<std::string> names_;
  std::size_t first_network_ = 0, first_share_ = 0;
};

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
    AddHeldScopes();
    FitForwardShare();
    FitCompute();
    FitQuota();
    FitExchange();
    RecordParameters();
    RecordRuns();
    return std::move(fit_);
  }

 private:
  // The value `fixed_` holds the parameter at, if any.
  std::optional<double> held(std::string_view parameter, std::string_view scope = "") const {
    const auto it = fixed_.find(HeldKey(parameter, scope));
    return it == fixed_.end() ? std::nullopt : std::optional<double>(it->second);
  }

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
        calibrated_.insert(SchemeLabel(run->config));
        profiles_[ProfileScope(run->config.network.bandwidth_bits_per_s, run->config.network.latency_s)] =
            run->config.network.bandwidth_bits_per_s;
      }
    }
  }

  // A held wire factor or traffic cost of a scheme or profile no run
  // calibrated is the fit's all the same.
  void AddHeldScopes() {
    for (const auto& [key, value] : fixed_) {
      const std::size_t space = key.find(' ');
      if (space == std::string::npos) continue;
      const std::string scope = key.substr(space + 1);
      if (key.substr(0, space) == kWireFactor) calibrated_.insert(scope);
      if (key.substr(0, space) == kNetworkByte || key.substr(0, space) == kFirstPeer) {
        profiles_.emplace(scope, std::stod(scope));
      }
    }
  }

  void FitForwardShare() {
    forward_ = MedianConfidenceInterval(shares_.empty() ? std::vector<double>{0.5} : shares_);
    k_.forward_share = held(kForwardShare).value_or(forward_.median);
  }

  // (1) Compute: the CPU time of runs that exchange nothing (less what is held).
  void FitCompute() {
    if (!held(kOverhead)) compute_names_.push_back(kOverhead);
    if (!held(kPerSample)) compute_names_.push_back(kPerSample);
    std::vector<std::vector<double>> rows;
    std::vector<double> y, weights;
    for (const RunObservation* run : runs_) {
      if (run->config.workers != 1 || run->config.architecture == Architecture::kPs) continue;
      const double b = run->config.batch_size;
      rows.emplace_back();
      if (!held(kOverhead)) rows.back().push_back(1);
      if (!held(kPerSample)) rows.back().push_back(b);
      y.push_back(*run->worker_cpu_s - held(kOverhead).value_or(0) - held(kPerSample).value_or(0) * b);
      weights.push_back(1 / (*run->worker_cpu_s * *run->worker_cpu_s));
    }
    if (!compute_names_.empty()) {
      try {
        compute_ = FitLeastSquares(compute_names_, rows, y, weights);
      } catch (const FitError& e) {
        throw ModelError(name_ + ": compute needs one-worker runs of ring, mpi or p2p at two "
                         "batch sizes or more (experiments/compute.toml): " + e.what());
      }
    }
    k_.overhead = ComputeValue(kOverhead);
    k_.per_sample = ComputeValue(kPerSample);
  }

  // The coefficient of stage 1 that is fitted, or nullptr when it is held.
  const Coefficient* ComputeCoefficient(const char* parameter) const {
    if (held(parameter)) return nullptr;
    const auto at = std::find(compute_names_.begin(), compute_names_.end(), parameter);
    return &compute_.coefficients[static_cast<std::size_t>(at - compute_names_.begin())];
  }
  double ComputeValue(const char* parameter) const {
    const Coefficient* c = ComputeCoefficient(parameter);
    return c == nullptr ? *held(parameter) : c->value;
  }

  // (2) What a capped rank that its CPU binds gets of its share.
  void FitQuota() {
    std::vector<double> efficiencies;
    for (const RunObservation* run : runs_) {
      const double s = CpuShare(run->config);
      const double used = std::max(*run->worker_cpu_s, run->server_cpu_s.value_or(0)) / run->iteration_s;
      if (s < 1 && used >= kCpuBoundShare * s) efficiencies.push_back(used / s);
    }
    quota_ = MedianConfidenceInterval(efficiencies.empty() ? std::vector<double>{1.0} : efficiencies);
    k_.quota = held(kQuotaEfficiency).value_or(quota_.median);
  }

  // (3) The rest, on every run, as logarithms (ExchangeCoefficients): the
  // relative error of each run's iteration, and the prior.
  void FitExchange() {
    exchange_.emplace(std::vector<std::string>(calibrated_.begin(), calibrated_.end()), profiles_);
    const ExchangeCoefficients& layout = *exchange_;
    held_x_.assign(layout.size(), std::nullopt);
    for (std::size_t j = 0; j < layout.size(); ++j) {
      const auto it = fixed_.find(layout.key(j));
      if (it != fixed_.end()) held_x_[j] = layout.Logarithm(j, it->second);
    }
    std::vector<std::string> free_names;
    for (std::size_t j = 0; j < layout.size(); ++j) {
      if (held_x_[j]) continue;
      free_.push_back(j);
      free_names.push_back(layout.key(j));
    }
    if (!free_.empty()) {
      try {
        exchange_fit_ = FitNonlinearLeastSquares(
            free_names, std::vector<double>(free_.size(), 0.0), runs_.size() + free_.size(),
            [&](const std::vector<double>& x, std::vector<double>& r) {
              const CorrectedCoefficients c = layout.With(k_, Full(x));
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
    std::vector<double> solved;
    for (const Coefficient& c : exchange_fit_.coefficients) solved.push_back(c.value);
    k_ = layout.With(k_, Full(solved));
  }

  // Every stage-3 logarithm: the held ones, and `x_free` in the order of free_.
  std::vector<double> Full(const std::vector<double>& x_free) const {
    std::vector<double> x(exchange_->size());
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = held_x_[j].value_or(0);
    for (std::size_t i = 0; i < free_.size(); ++i) x[free_[i]] = x_free[i];
    return x;
  }

  void RecordParameters() {
    auto compute_row = [&](const char* parameter, const char* unit) {
      const Coefficient* c = ComputeCoefficient(parameter);
      return c == nullptr ? Held(parameter, *held(parameter), unit) : Fitted(*c, unit);
    };
    fit_.parameters.push_back(compute_row(kOverhead, "s"));
    fit_.parameters.push_back(compute_row(kPerSample, "s/sample"));
    fit_.parameters.push_back(held(kQuotaEfficiency)
                                  ? Held(kQuotaEfficiency, k_.quota, "1")
                                  : ModelParameterRow{kQuotaEfficiency, quota_.median, quota_.low, quota_.high, "1",
                                                      "fitted", ""});
    const ExchangeCoefficients& layout = *exchange_;
    for (std::size_t j = 0; j < layout.size(); ++j) {
      if (held_x_[j]) {
        fit_.parameters.push_back(Held(layout.name(j), layout.Value(j, *held_x_[j]), layout.unit(j), layout.scope(j)));
        continue;
      }
      // The interval of the logarithm, mapped to values.
      const Coefficient& x = exchange_fit_.coefficients[static_cast<std::size_t>(
          std::find(free_.begin(), free_.end(), j) - free_.begin())];
      fit_.parameters.push_back(Fitted(Coefficient{layout.name(j), layout.Value(j, x.value), 0,
                                                   layout.Value(j, x.ci_low), layout.Value(j, x.ci_high)},
                                       layout.unit(j), layout.scope(j)));
    }
    fit_.parameters.push_back(held(kForwardShare) ? Held(kForwardShare, k_.forward_share, "1")
                                                  : ModelParameterRow{kForwardShare, forward_.median, forward_.low,
                                                                      forward_.high, "1", "fitted", ""});
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
  std::set<std::string> calibrated_;         // schemes with a wire factor
  std::map<std::string, double> profiles_;   // whose job's traffic costs were calibrated: scope -> rate
  CorrectedCoefficients k_;
  MedianInterval forward_, quota_;
  std::vector<std::string> compute_names_;   // stage 1's fitted coefficients
  LeastSquaresFit compute_;
  std::optional<ExchangeCoefficients> exchange_;
  std::vector<std::optional<double>> held_x_;  // per stage-3 coefficient: its held logarithm, or fitted
  std::vector<std::size_t> free_;              // the stage-3 coefficients fitted
  LeastSquaresFit exchange_fit_;
};

// The coefficients a fit of the model stored.
CorrectedCoefficients CoefficientsOf(const ModelFitRecord& fit) {
  CorrectedCoefficients k;
  k.overhead = Parameter(fit, kOverhead);
  k.per_sample = Parameter(fit, kPerSample);
  k.quota = Parameter(fit, kQuotaEfficiency);
  k.per_byte = Parameter(fit, kStageThree[0].name);
  k.per_message = Parameter(fit, kStageThree[1].name);
  k.exponent = Parameter(fit, kStageThree[kExponentIndex].name);
  k.per_wait = Parameter(fit, kStageThree[kPerWaitIndex].name);
  k.balance_exponent = Parameter(fit, kStageThree[kBalanceIndex].name);
  k.while_waiting = Parameter(fit, kStageThree[kWaitingIndex].name);
  for (const ModelParameterRow& f : fit.parameters) {
    if (f.name == kWireFactor) k.wire_factor[f.scope] = f.value;
    // The scope is ProfileScope's text, which starts with the rate.
    if (f.name == kNetworkByte && !f.scope.empty()) k.per_network_byte[f.scope] = {std::stod(f.scope), f.value};
    if (f.name == kFirstPeer && !f.scope.empty()) k.first_peer_share[f.scope] = {std::stod(f.scope), f.value};
  }
  k.forward_share = Parameter(fit, kForwardShare);
  return k;
}

}  // namespace

ModelFitRecord CorrectedModel::Fit(const ModelData& data, const FixedParameters& asked) const {
  return CorrectedFit(*this, overlap_, CheckHeld(name(), asked)).Run(data);
}

Prediction CorrectedModel::Predict(const ModelFitRecord& fit, const ModelConfig& config) const {
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
