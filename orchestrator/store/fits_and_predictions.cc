#include "orchestrator/store/store.h"

#include "orchestrator/store/store_impl.h"

#include <limits>

#include "orchestrator/store/checked_text.h"

namespace dmlbench {

std::int64_t Store::AddModelFit(const ModelFitRecord& fit) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO model_fits (model, model_version, created_unix_s, code_commit, scope, points, residual_rms_s)
      VALUES (?, ?, ?, ?, ?, ?, ?))");
    insert.bind(1, fit.model);
    insert.bind(2, fit.model_version);
    insert.bind(3, fit.created_unix_s);
    insert.bind(4, fit.code_commit);
    insert.bind(5, fit.scope);
    insert.bind(6, fit.points);
    BindOptional(insert, 7, fit.residual_rms_s);
    insert.exec();
    const std::int64_t fit_id = impl_->db.getLastInsertRowid();
    SQLite::Statement parameter(impl_->db, R"(
      INSERT INTO model_parameters (fit_id, name, value, ci_low, ci_high, unit, source, scope)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?))");
    for (const ModelParameterRow& p : fit.parameters) {
      parameter.bind(1, fit_id);
      parameter.bind(2, p.name);
      parameter.bind(3, p.value);
      BindOptional(parameter, 4, p.ci_low);
      BindOptional(parameter, 5, p.ci_high);
      parameter.bind(6, p.unit);
      parameter.bind(7, p.source);
      parameter.bind(8, p.scope);
      parameter.exec();
      parameter.reset();
    }
    SQLite::Statement run(impl_->db, R"(
      INSERT INTO model_fit_runs (fit_id, run_id, measured_iteration_s, fitted_iteration_s) VALUES (?, ?, ?, ?))");
    for (const ModelFitRunRow& r : fit.runs) {
      run.bind(1, fit_id);
      run.bind(2, r.run_id);
      run.bind(3, r.measured_iteration_s);
      run.bind(4, r.fitted_iteration_s);
      run.exec();
      run.reset();
    }
    SQLite::Statement probe(impl_->db, "INSERT INTO model_fit_probes (fit_id, link_probe_id) VALUES (?, ?)");
    for (std::int64_t id : fit.probe_ids) {
      probe.bind(1, fit_id);
      probe.bind(2, id);
      probe.exec();
      probe.reset();
    }
    SQLite::Statement interval(impl_->db, R"(
      INSERT INTO model_intervals (fit_id, scope, beyond_workers, level, log_half_width, configurations)
      VALUES (?, ?, ?, ?, ?, ?))");
    for (const ModelIntervalRow& row : fit.intervals) {
      interval.bind(1, fit_id);
      interval.bind(2, row.scope);
      interval.bind(3, row.beyond_workers);
      interval.bind(4, row.level);
      interval.bind(5, row.log_half_width);
      interval.bind(6, row.configurations);
      interval.exec();
      interval.reset();
    }
    transaction.commit();
    return fit_id;
  });
}

void Store::AddPredictions(const std::vector<PredictionRow>& rows) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(impl_->db, R"(
      INSERT OR REPLACE INTO predictions (fit_id, run_id, split, iterations_per_epoch, predicted_iteration_s,
        predicted_epoch_s, compute_s, update_s, comm_s, hidden_comm_s, measured_epoch_s, relative_error,
        predicted_worker_cpu_s, predicted_server_cpu_s, limited_by, measured_worker_cpu_s, measured_server_cpu_s,
        interval_level, predicted_epoch_low_s, predicted_epoch_high_s)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
    for (const PredictionRow& r : rows) {
      insert.bind(1, r.fit_id);
      insert.bind(2, r.run_id);
      insert.bind(3, r.split);
      insert.bind(4, r.iterations_per_epoch);
      insert.bind(5, r.predicted_iteration_s);
      insert.bind(6, r.predicted_epoch_s);
      insert.bind(7, r.compute_s);
      insert.bind(8, r.update_s);
      insert.bind(9, r.comm_s);
      insert.bind(10, r.hidden_comm_s);
      insert.bind(11, r.measured_epoch_s);
      insert.bind(12, r.relative_error);
      BindOptional(insert, 13, r.predicted_worker_cpu_s);
      BindOptional(insert, 14, r.predicted_server_cpu_s);
      BindTextOrNull(insert, 15, r.limited_by);
      BindOptional(insert, 16, r.measured_worker_cpu_s);
      BindOptional(insert, 17, r.measured_server_cpu_s);
      BindOptional(insert, 18, r.interval_level);
      BindOptional(insert, 19, r.predicted_epoch_low_s);
      BindOptional(insert, 20, r.predicted_epoch_high_s);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  });
}

std::optional<ModelFitRecord> Store::LatestModelFit(const std::string& model) const {
  const std::optional<std::int64_t> latest = WithStoreErrors(path_, [&]() -> std::optional<std::int64_t> {
    SQLite::Statement select(impl_->db, "SELECT max(fit_id) FROM model_fits WHERE model = ?");
    select.bind(1, model);
    if (!select.executeStep() || select.getColumn(0).isNull()) return std::nullopt;
    return select.getColumn(0).getInt64();
  });
  if (!latest) return std::nullopt;
  return ModelFitById(*latest);
}

std::optional<ModelFitRecord> Store::ModelFitById(std::int64_t fit_id) const {
  return WithStoreErrors(path_, [&]() -> std::optional<ModelFitRecord> {
    SQLite::Statement select(impl_->db, R"(
      SELECT fit_id, model_version, created_unix_s, code_commit, scope, points, residual_rms_s, model
      FROM model_fits WHERE fit_id = ?)");
    select.bind(1, fit_id);
    if (!select.executeStep()) return std::nullopt;
    // Every number of a fit is checked as it is read (checked_text.h): a
    // value SQLite holds as text, or an infinite one, is refused here, so
    // no command predicts from it. Whether finite values make a time is
    // the model's to say (PerformanceModel::Predict).
    const std::string row = "fit " + std::to_string(fit_id);
    const auto place = [&](std::string_view column) { return ColumnPlace(path_, row, column); };
    constexpr int kIntMax = std::numeric_limits<int>::max();
    ModelFitRecord fit;
    fit.fit_id = select.getColumn(0).getInt64();
    fit.model = select.getColumn(7).getString();
    fit.model_version =
        static_cast<int>(CheckedInteger(place("model_fits.model_version"), CellOf(select.getColumn(1)), 1, kIntMax));
    fit.created_unix_s = CheckedReal(place("model_fits.created_unix_s"), CellOf(select.getColumn(2)), 0);
    fit.code_commit = select.getColumn(3).getString();
    fit.scope = select.getColumn(4).getString();
    fit.points = static_cast<int>(CheckedInteger(place("model_fits.points"), CellOf(select.getColumn(5)), 0, kIntMax));
    if (!select.getColumn(6).isNull()) {
      fit.residual_rms_s = CheckedReal(place("model_fits.residual_rms_s"), CellOf(select.getColumn(6)), 0);
    }
    SQLite::Statement parameters(impl_->db, R"(
      SELECT name, value, ci_low, ci_high, unit, source, scope FROM model_parameters WHERE fit_id = ?
      ORDER BY rowid)");
    parameters.bind(1, fit.fit_id);
    while (parameters.executeStep()) {
      ModelParameterRow p;
      p.name = parameters.getColumn(0).getString();
      p.scope = parameters.getColumn(6).getString();
      const std::string of = " of " + p.name + (p.scope.empty() ? "" : " " + p.scope);
      // A value may be negative (a line's slope), never infinite.
      p.value = CheckedReal(place("model_parameters.value") + of, CellOf(parameters.getColumn(1)), -kNoBound);
      if (!parameters.getColumn(2).isNull()) {
        p.ci_low = CheckedReal(place("model_parameters.ci_low") + of, CellOf(parameters.getColumn(2)), -kNoBound);
      }
      if (!parameters.getColumn(3).isNull()) {
        p.ci_high = CheckedReal(place("model_parameters.ci_high") + of, CellOf(parameters.getColumn(3)), -kNoBound);
      }
      p.unit = parameters.getColumn(4).getString();
      p.source = CheckedWord(place("model_parameters.source") + of, CellOf(parameters.getColumn(5)),
                             {"fitted", "measured", "probe", "run_start", "fixed"});
      fit.parameters.push_back(std::move(p));
    }
    SQLite::Statement runs(impl_->db, R"(
      SELECT run_id, measured_iteration_s, fitted_iteration_s FROM model_fit_runs WHERE fit_id = ? ORDER BY run_id)");
    runs.bind(1, fit.fit_id);
    while (runs.executeStep()) {
      const std::string of = " of run " + std::to_string(runs.getColumn(0).getInt64());
      fit.runs.push_back({runs.getColumn(0).getInt64(),
                          CheckedReal(place("model_fit_runs.measured_iteration_s") + of, CellOf(runs.getColumn(1)), 0),
                          CheckedReal(place("model_fit_runs.fitted_iteration_s") + of, CellOf(runs.getColumn(2)),
                                      -kNoBound)});
    }
    SQLite::Statement probes(impl_->db, "SELECT link_probe_id FROM model_fit_probes WHERE fit_id = ? ORDER BY 1");
    probes.bind(1, fit.fit_id);
    while (probes.executeStep()) fit.probe_ids.push_back(probes.getColumn(0).getInt64());
    if (schema_version() < kIntervalsVersion) return fit;  // read-only and older: no interval
    const std::string beyond_workers = schema_version() < kExtrapolationIntervalsVersion ? "0" : "beyond_workers";
    SQLite::Statement intervals(impl_->db, "SELECT scope, level, log_half_width, configurations, " +
                                               beyond_workers + " FROM model_intervals WHERE fit_id = ? ORDER BY 5, scope");
    intervals.bind(1, fit.fit_id);
    while (intervals.executeStep()) {
      const std::string scope = intervals.getColumn(0).getString();
      const std::string of = scope.empty() ? "" : " of " + scope;
      ModelIntervalRow interval;
      interval.scope = scope;
      interval.level = CheckedPositiveReal(place("model_intervals.level") + of, CellOf(intervals.getColumn(1)), 1);
      interval.log_half_width =
          CheckedReal(place("model_intervals.log_half_width") + of, CellOf(intervals.getColumn(2)), 0);
      interval.configurations = static_cast<int>(
          CheckedInteger(place("model_intervals.configurations") + of, CellOf(intervals.getColumn(3)), 1, kIntMax));
      interval.beyond_workers = static_cast<int>(
          CheckedInteger(place("model_intervals.beyond_workers") + of, CellOf(intervals.getColumn(4)), 0, kIntMax));
      fit.intervals.push_back(std::move(interval));
    }
    return fit;
  });
}

}  // namespace dmlbench
