// `dmlbench model fit|predict|validate|judge`: the performance models of
// orchestrator/model fitted on the calibration runs of the database (each
// fit with its prediction interval), asked for any configuration, and
// judged on the validation runs. `fit` and `validate` write their results
// into the database; `predict` only reads; `judge` fits in memory on every
// database it is given and reads them only. All work on a database copied
// from another machine.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/build_info.h"
#include "orchestrator/core/link_text.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/model/coverage.h"
#include "orchestrator/model/fit_output.h"
#include "orchestrator/model/interval.h"
#include "orchestrator/model/judge.h"
#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/validation.h"

namespace dmlbench {
namespace {

struct ModelOptions {
  std::vector<std::string> models;       // "" = every model
  std::vector<std::string> experiments;  // scope; empty = all
  std::vector<std::string> settings;     // predict: KEY=VALUE
  std::vector<std::string> fixes;        // fit: NAME[ SCOPE]=VALUE, held instead of fitted
  std::optional<std::int64_t> fit_id;    // predict, validate: this stored fit instead of each model's latest
  bool points = false;                   // validate: every configuration, not only the summaries
  std::vector<std::string> databases;    // judge: the sweeps
  double level = kDefaultIntervalLevel;  // judge: of the prediction interval
  bool json = false;                     // judge
};

std::string Number(double value, const char* format = "%.4g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string Percent(double fraction) { return Number(100 * fraction, "%.1f%%"); }

std::vector<const PerformanceModel*> Chosen(const ModelOptions& o) {
  std::vector<const PerformanceModel*> chosen;
  if (o.models.empty()) {
    for (const auto& model : Models()) chosen.push_back(model.get());
  } else {
    for (const std::string& name : o.models) chosen.push_back(&ModelNamed(name));
  }
  return chosen;
}

std::string Scope(const ModelOptions& o) {
  std::string scope;
  for (const std::string& e : o.experiments) scope += (scope.empty() ? "" : ",") + e;
  return scope;
}

// A fit holds the parameters of its version's equations, no others.
void CheckVersion(const Store& store, const PerformanceModel& model, const ModelFitRecord& fit, const char* which) {
  if (fit.model_version == model.version()) return;
  throw ModelError(std::string(which) + " of " + std::string(model.name()) + " in " + store.path() + " (fit " +
                   std::to_string(fit.fit_id) + ") is of version " + std::to_string(fit.model_version) +
                   "; this dmlbench's " + std::string(model.name()) + " is version " +
                   std::to_string(model.version()) + ": run `dmlbench model fit --model " + std::string(model.name()) +
                   "` again");
}

ModelFitRecord LatestFit(const Store& store, const PerformanceModel& model) {
  std::optional<ModelFitRecord> fit = store.LatestModelFit(std::string(model.name()));
  if (!fit) {
    throw ModelError("no fit of " + std::string(model.name()) + " in " + store.path() + ": run `dmlbench model fit --model " +
                     std::string(model.name()) + "` first");
  }
  CheckVersion(store, model, *fit, "the latest fit");
  return *fit;
}

// Every model's latest fit that this dmlbench can use; a model without
// one is named on stderr with what to do, and only when none has one is
// that an error. So a database whose fits predate one model's new version,
// or that one model could not be fitted on, still validates the others.
std::vector<std::pair<const PerformanceModel*, ModelFitRecord>> UsableLatestFits(const Store& store) {
  std::vector<std::pair<const PerformanceModel*, ModelFitRecord>> fits;
  std::vector<std::string> reasons;
  for (const PerformanceModel* model : Chosen({})) {
    try {
      fits.emplace_back(model, LatestFit(store, *model));
    } catch (const ModelError& e) {
      reasons.push_back(e.what());
    }
  }
  std::string all;
  for (const std::string& reason : reasons) all += (all.empty() ? "" : "; ") + reason;
  if (fits.empty()) throw ModelError("no model has a fit to use: " + all);
  for (const std::string& reason : reasons) std::cerr << "dmlbench: skipped: " << TerminalText(reason) << "\n";
  return fits;
}

// The fits predict and validate use: with --fit that one (its model must
// be among --model's, if given); else each --model's latest, which must
// be there; else every model's latest that is there (UsableLatestFits).
std::vector<std::pair<const PerformanceModel*, ModelFitRecord>> ChosenFits(const Store& store, const ModelOptions& o) {
  std::vector<std::pair<const PerformanceModel*, ModelFitRecord>> fits;
  if (!o.fit_id) {
    if (o.models.empty()) return UsableLatestFits(store);
    for (const PerformanceModel* model : Chosen(o)) fits.emplace_back(model, LatestFit(store, *model));
    return fits;
  }
  std::optional<ModelFitRecord> fit = store.ModelFitById(*o.fit_id);
  if (!fit) {
    throw ModelError("no fit " + std::to_string(*o.fit_id) + " in " + store.path() +
                     "; `dmlbench query \"SELECT fit_id, model, model_version, created_unix_s, scope FROM "
                     "model_fits\"` lists them");
  }
  const PerformanceModel& model = ModelNamed(fit->model);
  if (!o.models.empty() && std::find(o.models.begin(), o.models.end(), fit->model) == o.models.end()) {
    throw ModelError("fit " + std::to_string(fit->fit_id) + " is of " + fit->model + ", not of the --model asked for");
  }
  CheckVersion(store, model, *fit, "the fit asked for");
  fits.emplace_back(&model, *fit);
  return fits;
}

// The whole of `text` as a number (std::stoi for int, std::stod for
// double), or nullopt: "0.2x", "" and "abc" are not numbers.
template <typename T>
std::optional<T> WholeNumber(const std::string& text) {
  std::size_t used = 0;
  try {
    T parsed;
    if constexpr (std::is_same_v<T, int>) {
      parsed = std::stoi(text, &used);
    } else {
      parsed = std::stod(text, &used);
    }
    if (used == text.size()) return parsed;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Names on standard error each run whose invalid epochs LoadModelData left
// out, so that a fit or a judgement says what it did not see.
void WarnLeftOut(const ModelData& data) {
  for (const std::string& line : data.left_out) std::cerr << "warning: " << TerminalText(line) << "\n";
}

// Each model fitted in turn; one the data cannot fit does not stop the
// others. The fits are stored and printed as they come, the verdict last
// (model/fit_output.h); the command fails when a model was not fitted.
void FitCommand(const GlobalOptions& global, const ModelOptions& o) {
  const FixedParameters fixed = ParseFixedParameters(o.fixes);
  Store store(global.db);
  ModelData data = LoadModelData(store, o.experiments);
  WarnLeftOut(data);
  // Calibration runs only: what a fit may see.
  std::erase_if(data.runs, [](const RunObservation& run) { return run.split != "calibration"; });
  std::vector<FitOutcome> outcomes;
  for (const PerformanceModel* model : Chosen(o)) {
    FitOutcome& outcome = outcomes.emplace_back(FitOutcome{std::string(model->name()), std::nullopt, ""});
    ModelFitRecord fit;
    try {
      fit = FitWithInterval(*model, data, fixed);
    } catch (const ModelError& e) {
      outcome.failure = TerminalText(e.what());
      continue;
    }
    fit.code_commit = BuildCommit();
    fit.scope = Scope(o);
    fit.fit_id = store.AddModelFit(fit);
    outcome.fit = fit;
    std::cout << FitSummaryLine(outcome.model, fit) << "\n";
    PrintTable(std::cout, FitParameterTable(fit));
    const IntervalOutput interval = FitIntervalOutput(fit);
    std::cout << interval.text;
    if (interval.table) PrintTable(std::cout, *interval.table);
    std::cout << interval.after << "\n";
  }
  std::cout << FitVerdict(outcomes);
  std::string unfitted;
  for (const FitOutcome& outcome : outcomes) {
    if (!outcome.fit) unfitted += (unfitted.empty() ? "" : ", ") + outcome.model;
  }
  if (!unfitted.empty()) throw ModelError("not fitted: " + unfitted + " (see above why)");
}

// One row per architecture: the model, then the points, median, p95 and
// max of the summaries of each group (ErrorSummary::split), in that order.
void PrintErrors(const std::string& model, const std::vector<ErrorSummary>& summaries,
                 const std::vector<std::string>& groups, const std::vector<std::string>& headers) {
  std::map<std::string, std::map<std::string, const ErrorSummary*>> by_architecture;
  for (const ErrorSummary& s : summaries) by_architecture[s.architecture][s.split] = &s;
  std::vector<std::vector<std::string>> rows;
  for (const auto& [architecture, by_group] : by_architecture) {
    std::vector<std::string> row = {model, architecture};
    for (const std::string& group : groups) {
      const auto it = by_group.find(group);
      if (it == by_group.end()) {
        row.insert(row.end(), {"0", "", "", ""});
        continue;
      }
      const ErrorSummary& s = *it->second;
      row.insert(row.end(), {std::to_string(s.points), Percent(s.median_abs), Percent(s.p95_abs), Percent(s.max_abs)});
    }
    rows.push_back(row);
  }
  std::vector<bool> right(headers.size(), true);
  right[0] = right[1] = false;
  PrintTable(std::cout, headers, rows, right);
}

void PrintSummaries(const std::string& model, const std::vector<ErrorSummary>& summaries) {
  PrintErrors(model, summaries, {"validation", "calibration"},
              {"model", "architecture", "val points", "val median", "val p95", "val max", "cal points", "cal median",
               "cal p95", "cal max"});
}

// The validation errors again, split by whether every setting of the
// configuration was within the fit's calibration or one lay beyond it.
void PrintCoverageSummaries(const std::string& model, const std::vector<ErrorSummary>& summaries) {
  PrintErrors(model, summaries, {"within", "beyond"},
              {"model", "architecture", "within", "median", "p95", "max", "beyond", "median", "p95", "max"});
}

// The model's CPU account against the runs' own reports, one row per
// model, architecture and role, validation and calibration side by side.
void PrintCpuSummaries(const std::vector<std::pair<std::string, std::vector<CpuSummary>>>& by_model) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [model, summaries] : by_model) {
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> row_of;  // (architecture, role)
    std::vector<std::pair<std::string, std::string>> order;
    for (const CpuSummary& s : summaries) {
      const std::pair<std::string, std::string> key{s.architecture, s.role};
      std::vector<std::string>& row = row_of[key];
      if (row.empty()) {
        row = {model, s.architecture, s.role, "", "", "", "", "", "", "", ""};
        order.push_back(key);
      }
      const std::size_t at = s.split == "validation" ? 3 : 7;
      row[at] = std::to_string(s.points);
      row[at + 1] = Number(s.median_ratio, "%.2f");
      row[at + 2] = Number(s.min_ratio, "%.2f");
      row[at + 3] = Number(s.max_ratio, "%.2f");
    }
    for (const auto& key : order) rows.push_back(row_of[key]);
  }
  if (rows.empty()) return;
  std::cout << "\nCPU time per iteration of the busiest worker and server, the model's over the runs' own reports "
               "(median of the configurations' ratios; where a rank's CPU quota binds, a ratio under 1 predicts too "
               "fast; `model predict` says what sets each iteration):\n";
  PrintTable(std::cout,
             {"model", "architecture", "role", "val points", "val median", "val min", "val max", "cal points",
              "cal median", "cal min", "cal max"},
             rows, {false, false, false, true, true, true, true, true, true, true, true});
}

// "[low, high] (90%)", or "" without an interval.
std::string IntervalText(const std::optional<EpochInterval>& interval) {
  if (!interval) return "";
  return "[" + Number(interval->low_s) + ", " + Number(interval->high_s) + "] (" +
         Number(100 * interval->level, "%.0f%%") + ")";
}

std::optional<EpochInterval> PointInterval(const PointError& point) {
  if (!point.interval_level) return std::nullopt;
  return EpochInterval{*point.interval_level, *point.predicted_low_s, *point.predicted_high_s};
}

// Every configuration a model predicted: its runs' median epoch time with
// the median's 95% interval, the prediction and its error, and the CPU
// account where the model keeps one (ms per iteration, model / measured).
void PrintPoints(const std::string& model, const ValidationResult& result) {
  std::vector<std::vector<std::string>> rows;
  auto cpu = [](double predicted, const std::optional<double>& measured) {
    if (predicted <= 0) return std::string();
    return Number(1e3 * predicted, "%.2f") + " / " + (measured ? Number(1e3 * *measured, "%.2f") : "-");
  };
  for (const std::string split : {"validation", "calibration"}) {
    for (const PointError& point : result.points) {
      if (point.split != split) continue;
      rows.push_back({model, point.split, point.label, std::to_string(point.measured.n), Number(point.measured.median),
                      "[" + Number(point.measured.low) + ", " + Number(point.measured.high) + "]",
                      Number(point.predicted_epoch_s), Number(100 * point.relative_error, "%+.1f%%"),
                      cpu(point.predicted_worker_cpu_s, point.measured_worker_cpu_s),
                      cpu(point.predicted_server_cpu_s, point.measured_server_cpu_s), point.limited_by,
                      IntervalText(PointInterval(point))});
    }
  }
  PrintTable(std::cout,
             {"model", "split", "configuration", "runs", "measured_s", "95% CI", "predicted_s", "error",
              "worker cpu_ms", "server cpu_ms", "limited by", "predicted interval_s"},
             rows, {false, false, false, true, true, false, true, true, true, true, false, false});
}

void ValidateCommand(const GlobalOptions& global, const ModelOptions& o) {
  Store store(global.db);
  const ModelData data = LoadModelData(store, o.experiments);
  WarnLeftOut(data);
  const auto fits = ChosenFits(store, o);
  // Which fits are judged, and what each held instead of fitting (--fix;
  // linear's slope of a group with one worker count is fixed at 0 by
  // construction, not held).
  std::string judged;
  for (const auto& [model, fit] : fits) {
    std::string held;
    for (const ModelParameterRow& p : fit.parameters) {
      if (p.source == "fixed" && fit.model != "linear") held += (held.empty() ? "" : ", ") + (p.scope.empty() ? p.name : p.name + " " + ReadableScope(p.scope));
    }
    judged += (judged.empty() ? "" : "; ") + std::string(model->name()) + " fit " + std::to_string(fit.fit_id) +
              (held.empty() ? "" : " (held: " + held + ")");
  }
  std::cout << "fits: " << judged << "\n";
  std::cout << "absolute relative error of epoch time per configuration (median of its repetitions); "
               "validation runs were never seen by the fit, calibration errors are shown for comparison\n";
  std::vector<std::string> flagged;
  std::vector<std::pair<std::string, std::vector<ErrorSummary>>> coverage_rows;
  std::vector<std::pair<std::string, std::vector<CpuSummary>>> cpu_rows;
  std::vector<std::vector<std::string>> interval_rows;
  // Every fit's predictions first, then stored in one transaction: a fit
  // that fails leaves none stored.
  std::vector<ValidationResult> results;
  std::vector<PredictionRow> predictions;
  for (const auto& [model, fit] : fits) {
    results.push_back(Validate(*model, fit, data));
    predictions.insert(predictions.end(), results.back().predictions.begin(), results.back().predictions.end());
  }
  store.AddPredictions(predictions);
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const auto& [model, fit] = fits[i];
    const ValidationResult& result = results[i];
    cpu_rows.push_back({std::string(model->name()), result.cpu});
    PrintSummaries(std::string(model->name()), result.summaries);
    if (o.points) PrintPoints(std::string(model->name()), result);
    coverage_rows.push_back({std::string(model->name()), SummariesByCoverage(result, CalibrationCoverage(fit, data))});
    for (const IntervalCoverage& c : CoverageByScheme(result.points, "validation")) {
      interval_rows.push_back({std::string(model->name()), c.architecture, Percent(c.level), std::to_string(c.points),
                               std::to_string(c.covered), Percent(c.coverage), Percent(c.median_half_width)});
    }
    for (const std::string& skipped : result.skipped) {
      std::cout << "  " << model->name() << " cannot predict " << skipped << "\n";
    }
    if (flagged.empty()) {
      for (const PointError& point : result.points) {
        if (!point.wide_interval) continue;
        flagged.push_back(point.split + " " + point.label + ": median " + Number(point.measured.median) + " s, " +
                          Number(100 * point.measured.coverage, "%.1f") + "% interval [" +
                          Number(point.measured.low) + ", " + Number(point.measured.high) + "] over " +
                          std::to_string(point.measured.n) + " runs");
      }
    }
  }
  std::cout << "\nthe validation configurations again: those with every setting within the fit's calibration "
               "runs and probes, and those with one beyond them (`model predict` names it):\n";
  for (const auto& [model, summaries] : coverage_rows) PrintCoverageSummaries(model, summaries);
  if (!interval_rows.empty()) {
    std::cout << "\nthe fits' prediction intervals (from their calibration runs alone) on the validation "
                 "configurations: how many hold the measured median, and the median half-width:\n";
    PrintTable(std::cout, {"model", "architecture", "level", "val points", "covered", "coverage", "half-width"},
               interval_rows, {false, false, true, true, true, true, true});
  }
  PrintCpuSummaries(cpu_rows);
  const std::vector<ErrorSummary> repeatability = Repeatability(data);
  if (!repeatability.empty()) {
    std::cout << "\nthe measurement against itself: per configuration of 4 runs or more, half the gap between the "
                 "medians of its odd and of its even repetitions, over its median; what even a model that knew "
                 "every true epoch time would miss by on this sweep's own noise (another sweep adds its shift: "
                 "dmlbench compare):\n";
    PrintSummaries("(split half)", repeatability);
  }
  if (!flagged.empty()) {
    std::cout << "\n" << flagged.size() << " points are measured too noisily to judge a 5% model (interval beyond "
              << Percent(kWideIntervalLimit) << " of the median):\n";
    for (const std::string& line : flagged) std::cout << "  " << line << "\n";
  }
}

// The run parameters `model predict` takes; "batch" is batch_size.
const std::vector<std::string_view> kRunSettings = {
    "architecture", "workers", "servers", "batch_size", "batch", "overlap", "bucket_bytes", "partition_bytes",
    "pulls_in_turn", "hidden", "max_iterations_per_epoch"};

// KEY=VALUE settings of `model predict` onto a configuration: the run's
// parameters, read and checked as an experiment file's (ParseRunSettings),
// and what the model needs beyond them — the link, the hosts' CPU share,
// the training set's size.
ModelConfig ParseSettings(const std::vector<std::string>& settings) {
  std::vector<std::pair<std::string, std::string>> run;
  NetworkProfile network;
  std::int64_t train_samples = kFashionMnistTrainSamples;
  double cpu_cores = 0;
  for (const std::string& setting : settings) {
    const std::size_t equals = setting.find('=');
    if (equals == std::string::npos) throw ModelError("expected KEY=VALUE, got \"" + setting + "\"");
    const std::string key = setting.substr(0, equals), value = setting.substr(equals + 1);
    if (key == "train_samples") {
      const std::optional<int> parsed = WholeNumber<int>(value);
      if (!parsed || *parsed < 1) {
        throw ModelError(key + " must be an integer of at least 1, got \"" + value + "\"");
      }
      train_samples = *parsed;
    } else if (key == "bandwidth") {
      network.bandwidth_bits_per_s = value == "unshaped" ? 0 : ParseBandwidth(value);
    } else if (key == "latency") {
      network.latency_s = ParseLatency(value);
    } else if (key == "cpu") {
      const std::optional<double> cores = WholeNumber<double>(value);
      if (!cores || !(*cores >= 0)) {
        throw ModelError("cpu must be the hosts' CPU share in cores, 0 for uncapped (e.g. 0.15), got \"" + value +
                         "\"");
      }
      cpu_cores = *cores;
    } else if (std::find(kRunSettings.begin(), kRunSettings.end(), key) != kRunSettings.end()) {
      run.emplace_back(key == "batch" ? "batch_size" : key, value);
    } else {
      throw ModelError("unknown setting \"" + key + "\", expected architecture, workers, servers, batch_size, "
                       "overlap, bucket_bytes, partition_bytes, pulls_in_turn, hidden, bandwidth, latency, "
                       "cpu, max_iterations_per_epoch, train_samples");
    }
  }
  ModelConfig config{ParseRunSettings(run), train_samples, cpu_cores};
  config.network = network;
  return config;
}

// What each prediction rests on: the model's misses on the held-out
// configurations of the architecture, and what lies beyond its calibration.
void PrintCoverage(const std::vector<std::pair<std::string, Coverage>>& coverages) {
  if (coverages.empty()) return;
  std::cout << "\nwhat each prediction rests on (validation runs are never fitted; errors of epoch time):\n";
  for (const auto& [model, coverage] : coverages) {
    std::cout << "  " << model << ": ";
    if (coverage.held_out) {
      const ErrorSummary& s = *coverage.held_out;
      std::cout << "held-out " << coverage.architecture << " configurations: median " << Percent(s.median_abs)
                << ", p95 " << Percent(s.p95_abs) << ", max " << Percent(s.max_abs) << " over " << s.points;
    } else {
      std::cout << "no validation run of " << coverage.architecture << " in this database: its error is unknown";
    }
    std::cout << "\n";
    if (coverage.beyond.empty()) {
      std::cout << "    every setting within its calibration\n";
    } else {
      std::cout << "    beyond its calibration:\n";
      for (const std::string& item : coverage.beyond) std::cout << "      " << item << "\n";
    }
  }
}

// Prediction::limited_by in words.
std::string LimitText(const std::string& limited_by) {
  if (limited_by == "path") return "the path (compute and the wire at full CPU speed)";
  if (limited_by == "worker CPU") return "the workers' CPU quota";
  return "the servers' CPU quota";
}

void PredictCommand(const GlobalOptions& global, const ModelOptions& o) {
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  const ModelConfig config = ParseSettings(o.settings);
  std::cout << ConfigLabel(config) << " at " << LinkText(config.network.bandwidth_bits_per_s, config.network.latency_s) << "; "
            << IterationsPerEpoch(config) << " iterations per epoch\n";
  const ModelData data = LoadModelData(*store, {});
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<std::string, Coverage>> coverages;
  std::vector<std::string> cpu_lines;
  for (const auto& [model, fit] : ChosenFits(*store, o)) {
    try {
      const Prediction p = model->Predict(fit, config);
      if (!p.limited_by.empty()) {
        std::string line = "  " + std::string(model->name()) + ": " + Number(1e3 * p.worker_cpu_s) +
                           " ms of CPU per iteration for the busiest worker";
        if (p.server_cpu_s > 0) line += ", " + Number(1e3 * p.server_cpu_s) + " ms for the busiest server";
        line += "; the iteration is set by " + LimitText(p.limited_by);
        cpu_lines.push_back(line);
      }
      rows.push_back({std::string(model->name()), std::to_string(fit.fit_id), Number(1e3 * p.iteration_s),
                      Number(p.epoch_s), Number(p.throughput_samples_per_s, "%.0f"), Number(1e3 * p.compute_s),
                      Number(1e3 * p.update_s), Number(1e3 * p.comm_s), Number(1e3 * p.hidden_comm_s),
                      IntervalText(IntervalOf(fit, config, p.epoch_s)), ""});
      Coverage coverage = CoverageOf(*model, fit, data, config);
      if (const ModelIntervalRow* beyond = BeyondWorkersRowOf(fit); beyond && config.workers > beyond->beyond_workers) {
        coverage.beyond.push_back("its interval is at least " + ReachText(beyond->log_half_width) +
                                  ", the fit's beyond " + std::to_string(beyond->beyond_workers) + " workers " +
                                  BeyondWorkersSource(*beyond, "its"));
      }
      coverages.emplace_back(std::string(model->name()), std::move(coverage));
    } catch (const ModelError& e) {
      rows.push_back({std::string(model->name()), std::to_string(fit.fit_id), "", "", "", "", "", "", "", "", e.what()});
    }
  }
  PrintTable(std::cout,
             {"model", "fit", "iteration_ms", "epoch_s", "samples/s", "compute_ms", "update_ms", "comm_ms",
              "hidden_ms", "epoch interval_s", "note"},
             rows, {false, true, true, true, true, true, true, true, true, false, false});
  if (!cpu_lines.empty()) {
    std::cout << "\nwhat the model expects of the CPU (each rank's CPU work over its quota, against the path):\n";
    for (const std::string& line : cpu_lines) std::cout << line << "\n";
  }
  PrintCoverage(coverages);
}

// The sweep a database holds, as judge names it: its file name without .db.
std::string SweepName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 3 && name.ends_with(".db")) name.resize(name.size() - 3);
  return name;
}

nlohmann::json JudgementJson(const ModelJudgement& j) {
  nlohmann::json json = {{"model", j.model}, {"version", j.version}};
  if (!j.not_fitted.empty()) {
    json["not_fitted"] = j.not_fitted;
    return json;
  }
  json["calibration_configurations"] = j.calibration_configurations;
  json["interval"] = {{"level", j.level}, {"scaled_by_scheme", j.scaled_by_regime}, {"beyond_workers", nullptr}};
  if (j.beyond_workers) {
    json["interval"]["beyond_workers"] = {{"workers", j.beyond_workers->beyond_workers},
                                          {"configurations", j.beyond_workers->configurations},
                                          {"log_half_width", j.beyond_workers->log_half_width}};
  }
  nlohmann::json schemes = nlohmann::json::array();
  for (const SchemeJudgement& s : j.schemes) {
    nlohmann::json scheme = {{"architecture", s.architecture},
                             {"validation_configurations", s.configurations},
                             {"median_abs_error", s.median_abs},
                             {"p95_abs_error", s.p95_abs},
                             {"max_abs_error", s.max_abs},
                             {"split_half_configurations", s.split_half_configurations},
                             {"split_half_median", nullptr},
                             {"covered", s.covered},
                             {"coverage", nullptr},
                             {"median_half_width", nullptr}};
    if (s.split_half_median) scheme["split_half_median"] = *s.split_half_median;
    if (s.coverage) scheme["coverage"] = *s.coverage;
    if (s.median_half_width) scheme["median_half_width"] = *s.median_half_width;
    schemes.push_back(scheme);
  }
  json["schemes"] = schemes;
  json["skipped"] = j.skipped;
  return json;
}

// One row per sweep, model and scheme; then what could not be judged.
void PrintJudgements(const std::vector<std::pair<std::string, std::vector<ModelJudgement>>>& sweeps, double level) {
  std::cout << "each model fitted on a sweep's calibration runs alone (its " << Percent(level)
            << " interval from them, each calibration configuration left out in turn, and beyond the calibration's "
               "workers at least as wide as its largest worker count left out) and judged on that sweep's "
               "validation configurations: absolute relative error of epoch time (prediction against the median "
               "of the configuration's runs) beside the sweep's split-half noise on the same configurations (half "
               "the gap between the medians of its even- and odd-indexed repetitions, over its median; the "
               "median over the configurations of 4 runs or more), and how many measured medians the interval "
               "holds\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  for (const auto& [sweep, judgements] : sweeps) {
    for (const ModelJudgement& j : judgements) {
      const std::string model = j.model + " v" + std::to_string(j.version);
      if (!j.not_fitted.empty()) {
        notes.push_back(sweep + ": " + j.model + " not fitted: " + j.not_fitted);
        continue;
      }
      for (const SchemeJudgement& s : j.schemes) {
        rows.push_back({sweep, model, s.architecture, std::to_string(s.configurations), Percent(s.median_abs),
                        Percent(s.p95_abs), Percent(s.max_abs),
                        s.split_half_median ? Percent(*s.split_half_median) : "",
                        s.coverage ? std::to_string(s.covered) + "/" + std::to_string(s.configurations) : "",
                        s.coverage ? Percent(*s.coverage) : "", s.median_half_width ? Percent(*s.median_half_width) : ""});
      }
      if (j.schemes.empty() || !j.schemes.front().coverage) {
        notes.push_back(sweep + ": " + j.model + " has no interval: too few calibration configurations (" +
                        std::to_string(j.calibration_configurations) + ") for " + Percent(level));
      } else if (j.scaled_by_regime) {
        notes.push_back(sweep + ": " + j.model + "'s interval is scaled per scheme (its left-out residuals differ "
                        "between schemes: Kruskal-Wallis p < " + Number(kRegimeScaleAlpha) + ")");
      }
      if (j.beyond_workers) {
        notes.push_back(sweep + ": " + j.model + "'s interval beyond " + std::to_string(j.beyond_workers->beyond_workers) +
                        " workers is at least " + ReachText(j.beyond_workers->log_half_width) + " " +
                        BeyondWorkersSource(*j.beyond_workers, "its"));
      } else if (!j.schemes.empty() && j.schemes.front().coverage) {
        notes.push_back(sweep + ": " + j.model + " has no interval of its own beyond its calibration's workers "
                        "(a fit on fewer workers cannot predict enough of the largest count): those predictions "
                        "take the others'");
      }
      for (const std::string& skipped : j.skipped) notes.push_back(sweep + ": " + j.model + " cannot predict " + skipped);
    }
  }
  PrintTable(std::cout,
             {"sweep", "model", "architecture", "val configs", "median", "p95", "max", "split half", "covered",
              "coverage", "half-width"},
             rows, {false, false, false, true, true, true, true, true, true, true, true});
  for (const std::string& note : notes) std::cout << "  " << note << "\n";
}

void JudgeCommand(const ModelOptions& o) {
  if (!(o.level > 0 && o.level < 1)) {
    throw ModelError("--level must be between 0 and 1 (e.g. 0.9), got " + Number(o.level));
  }
  std::vector<std::pair<std::string, std::vector<ModelJudgement>>> sweeps;
  nlohmann::json json_sweeps = nlohmann::json::array();
  for (const std::string& db : o.databases) {
    const std::unique_ptr<Store> store = OpenExistingReadOnly(db);
    const std::vector<ModelJudgement> judgements = Judge(LoadModelData(*store, {}), Chosen(o), o.level);
    nlohmann::json models = nlohmann::json::array();
    for (const ModelJudgement& j : judgements) models.push_back(JudgementJson(j));
    json_sweeps.push_back({{"sweep", SweepName(db)}, {"database", db}, {"models", models}});
    sweeps.emplace_back(SweepName(db), judgements);
  }
  if (o.json) {
    const nlohmann::json json = {
        {"level", o.level},
        {"split_half", "per validation configuration of 4 runs or more: |median(even-indexed repetitions) - "
                       "median(odd-indexed)| / (2 median(all)); the median over the scheme's configurations"},
        {"sweeps", json_sweeps}};
    std::cout << json.dump(2) << "\n";
    return;
  }
  PrintJudgements(sweeps, o.level);
}

}  // namespace

std::pair<const PerformanceModel*, ModelFitRecord> ChosenFit(const Store& store, const std::string& model,
                                                             std::optional<std::int64_t> fit_id) {
  ModelOptions o;
  if (!model.empty()) o.models = {model};
  o.fit_id = fit_id;
  return ChosenFits(store, o).front();
}

void AddModelCommands(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<ModelOptions>();
  CLI::App* model = app.add_subcommand("model", "performance models: fit on calibration runs, predict, validate");
  model->require_subcommand(1);
  auto add_choice = [&](CLI::App* command, const char* default_text) {
    // One name per --model, so that `--model corrected workers=4` leaves
    // the settings to predict's positionals.
    command->add_option("--model", o->models, std::string("paper2019, corrected, corrected+overlap, linear or counts "
                                                          "(repeatable; default: ") + default_text + ")")
        ->allow_extra_args(false);
  };
  const char* fitted = "every model with a fit this dmlbench can use; the others are named";
  CLI::App* fit = model->add_subcommand("fit", "fit the models on the calibration runs and store the fits");
  add_choice(fit, "all");
  fit->add_option("--experiment", o->experiments, "only the runs of this experiment (repeatable)")
      ->allow_extra_args(false);
  fit->add_option("--fix", o->fixes,
                  "NAME=VALUE or \"NAME SCOPE=VALUE\": hold a parameter at a value instead of fitting it, e.g. a "
                  "measured cost (repeatable; corrected, corrected+overlap and counts; stored with source "
                  "\"fixed\")")
      ->allow_extra_args(false);
  fit->callback([&global, o] { FitCommand(global, *o); });
  CLI::App* predict = model->add_subcommand(
      "predict", "predict any configuration from the stored fits, e.g. architecture=ring workers=16 bandwidth=10gbit");
  add_choice(predict, fitted);
  predict->add_option("SETTING", o->settings, "KEY=VALUE: architecture, workers, servers, batch_size, overlap, "
                                              "bucket_bytes, partition_bytes, pulls_in_turn, hidden, bandwidth, "
                                              "latency, cpu, max_iterations_per_epoch, train_samples");
  predict->add_option("--fit", o->fit_id, "predict with this stored fit (its id, as `model fit` prints it) "
                                           "instead of each model's latest");
  predict->callback([&global, o] { PredictCommand(global, *o); });
  CLI::App* validate = model->add_subcommand(
      "validate", "predict every run with the latest fits, store the predictions, and report the errors on "
                  "validation runs (calibration beside them)");
  add_choice(validate, fitted);
  validate->add_option("--experiment", o->experiments, "only the runs of this experiment (repeatable)")
      ->allow_extra_args(false);
  validate->add_flag("--points", o->points,
                     "also every configuration: measured median and its 95% interval, prediction, error, and the "
                     "model's CPU per iteration against the runs' (ms, model / measured)");
  validate->add_option("--fit", o->fit_id, "validate this stored fit (its id, as `model fit` prints it) instead "
                                            "of each model's latest, e.g. one fitted with --fix beside the free one");
  validate->callback([&global, o] { ValidateCommand(global, *o); });
  CLI::App* judge = model->add_subcommand(
      "judge", "judge the models on each sweep given: fit on its calibration runs, predict its validation runs, "
               "and print per scheme the error beside the sweep's split-half noise and the intervals' coverage "
               "(reads the databases only)");
  add_choice(judge, "all");
  judge->add_option("DB", o->databases, "sweep databases")->required()->check(CLI::ExistingFile);
  judge->add_option("--level", o->level, "level of the prediction intervals (default 0.9)");
  judge->add_flag("--json", o->json, "print the judgement as JSON");
  judge->callback([o] { JudgeCommand(*o); });
  AddModelRecommendCommand(model, global);
}

}  // namespace dmlbench
