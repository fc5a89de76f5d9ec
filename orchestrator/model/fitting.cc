#include "orchestrator/model/fitting.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

constexpr char kAlpha[] = "alpha_s";
constexpr char kBandwidth[] = "bandwidth_bytes_per_s";
constexpr char kLinkEfficiency[] = "link_efficiency";
constexpr char kOverhead[] = "cpu_overhead_s";
constexpr char kQuotaEfficiency[] = "quota_efficiency";
// A run whose busiest rank burned at least this share of its quota is bound by it.
constexpr double kCpuBoundShare = 0.75;

}  // namespace

std::string ProfileScope(double bandwidth_bits_per_s, double latency_s) {
  // "%g" is what a default ostream writes for a double; without the stream's
  // set-up, which every prediction paid.
  char text[64];
  std::snprintf(text, sizeof text, "%gbit/s %gs", bandwidth_bits_per_s, latency_s);
  return text;
}

const ModelParameterRow* FindParameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope) {
  for (const ModelParameterRow& p : fit.parameters) {
    if (p.name == name && p.scope == scope) return &p;
  }
  return nullptr;
}

double Parameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope) {
  const ModelParameterRow* p = FindParameter(fit, name, scope);
  if (p == nullptr) {
    throw ModelError("fit " + std::to_string(fit.fit_id) + " of " + fit.model + " has no parameter " +
                     std::string(name) + (scope.empty() ? "" : " for " + std::string(scope)));
  }
  return p->value;
}

LinkParameters LinkFor(const ModelFitRecord& fit, const ModelConfig& config) {
  const std::string scope = ProfileScope(config.network.bandwidth_bits_per_s, config.network.latency_s);
  if (FindParameter(fit, kAlpha, scope) != nullptr) {
    return LinkParameters{Parameter(fit, kAlpha, scope), Parameter(fit, kBandwidth, scope)};
  }
  std::vector<double> alphas;
  for (const ModelParameterRow& p : fit.parameters) {
    if (p.name == kAlpha) alphas.push_back(p.value);
  }
  if (config.network.bandwidth_bits_per_s <= 0 || alphas.empty() || FindParameter(fit, kLinkEfficiency, "") == nullptr) {
    throw ModelError("no link probe for the profile " + scope + " and none to extrapolate from: run "
                     "`dmlbench cluster probe --profile ...` before fitting");
  }
  return LinkParameters{Median(alphas) + config.network.latency_s,
                        config.network.bandwidth_bits_per_s / 8 * Parameter(fit, kLinkEfficiency)};
}

ModelFitRecord NewFit(const PerformanceModel& model) {
  ModelFitRecord fit;
  fit.model = std::string(model.name());
  fit.model_version = model.version();
  fit.created_unix_s = UnixNow();
  return fit;
}

ModelParameterRow Fitted(const Coefficient& c, std::string unit, std::string scope) {
  return ModelParameterRow{c.name, c.value, c.ci_low, c.ci_high, std::move(unit), "fitted", std::move(scope)};
}

ModelParameterRow Measured(const Coefficient& c, std::string unit, std::string scope) {
  ModelParameterRow row = Fitted(c, std::move(unit), std::move(scope));
  row.source = "measured";
  return row;
}

ModelParameterRow Held(std::string name, double value, std::string unit, std::string scope) {
  return ModelParameterRow{std::move(name), value, std::nullopt, std::nullopt, std::move(unit), "fixed",
                           std::move(scope)};
}

std::string HeldKey(std::string_view name, std::string_view scope) {
  return scope.empty() ? std::string(name) : std::string(name) + " " + std::string(scope);
}

void RefuseFixed(const PerformanceModel& model, const FixedParameters& fixed) {
  if (fixed.empty()) return;
  throw ModelError(std::string(model.name()) + " holds no parameter at a value (--fix " + fixed.begin()->first +
                   "): only corrected, corrected+overlap and counts do");
}

void AddLinks(const ModelData& data, ModelFitRecord& fit) {
  std::vector<double> efficiencies;
  for (const LinkObservation& link : data.links) {
    const std::string scope = ProfileScope(link.bandwidth_bits_per_s, link.latency_s);
    fit.parameters.push_back({kAlpha, link.alpha_s, std::nullopt, std::nullopt, "s", "probe", scope});
    fit.parameters.push_back({kBandwidth, link.bytes_per_s, std::nullopt, std::nullopt, "bytes/s", "probe", scope});
    fit.probe_ids.insert(fit.probe_ids.end(), link.probe_ids.begin(), link.probe_ids.end());
    if (link.bandwidth_bits_per_s > 0) efficiencies.push_back(link.bytes_per_s * 8 / link.bandwidth_bits_per_s);
  }
  if (!efficiencies.empty()) {
    fit.parameters.push_back(
        {kLinkEfficiency, Median(efficiencies), std::nullopt, std::nullopt, "1", "probe", ""});
  }
}

std::vector<const RunObservation*> UsableRuns(const ModelData& data) {
  std::vector<const RunObservation*> runs;
  for (const RunObservation& run : data.runs) {
    if (run.split != "calibration") {
      throw ModelError("run " + run.run_key.substr(0, 12) + " is a " + run.split +
                       " run: a model is fitted on calibration runs only");
    }
    if (FindLink(data.links, run.config)) runs.push_back(&run);
  }
  if (runs.empty()) {
    throw ModelError("no calibration run with a probed link: fit needs complete calibration runs and "
                     "`dmlbench cluster probe` (or `inventory probe`) of their network profiles");
  }
  return runs;
}

double CpuShare(const ModelConfig& config) {
  return config.cpu_cores > 0 ? std::min(config.cpu_cores, 1.0) : 1.0;
}

void MeasureCompute(const ParameterTable& table, std::string_view per_work, double (*work)(const ModelConfig&),
                    const std::vector<const RunObservation*>& runs, SettledRows& settled) {
  const std::size_t overhead_j = table.Index(kOverhead), per_work_j = table.Index(per_work);
  const std::optional<double> overhead = SettledValue(settled, overhead_j);
  const std::optional<double> per = SettledValue(settled, per_work_j);
  std::vector<std::string> names;
  if (!overhead) names.push_back(kOverhead);
  if (!per) names.emplace_back(per_work);
  if (names.empty()) return;
  std::vector<std::vector<double>> rows;
  std::vector<double> y, weights;
  for (const RunObservation* run : runs) {
    if (run->config.workers != 1 || run->config.architecture == Architecture::kPs) continue;
    const double w = work(run->config);
    const double cpu = *run->worker_cpu_s;
    rows.emplace_back();
    if (!overhead) rows.back().push_back(1);
    if (!per) rows.back().push_back(w);
    y.push_back(cpu - overhead.value_or(0) - per.value_or(0) * w);
    weights.push_back(1 / (cpu * cpu));
  }
  for (const Coefficient& c : FitLeastSquares(names, rows, y, weights).coefficients) {
    const std::size_t j = table.Index(c.name);
    settled[j] = Measured(c, table.spec(j).unit);
  }
}

void MeasureQuota(const ParameterTable& table, const std::vector<const RunObservation*>& runs, SettledRows& settled) {
  const std::size_t j = table.Index(kQuotaEfficiency);
  if (settled[j]) return;
  std::vector<double> efficiencies;
  for (const RunObservation* run : runs) {
    const double s = CpuShare(run->config);
    const double used = std::max(*run->worker_cpu_s, run->server_cpu_s.value_or(0)) / run->iteration_s;
    if (s < 1 && used >= kCpuBoundShare * s) efficiencies.push_back(used / s);
  }
  const MedianInterval q = MedianConfidenceInterval(efficiencies.empty() ? std::vector<double>{1.0} : efficiencies);
  settled[j] = Measured(Coefficient{kQuotaEfficiency, q.median, 0, q.low, q.high}, table.spec(j).unit);
}

double GradientBytes(const ModelConfig& config) { return 4.0 * static_cast<double>(ParameterCount(config)); }

Prediction FinishPrediction(const ModelConfig& config, double iteration_s, Prediction p) {
  p.iterations = IterationsPerEpoch(config);
  if (p.iterations < 1) throw ModelError(ConfigLabel(config) + ": less than one iteration per epoch");
  p.iteration_s = iteration_s;
  p.epoch_s = iteration_s * static_cast<double>(p.iterations);
  p.throughput_samples_per_s = static_cast<double>(p.iterations) * config.batch_size * config.workers / p.epoch_s;
  return p;
}

}  // namespace dmlbench
