#include "orchestrator/model/interval.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>

#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

// One configuration left out: its points, or why it could not be predicted.
struct Outcome {
  std::vector<PointError> points;
  std::string skipped;
};

// `model` fitted on the runs of `calibration` that `left_out` does not
// take, and those it takes predicted; `what` names them when the fit fails.
Outcome LeaveOut(const PerformanceModel& model, const ModelData& calibration, const FixedParameters& fixed,
                 const std::function<bool(const RunObservation&)>& left_out, const std::string& what) {
  ModelData rest = calibration, out = calibration;
  rest.runs.clear();
  out.runs.clear();
  for (const RunObservation& run : calibration.runs) (left_out(run) ? out : rest).runs.push_back(run);
  Outcome outcome;
  try {
    ValidationResult result = Validate(model, model.Fit(rest, fixed), out);
    outcome.points = std::move(result.points);
    if (!result.skipped.empty()) outcome.skipped = result.skipped.front();
  } catch (const ModelError& e) {
    outcome.skipped = what + ": " + e.what();
  }
  return outcome;
}

// Throws ModelError for a run of `calibration` that is not a calibration run.
void RefuseValidationRuns(const ModelData& calibration) {
  for (const RunObservation& run : calibration.runs) {
    if (run.split != "calibration") {
      throw ModelError("run " + run.run_key.substr(0, 12) + " is a " + run.split +
                       " run: only calibration configurations are left out");
    }
  }
}

// The absolute log ratio measured/predicted of a left-out point.
double Score(const PointError& point) { return std::fabs(std::log(point.measured.median / point.predicted_epoch_s)); }

}  // namespace

LeftOut LeaveOneConfigurationOut(const PerformanceModel& model, const ModelData& calibration,
                                 const FixedParameters& fixed) {
  RefuseValidationRuns(calibration);
  std::vector<std::string> labels;
  for (const RunObservation& run : calibration.runs) labels.push_back(PointLabel(run));
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());

  // Each worker takes the next configuration until none is left.
  std::vector<Outcome> outcomes(labels.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < labels.size(); i = next++) {
      const std::string& label = labels[i];
      outcomes[i] = LeaveOut(
          model, calibration, fixed, [&](const RunObservation& run) { return PointLabel(run) == label; }, label);
    }
  };
  const std::size_t threads = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), labels.size());
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear();  // joins

  LeftOut left_out;
  for (Outcome& outcome : outcomes) {
    left_out.points.insert(left_out.points.end(), outcome.points.begin(), outcome.points.end());
    if (!outcome.skipped.empty()) left_out.skipped.push_back(outcome.skipped);
  }
  return left_out;
}

LeftOut LeaveLargestWorkersOut(const PerformanceModel& model, const ModelData& calibration,
                               const FixedParameters& fixed) {
  RefuseValidationRuns(calibration);
  int largest = 0;
  for (const RunObservation& run : calibration.runs) largest = std::max(largest, run.config.workers);
  const auto at_largest = [largest](const RunObservation& run) { return run.config.workers == largest; };
  Outcome outcome =
      LeaveOut(model, calibration, fixed, at_largest, "every configuration of " + std::to_string(largest) + " workers");
  LeftOut left_out;
  left_out.points = std::move(outcome.points);
  if (!outcome.skipped.empty()) left_out.skipped.push_back(outcome.skipped);
  return left_out;
}

std::optional<double> ConformalQuantile(std::vector<double> scores, double level) {
  const std::size_t n = scores.size();
  const auto rank = static_cast<std::size_t>(std::ceil((static_cast<double>(n) + 1) * level - 1e-9));
  if (n == 0 || rank > n) return std::nullopt;
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(rank - 1), scores.end());
  return scores[rank - 1];
}

std::vector<ModelIntervalRow> IntervalRows(const std::vector<PointError>& left_out, double level) {
  std::vector<double> scores;
  std::map<std::string, std::vector<double>> by_regime;
  for (const PointError& point : left_out) {
    if (!(point.predicted_epoch_s > 0)) continue;
    scores.push_back(Score(point));
    by_regime[point.architecture].push_back(scores.back());
  }
  const std::optional<double> pooled = ConformalQuantile(scores, level);
  if (!pooled) return {};
  const int n = static_cast<int>(scores.size());
  std::vector<ModelIntervalRow> rows = {{"", level, *pooled, n}};

  // Each regime's scale: the median of its absolute residuals.
  std::map<std::string, double> scale;
  for (const auto& [regime, values] : by_regime) {
    if (static_cast<int>(values.size()) >= kMinRegimeConfigurations && Median(values) > 0) {
      scale[regime] = Median(values);
    }
  }
  if (scale.size() < 2) return rows;
  std::vector<std::vector<double>> groups;
  for (const auto& [regime, s] : scale) groups.push_back(by_regime[regime]);
  if (KruskalWallis(groups).p >= kRegimeScaleAlpha) return rows;

  // The residuals say the regimes differ: every residual over its regime's
  // scale (the pooled median for a regime without one of its own), one
  // conformal quantile of those, times each regime's scale.
  const double pooled_scale = Median(scores);
  std::vector<double> scaled;
  for (const auto& [regime, values] : by_regime) {
    const auto it = scale.find(regime);
    for (double value : values) scaled.push_back(value / (it == scale.end() ? pooled_scale : it->second));
  }
  const double q = *ConformalQuantile(scaled, level);
  rows.front().log_half_width = q * pooled_scale;
  for (const auto& [regime, s] : scale) {
    rows.push_back({regime, level, q * s, static_cast<int>(by_regime[regime].size())});
  }
  return rows;
}

std::optional<ModelIntervalRow> BeyondWorkersRow(const std::vector<PointError>& largest_left_out, double level) {
  std::vector<double> scores;
  int workers = 0;
  for (const PointError& point : largest_left_out) {
    if (!(point.predicted_epoch_s > 0)) continue;
    scores.push_back(Score(point));
    workers = std::max(workers, point.config.workers);
  }
  const std::optional<double> q = ConformalQuantile(scores, level);
  if (!q || workers < 1) return std::nullopt;
  return ModelIntervalRow{"", level, *q, static_cast<int>(scores.size()), workers};
}

ModelFitRecord FitWithInterval(const PerformanceModel& model, const ModelData& calibration,
                               const FixedParameters& fixed, double level) {
  ModelFitRecord fit = model.Fit(calibration, fixed);
  fit.intervals = IntervalRows(LeaveOneConfigurationOut(model, calibration, fixed).points, level);
  if (fit.intervals.empty()) return fit;
  if (const auto beyond = BeyondWorkersRow(LeaveLargestWorkersOut(model, calibration, fixed).points, level)) {
    fit.intervals.push_back(*beyond);
  }
  return fit;
}

const ModelIntervalRow* BeyondWorkersRowOf(const ModelFitRecord& fit) {
  for (const ModelIntervalRow& r : fit.intervals) {
    if (r.beyond_workers > 0) return &r;
  }
  return nullptr;
}

bool ScaledPerRegime(const ModelFitRecord& fit) {
  return std::count_if(fit.intervals.begin(), fit.intervals.end(),
                       [](const ModelIntervalRow& r) { return r.beyond_workers == 0; }) > 1;
}

std::optional<EpochInterval> IntervalOf(const ModelFitRecord& fit, const ModelConfig& config, double predicted_s) {
  const ModelIntervalRow* row = nullptr;
  const std::string regime = SchemeLabel(config);
  for (const ModelIntervalRow& r : fit.intervals) {
    if (r.beyond_workers == 0 && (r.scope == regime || (r.scope.empty() && row == nullptr))) row = &r;
  }
  if (row == nullptr) return std::nullopt;
  double q = row->log_half_width;
  if (const ModelIntervalRow* beyond = BeyondWorkersRowOf(fit); beyond && config.workers > beyond->beyond_workers) {
    q = std::max(q, beyond->log_half_width);
  }
  return EpochInterval{row->level, predicted_s * std::exp(-q), predicted_s * std::exp(q)};
}

double RelativeHalfWidth(const EpochInterval& interval, double predicted_s) {
  return (interval.high_s - interval.low_s) / (2 * predicted_s);
}

std::vector<IntervalCoverage> CoverageByScheme(const std::vector<PointError>& points, const std::string& split) {
  std::map<std::string, IntervalCoverage> by_scheme;
  std::map<std::string, std::vector<double>> half_widths;
  for (const PointError& point : points) {
    if (point.split != split || !point.interval_level) continue;
    IntervalCoverage& c = by_scheme[point.architecture];
    c.architecture = point.architecture;
    c.level = *point.interval_level;
    ++c.points;
    const EpochInterval interval{*point.interval_level, *point.predicted_low_s, *point.predicted_high_s};
    if (point.measured.median >= interval.low_s && point.measured.median <= interval.high_s) ++c.covered;
    half_widths[point.architecture].push_back(RelativeHalfWidth(interval, point.predicted_epoch_s));
  }
  std::vector<IntervalCoverage> coverage;
  for (auto& [architecture, c] : by_scheme) {
    c.coverage = static_cast<double>(c.covered) / c.points;
    c.median_half_width = Median(half_widths[architecture]);
    coverage.push_back(c);
  }
  return coverage;
}

std::string ReachText(double log_half_width) {
  char text[64];
  std::snprintf(text, sizeof text, "%+.1f%% / %+.1f%%", 100 * (std::exp(-log_half_width) - 1),
                100 * (std::exp(log_half_width) - 1));
  return text;
}

std::string BeyondWorkersSource(const ModelIntervalRow& beyond, const std::string& article) {
  return "(" + article + " " + std::to_string(beyond.configurations) + " calibration configurations of " +
         std::to_string(beyond.beyond_workers) + " workers, each predicted by a fit on fewer workers)";
}

}  // namespace dmlbench
