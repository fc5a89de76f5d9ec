#include "orchestrator/model/linear.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/model/fitting.h"
#include "orchestrator/model/least_squares.h"

namespace dmlbench {
namespace {

std::string LinearScope(const ModelConfig& config) {
  return ArchitectureLabel(config) + " b=" + std::to_string(config.batch_size) + " " +
         ProfileScope(config.network.bandwidth_bits_per_s, config.network.latency_s);
}

}  // namespace

ModelFitRecord LinearModel::Fit(const ModelData& data, const FixedParameters& fixed) const {
  RefuseFixed(*this, fixed);
  ModelFitRecord fit = NewFit(*this);
  AddLinks(data, fit);
  std::map<std::string, std::vector<const RunObservation*>> groups;
  for (const RunObservation* run : UsableRuns(data)) {
    if (!run->config.overlap) groups[LinearScope(run->config)].push_back(run);
  }
  double squares = 0;
  for (const auto& [scope, runs] : groups) {
    std::set<int> workers;
    for (const RunObservation* run : runs) workers.insert(run->config.workers);
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (const RunObservation* run : runs) {
      rows.push_back(workers.size() > 1 ? std::vector<double>{1.0, double(run->config.workers)}
                                        : std::vector<double>{1.0});
      y.push_back(run->epoch_s);
    }
    const LeastSquaresFit line = FitLeastSquares(
        workers.size() > 1 ? std::vector<std::string>{"intercept_s", "slope_s_per_worker"}
                           : std::vector<std::string>{"intercept_s"},
        rows, y);
    fit.parameters.push_back(Fitted(line.coefficients[0], "s", scope));
    if (line.coefficients.size() > 1) {
      fit.parameters.push_back(Fitted(line.coefficients[1], "s/worker", scope));
    } else {
      fit.parameters.push_back({"slope_s_per_worker", 0, std::nullopt, std::nullopt, "s/worker", "fixed", scope});
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double iterations = static_cast<double>(runs[i]->iterations_per_epoch);
      fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, (y[i] - line.residuals[i]) / iterations});
      squares += std::pow(line.residuals[i] / iterations, 2);
    }
    fit.points += static_cast<int>(workers.size());
  }
  fit.residual_rms_s = std::sqrt(squares / static_cast<double>(fit.runs.size()));
  return fit;
}

Prediction LinearModel::PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const {
  std::string scope = LinearScope(config);
  if (FindParameter(fit, "intercept_s", scope) == nullptr) {
    const int batch = config.batch_size;
    int best = -1;
    for (const ModelParameterRow& p : fit.parameters) {
      if (p.name != "intercept_s") continue;
      const std::size_t at = p.scope.find(" b=");
      if (at == std::string::npos) continue;
      ModelConfig other = config;
      other.batch_size = std::stoi(p.scope.substr(at + 3));
      if (LinearScope(other) != p.scope) continue;
      if (best < 0 || std::abs(other.batch_size - batch) < std::abs(best - batch)) {
        best = other.batch_size;
        scope = p.scope;
      }
    }
    if (best < 0) throw ModelError("linear has no line for " + LinearScope(config) + ": no calibration run of it");
  }
  const double epoch = Parameter(fit, "intercept_s", scope) + Parameter(fit, "slope_s_per_worker", scope) * config.workers;
  const double iterations = static_cast<double>(IterationsPerEpoch(config));
  Prediction p;
  p.compute_s = epoch / iterations;
  return FinishPrediction(config, epoch / iterations, p);
}

}  // namespace dmlbench
