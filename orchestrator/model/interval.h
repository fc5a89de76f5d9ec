// Interval: the prediction interval a fit carries, from its calibration
// runs alone. Each calibration configuration is left out in turn, the model
// fitted on the others and the one left out predicted (leave one
// configuration out); the log ratios measured/predicted of those
// predictions are the residuals of split-conformal prediction. At level L
// (0.9 by default) the interval of a prediction p is p·e^(±q), q the
// ⌈(n+1)L⌉-th smallest of the n absolute log ratios: for a configuration
// exchangeable with the calibration ones it holds the measured median with
// probability at least L. Scaled per regime (the scheme, SchemeLabel) only
// when the residuals say so (kRegimeScaleAlpha). A prediction of more
// workers than any calibration run had is not exchangeable with those: it
// takes at least the interval of the calibration's largest worker count
// predicted by a fit on fewer workers (BeyondWorkersRow). Holds no model's
// equations and writes nothing. Pure; thread-safe (the models are).
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_INTERVAL_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_INTERVAL_H_

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/observations.h"
#include "orchestrator/model/performance_model.h"
#include "orchestrator/model/validation.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// The level an interval is stated at unless asked otherwise.
inline constexpr double kDefaultIntervalLevel = 0.9;
// A regime needs this many left-out configurations for a scale of its own.
inline constexpr int kMinRegimeConfigurations = 3;
// The intervals are scaled per regime when the absolute residuals of the
// regimes with kMinRegimeConfigurations or more differ: Kruskal-Wallis'
// test of them gives p below this. Otherwise one width serves every regime.
inline constexpr double kRegimeScaleAlpha = 0.05;

// Every calibration configuration of `calibration` (whose runs must all be
// calibration runs) left out in turn: `model` fitted on the others, holding
// `fixed`, and the left-out one predicted as Validate predicts it. A
// configuration whose fit or prediction fails is named in `skipped` with
// the reason. The fits run in parallel, one per hardware thread.
struct LeftOut {
  std::vector<PointError> points;     // split "calibration"
  std::vector<std::string> skipped;   // "<configuration>: <why>"
};
LeftOut LeaveOneConfigurationOut(const PerformanceModel& model, const ModelData& calibration,
                                 const FixedParameters& fixed);

// What leaving one configuration out cannot ask: whether the fit
// extrapolates in the workers. `model` fitted, holding `fixed`, on the
// calibration runs of `calibration` with fewer workers than the largest
// count among them, and every configuration at that count predicted as
// Validate predicts it. No run of that count is fitted on. When the fit
// fails (a term only runs of that count identify), every configuration at
// the count is named in `skipped` with the fit's reason. `calibration`'s
// runs must all be calibration runs.
LeftOut LeaveLargestWorkersOut(const PerformanceModel& model, const ModelData& calibration,
                               const FixedParameters& fixed);

// The ⌈(n+1)·level⌉-th smallest of the n `scores` (the split-conformal
// quantile), or nullopt when that exceeds n: too few scores for `level`
// (at 0.9, fewer than 9). `level` in (0, 1).
std::optional<double> ConformalQuantile(std::vector<double> scores, double level);

// The interval rows of a fit at `level` from its left-out predictions
// (LeaveOneConfigurationOut): one row of scope "" (every regime), and when
// the residuals differ by regime (kRegimeScaleAlpha) one per regime with
// kMinRegimeConfigurations or more. Empty when there are too few points
// for `level`.
std::vector<ModelIntervalRow> IntervalRows(const std::vector<PointError>& left_out, double level);

// The row for predictions beyond the calibration's workers, from the
// points of LeaveLargestWorkersOut (every one at the calibration's largest
// worker count W, predicted by a fit on fewer): scope "" and
// beyond_workers W, the conformal quantile of their residuals at `level`.
// A prediction of more than W workers extrapolates as they did; leaving
// one configuration out never does. nullopt when there are too few points
// for `level` (at 0.9, fewer than 9) or none.
std::optional<ModelIntervalRow> BeyondWorkersRow(const std::vector<PointError>& largest_left_out, double level);

// `model` fitted on `calibration` holding `fixed`, with its interval at
// `level` (ModelFitRecord::intervals: IntervalRows, and BeyondWorkersRow
// when that has one; none when too few configurations). Throws ModelError
// as Fit does.
ModelFitRecord FitWithInterval(const PerformanceModel& model, const ModelData& calibration,
                               const FixedParameters& fixed, double level = kDefaultIntervalLevel);

// The fit's row for predictions beyond its calibration's workers, or null.
const ModelIntervalRow* BeyondWorkersRowOf(const ModelFitRecord& fit);

// Whether the fit's interval has rows per regime (IntervalRows found the
// regimes' residuals differ), besides its row beyond the workers.
bool ScaledPerRegime(const ModelFitRecord& fit);

// The interval of an epoch time predicted for `config` under `fit`: its
// regime's row, else the row of every regime; for more workers than the
// fit's beyond-workers row names, the wider of that row and the regime's.
// nullopt for a fit without one.
struct EpochInterval {
  double level = 0;
  double low_s = 0, high_s = 0;
};
std::optional<EpochInterval> IntervalOf(const ModelFitRecord& fit, const ModelConfig& config, double predicted_s);

// (high - low) / (2 · predicted): the interval's half-width relative to the
// prediction.
double RelativeHalfWidth(const EpochInterval& interval, double predicted_s);

// How often the intervals of the points of `split` that have one hold the
// measured median, per scheme in scheme order: the points, those held, the
// share held and the median relative half-width.
struct IntervalCoverage {
  std::string architecture;
  double level = 0;
  int points = 0, covered = 0;
  double coverage = 0, median_half_width = 0;
};
std::vector<IntervalCoverage> CoverageByScheme(const std::vector<PointError>& points, const std::string& split);

// An interval in words, as the model commands print it. A log half-width
// as its reach below and above the prediction: "-9.5% / +10.5%".
std::string ReachText(double log_half_width);
// What a fit's interval beyond its calibration's workers rests on, after
// `article` ("the", "its"): "(the 12 calibration configurations of 4
// workers, each predicted by a fit on fewer workers)".
std::string BeyondWorkersSource(const ModelIntervalRow& beyond, const std::string& article);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_INTERVAL_H_
