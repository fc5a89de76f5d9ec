#include "orchestrator/model/validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "orchestrator/core/link_text.h"
#include "orchestrator/model/interval.h"

namespace dmlbench {

std::string PointLabel(const RunObservation& run) {
  std::string hidden;
  for (int width : run.config.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(width);
  std::string label = ConfigLabel(run.config) + " " + LinkText(run.config.network.bandwidth_bits_per_s, run.config.network.latency_s);
  if (run.config.overlap) label += " bucket=" + std::to_string(run.config.bucket_bytes);
  if (run.config.partition_bytes > 0) label += " partition=" + std::to_string(run.config.partition_bytes);
  if (hidden != "128,32") label += " hidden=" + hidden;
  if (run.config.max_iterations_per_epoch > 0) label += " cap=" + std::to_string(run.config.max_iterations_per_epoch);
  if (run.config.cpu_cores > 0) {
    char share[32];
    std::snprintf(share, sizeof share, " cpu=%g", run.config.cpu_cores);
    label += share;
  }
  return label;
}

namespace {

// One configuration of one split: its runs and the model's prediction.
struct Point {
  std::vector<const RunObservation*> runs;
  std::vector<double> epochs;
  double predicted = 0;
  double worker_cpu = 0, server_cpu = 0;  // the model's
  std::string limited_by;
  std::optional<double> interval_level, low, high;
};
using Points = std::map<std::pair<std::string, std::string>, Point>;  // (split, label)

// The predictions table's row of `run`.
PredictionRow RowFor(const ModelFitRecord& fit, const RunObservation& run, const Prediction& prediction) {
  // The run's own iterations (the trainer's count) make its epoch.
  const double iterations = static_cast<double>(run.iterations_per_epoch);
  PredictionRow row;
  row.fit_id = fit.fit_id;
  row.run_id = run.run_id;
  row.split = run.split;
  row.iterations_per_epoch = run.iterations_per_epoch;
  row.predicted_iteration_s = prediction.iteration_s;
  row.predicted_epoch_s = prediction.iteration_s * iterations;
  row.compute_s = prediction.compute_s;
  row.update_s = prediction.update_s;
  row.comm_s = prediction.comm_s;
  row.hidden_comm_s = prediction.hidden_comm_s;
  row.measured_epoch_s = run.epoch_s;
  row.relative_error = (row.predicted_epoch_s - run.epoch_s) / run.epoch_s;
  if (!prediction.limited_by.empty()) {
    row.predicted_worker_cpu_s = prediction.worker_cpu_s;
    if (run.config.architecture == Architecture::kPs) row.predicted_server_cpu_s = prediction.server_cpu_s;
    row.limited_by = prediction.limited_by;
  }
  row.measured_worker_cpu_s = run.worker_cpu_s;
  row.measured_server_cpu_s = run.server_cpu_s;
  if (const std::optional<EpochInterval> interval = IntervalOf(fit, run.config, row.predicted_epoch_s)) {
    row.interval_level = interval->level;
    row.predicted_epoch_low_s = interval->low_s;
    row.predicted_epoch_high_s = interval->high_s;
  }
  return row;
}

// Every run the model predicts, into result.predictions and its point; a
// configuration it cannot predict, once, into result.skipped.
Points PredictRuns(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data,
                   ValidationResult& result) {
  Points points;
  for (const RunObservation& run : data.runs) {
    Prediction prediction;
    ModelConfig config = run.config;
    try {
      prediction = model.Predict(fit, config);
    } catch (const ModelError& e) {
      const std::string why = PointLabel(run) + ": " + e.what();
      if (std::find(result.skipped.begin(), result.skipped.end(), why) == result.skipped.end()) {
        result.skipped.push_back(why);
      }
      continue;
    }
    const PredictionRow row = RowFor(fit, run, prediction);
    result.predictions.push_back(row);
    Point& point = points[{run.split, PointLabel(run)}];
    point.runs.push_back(&run);
    point.epochs.push_back(run.epoch_s);
    point.predicted = row.predicted_epoch_s;
    point.worker_cpu = prediction.worker_cpu_s;
    point.server_cpu = prediction.server_cpu_s;
    point.limited_by = prediction.limited_by;
    point.interval_level = row.interval_level;
    point.low = row.predicted_epoch_low_s;
    point.high = row.predicted_epoch_high_s;
  }
  return points;
}

// The point's measured median and its interval against the prediction, and
// the CPU of both.
PointError ErrorOf(const std::string& split, const std::string& label, const Point& point) {
  PointError error;
  error.label = label;
  error.split = split;
  error.architecture = SchemeLabel(point.runs.front()->config);
  error.config = point.runs.front()->config;
  error.measured = MedianConfidenceInterval(point.epochs);
  error.cv = CoefficientOfVariation(point.epochs);
  error.wide_interval = std::max(error.measured.median - error.measured.low, error.measured.high - error.measured.median) >
                        kWideIntervalLimit * error.measured.median;
  error.predicted_epoch_s = point.predicted;
  error.relative_error = (point.predicted - error.measured.median) / error.measured.median;
  // The runs' CPU reports, where every run of the point has one.
  std::vector<double> worker_cpu, server_cpu;
  for (const RunObservation* run : point.runs) {
    if (run->worker_cpu_s) worker_cpu.push_back(*run->worker_cpu_s);
    if (run->server_cpu_s) server_cpu.push_back(*run->server_cpu_s);
  }
  error.predicted_worker_cpu_s = point.worker_cpu;
  error.predicted_server_cpu_s = point.server_cpu;
  error.limited_by = point.limited_by;
  error.interval_level = point.interval_level;
  error.predicted_low_s = point.low;
  error.predicted_high_s = point.high;
  if (worker_cpu.size() == point.runs.size()) error.measured_worker_cpu_s = Median(worker_cpu);
  if (server_cpu.size() == point.runs.size()) error.measured_server_cpu_s = Median(server_cpu);
  return error;
}

}  // namespace

ValidationResult Validate(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data) {
  ValidationResult result;
  const Points points = PredictRuns(model, fit, data, result);
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;  // (architecture, split)
  // (architecture, 0 worker / 1 server, split)
  std::map<std::tuple<std::string, int, std::string>, std::vector<double>> cpu_ratios;
  for (const auto& [key, point] : points) {
    const PointError error = ErrorOf(key.first, key.second, point);
    errors[{error.architecture, error.split}].push_back(std::fabs(error.relative_error));
    auto add_ratio = [&](int role, double predicted, const std::optional<double>& measured) {
      if (predicted > 0 && measured && *measured > 0) {
        cpu_ratios[{error.architecture, role, error.split}].push_back(predicted / *measured);
      }
    };
    add_ratio(0, error.predicted_worker_cpu_s, error.measured_worker_cpu_s);
    add_ratio(1, error.predicted_server_cpu_s, error.measured_server_cpu_s);
    result.points.push_back(error);
  }
  for (const auto& [key, values] : errors) result.summaries.push_back(Summarize(key.first, key.second, values));
  for (const auto& [key, ratios] : cpu_ratios) {
    const auto& [architecture, role, split] = key;
    result.cpu.push_back({architecture, role == 0 ? "worker" : "server", split, static_cast<int>(ratios.size()),
                          Median(ratios), *std::min_element(ratios.begin(), ratios.end()),
                          *std::max_element(ratios.begin(), ratios.end())});
  }
  return result;
}

std::optional<double> SplitHalfError(std::vector<std::pair<int, double>> epochs_by_repetition) {
  if (epochs_by_repetition.size() < 4) return std::nullopt;
  std::stable_sort(epochs_by_repetition.begin(), epochs_by_repetition.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<double> all, halves[2];
  for (std::size_t i = 0; i < epochs_by_repetition.size(); ++i) {
    all.push_back(epochs_by_repetition[i].second);
    halves[i % 2].push_back(epochs_by_repetition[i].second);
  }
  return std::fabs(Median(halves[0]) - Median(halves[1])) / (2 * Median(all));
}

std::vector<ErrorSummary> Repeatability(const ModelData& data) {
  std::map<std::pair<std::string, std::string>, std::vector<const RunObservation*>> points;  // (split, label)
  for (const RunObservation& run : data.runs) points[{run.split, PointLabel(run)}].push_back(&run);
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;  // (architecture, split)
  for (const auto& [key, runs] : points) {
    std::vector<std::pair<int, double>> epochs;
    for (const RunObservation* run : runs) epochs.push_back({run->config.repetition, run->epoch_s});
    if (const std::optional<double> error = SplitHalfError(std::move(epochs))) {
      errors[{SchemeLabel(runs.front()->config), key.first}].push_back(*error);
    }
  }
  std::vector<ErrorSummary> summaries;
  for (const auto& [key, values] : errors) summaries.push_back(Summarize(key.first, key.second, values));
  return summaries;
}

ErrorSummary Summarize(std::string architecture, std::string split, const std::vector<double>& abs_errors) {
  ErrorSummary summary;
  summary.architecture = std::move(architecture);
  summary.split = std::move(split);
  summary.points = static_cast<int>(abs_errors.size());
  summary.median_abs = Median(abs_errors);
  summary.p95_abs = Quantile(abs_errors, 0.95);
  summary.max_abs = *std::max_element(abs_errors.begin(), abs_errors.end());
  return summary;
}

}  // namespace dmlbench
