#include "orchestrator/store/store.h"

#include "orchestrator/store/store_impl.h"

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
    ModelFitRecord fit;
    fit.fit_id = select.getColumn(0).getInt64();
    fit.model = select.getColumn(7).getString();
    fit.model_version = select.getColumn(1).getInt();
    fit.created_unix_s = select.getColumn(2).getDouble();
    fit.code_commit = select.getColumn(3).getString();
    fit.scope = select.getColumn(4).getString();
    fit.points = select.getColumn(5).getInt();
    if (!select.getColumn(6).isNull()) fit.residual_rms_s = select.getColumn(6).getDouble();
    SQLite::Statement parameters(impl_->db, R"(
      SELECT name, value, ci_low, ci_high, unit, source, scope FROM model_parameters WHERE fit_id = ?
      ORDER BY rowid)");
    parameters.bind(1, fit.fit_id);
    while (parameters.executeStep()) {
      ModelParameterRow p;
      p.name = parameters.getColumn(0).getString();
      p.value = parameters.getColumn(1).getDouble();
      if (!parameters.getColumn(2).isNull()) p.ci_low = parameters.getColumn(2).getDouble();
      if (!parameters.getColumn(3).isNull()) p.ci_high = parameters.getColumn(3).getDouble();
      p.unit = parameters.getColumn(4).getString();
      p.source = parameters.getColumn(5).getString();
      p.scope = parameters.getColumn(6).getString();
      fit.parameters.push_back(std::move(p));
    }
    SQLite::Statement runs(impl_->db, R"(
      SELECT run_id, measured_iteration_s, fitted_iteration_s FROM model_fit_runs WHERE fit_id = ? ORDER BY run_id)");
    runs.bind(1, fit.fit_id);
    while (runs.executeStep()) {
      fit.runs.push_back({runs.getColumn(0).getInt64(), runs.getColumn(1).getDouble(), runs.getColumn(2).getDouble()});
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
      fit.intervals.push_back({intervals.getColumn(0).getString(), intervals.getColumn(1).getDouble(),
                               intervals.getColumn(2).getDouble(), intervals.getColumn(3).getInt(),
                               intervals.getColumn(4).getInt()});
    }
    return fit;
  });
}

}  // namespace dmlbench
