// Validation: a fitted model against measurement. Predicts every complete
// run (validation and calibration alike, each labelled with its own split),
// and summarises per architecture the absolute relative error of epoch time
// at the level of configurations: the model's prediction against the median
// of the configuration's repetitions, with the median's confidence
// interval, so that a point measured too noisily to judge is flagged, not
// hidden. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_VALIDATION_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_VALIDATION_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/core/statistics.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A point whose median's 95% interval reaches further than this from the
// median (relative) is measured too noisily to judge a 5% model.
inline constexpr double kWideIntervalLimit = 0.05;

// One configuration: its runs' steady-state epoch times and one model's
// prediction of it.
struct PointError {
  std::string label;                // "ring w=4 b=100 1 Gbit/s, 0 µs"
  std::string architecture;         // "ring", "ps k=2", "ps k=1 pulls-in-turn" (SchemeLabel)
  std::string split;
  ModelConfig config;               // the configuration of its runs
  MedianInterval measured;          // over the runs (each run's median steady epoch)
  std::optional<double> cv;
  bool wide_interval = false;
  double predicted_epoch_s = 0;
  double relative_error = 0;        // (predicted - measured median) / measured median
  // CPU s per iteration of the busiest worker and server: the model's
  // (Prediction; 0 without a CPU account) and the median of its runs' own
  // reports (none when the runs' trainer did not report it).
  double predicted_worker_cpu_s = 0, predicted_server_cpu_s = 0;
  std::optional<double> measured_worker_cpu_s, measured_server_cpu_s;
  std::string limited_by;           // Prediction's: what the model finds sets the iteration
  // The fit's interval of predicted_epoch_s (interval.h), if it has one.
  std::optional<double> interval_level, predicted_low_s, predicted_high_s;
};

struct ErrorSummary {
  std::string architecture;
  std::string split;
  int points = 0;
  double median_abs = 0, p95_abs = 0, max_abs = 0;
};

// The model's CPU account against the runs' (PointError's CPU fields): per
// architecture, role ("worker", "server") and split, the ratio model /
// measured over the configurations that have both.
struct CpuSummary {
  std::string architecture, role, split;
  int points = 0;
  double median_ratio = 0, min_ratio = 0, max_ratio = 0;
};

struct ValidationResult {
  std::vector<PredictionRow> predictions;  // one per run the model could predict
  std::vector<PointError> points;
  std::vector<ErrorSummary> summaries;     // per architecture and split, architecture order
  std::vector<CpuSummary> cpu;             // per architecture, role and split; empty without a CPU account
  std::vector<std::string> skipped;        // "ps k=4 w=2 b=100 ...: <why>"
};

ValidationResult Validate(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data);

// The configuration of a run as validation tells configurations apart: by
// every parameter a model reads, e.g. "ring w=4 b=100 1 Gbit/s, 0 µs cpu=0.15"
// (the hosts' CPU share, when capped).
std::string PointLabel(const RunObservation& run);

// How far a configuration's measured median lies from itself, from its own
// repetitions: the runs in repetition order are dealt into two halves
// (first, third, ... and second, fourth, ...), and half the gap between the
// halves' medians, over the median of all, is the split-half estimate of
// the error of that median (each half has half the runs, so the gap
// between them spreads about twice as wide as the error of the median of
// all). It is the error even a model that knew the configuration's true
// epoch time would show against this measurement, from the sweep's own
// noise; a sweep on another day adds its shift (`dmlbench compare`).
// Nullopt for fewer than 4 runs. `epochs_by_repetition`: (repetition, the
// run's median steady epoch time), in run order (which breaks ties).
std::optional<double> SplitHalfError(std::vector<std::pair<int, double>> epochs_by_repetition);

// SplitHalfError of every configuration of `data` with 4 runs or more,
// summarised per architecture and split, in architecture order.
std::vector<ErrorSummary> Repeatability(const ModelData& data);

// Median, 95th percentile and maximum of absolute relative errors (not empty).
ErrorSummary Summarize(std::string architecture, std::string split, const std::vector<double>& abs_errors);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_VALIDATION_H_
