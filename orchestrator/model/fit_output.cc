#include "orchestrator/model/fit_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "orchestrator/core/link_text.h"
#include "orchestrator/model/interval.h"

namespace dmlbench {
namespace {

std::string Number(double value, const char* format = "%.4g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string Percent(double fraction) { return Number(100 * fraction, "%.1f%%"); }

std::string ResidualText(const ModelFitRecord& fit) {
  return "residual rms " + Number(1e3 * fit.residual_rms_s.value_or(0), "%.3f") + " ms per iteration";
}

}  // namespace

std::string FitSummaryLine(const std::string& model, const ModelFitRecord& fit) {
  double worst = 0;
  for (const ModelFitRunRow& r : fit.runs) {
    worst = std::max(worst, std::fabs(r.fitted_iteration_s - r.measured_iteration_s) / r.measured_iteration_s);
  }
  return model + ": fit " + std::to_string(fit.fit_id) + " on " + std::to_string(fit.runs.size()) +
         " calibration runs (" + std::to_string(fit.points) + " points) and " + std::to_string(fit.probe_ids.size()) +
         " probe rows; " + ResidualText(fit) + ", largest " + Percent(worst);
}

TextTable FitParameterTable(const ModelFitRecord& fit) {
  TextTable table;
  table.headers = {"parameter", "scope", "value", "95% CI", "unit", "source"};
  table.right = {false, false, true, false, false, false};
  for (const ModelParameterRow& p : fit.parameters) {
    const std::string ci = p.ci_low && p.ci_high ? "[" + Number(*p.ci_low) + ", " + Number(*p.ci_high) + "]" : "";
    table.rows.push_back({p.name, ReadableScope(p.scope), Number(p.value), ci, p.unit, p.source});
  }
  return table;
}

IntervalOutput FitIntervalOutput(const ModelFitRecord& fit) {
  IntervalOutput output;
  if (fit.intervals.empty()) {
    output.text = "no prediction interval: too few calibration configurations to leave out for " +
                  Percent(kDefaultIntervalLevel) + "\n";
    return output;
  }
  const ModelIntervalRow& all = fit.intervals.front();
  const ModelIntervalRow* beyond = BeyondWorkersRowOf(fit);
  output.text = Percent(all.level) + " prediction interval of epoch time (split-conformal on " +
                std::to_string(all.configurations) +
                " calibration configurations, each left out and predicted by a fit on the others): ";
  if (!ScaledPerRegime(fit)) {
    output.text += ReachText(all.log_half_width) + " of the prediction\n";
  } else {
    output.text += "scaled per scheme, its residuals differing between schemes (Kruskal-Wallis p < " +
                   Number(kRegimeScaleAlpha) + ")\n";
    TextTable table;
    table.headers = {"scheme", "left out", "interval"};
    table.right = {false, true, true};
    for (const ModelIntervalRow& row : fit.intervals) {
      if (&row == beyond) continue;
      table.rows.push_back({row.scope.empty() ? "(any other)" : row.scope, std::to_string(row.configurations),
                            ReachText(row.log_half_width)});
    }
    output.table = std::move(table);
  }
  if (beyond) {
    output.after = "beyond " + std::to_string(beyond->beyond_workers) + " workers, at least " +
                   ReachText(beyond->log_half_width) + " " + BeyondWorkersSource(*beyond, "the") + "\n";
  }
  return output;
}

std::string FitVerdict(const std::vector<FitOutcome>& outcomes) {
  const std::size_t fitted =
      std::count_if(outcomes.begin(), outcomes.end(), [](const FitOutcome& o) { return o.fit.has_value(); });
  const std::string models = std::to_string(outcomes.size()) + (outcomes.size() == 1 ? " model" : " models");
  if (fitted == 0 && !outcomes.empty() &&
      std::all_of(outcomes.begin(), outcomes.end(),
                  [&](const FitOutcome& o) { return o.failure == outcomes.front().failure; })) {
    if (outcomes.size() == 1) return "model fit: " + outcomes.front().model + " not fitted: " + outcomes.front().failure + "\n";
    return "model fit: none of the " + models + " fitted, all for one reason: " + outcomes.front().failure + "\n";
  }
  std::size_t width = 0;
  for (const FitOutcome& o : outcomes) width = std::max(width, o.model.size());
  std::string text = "model fit: " + std::to_string(fitted) + " of " + models + " fitted\n";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const FitOutcome& o = outcomes[i];
    text += "  " + o.model + std::string(width - o.model.size() + 2, ' ');
    if (o.fit) {
      text += "fitted: fit " + std::to_string(o.fit->fit_id) + ", " + ResidualText(*o.fit) + "\n";
      continue;
    }
    const auto same = std::find_if(outcomes.begin(), outcomes.begin() + static_cast<std::ptrdiff_t>(i),
                                   [&](const FitOutcome& earlier) { return !earlier.fit && earlier.failure == o.failure; });
    text += same != outcomes.begin() + static_cast<std::ptrdiff_t>(i) ? "not fitted, as " + same->model + "\n"
                                                                      : "not fitted: " + o.failure + "\n";
  }
  return text;
}

}  // namespace dmlbench
