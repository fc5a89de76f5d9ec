#include "orchestrator/store/store.h"

#include <map>

#include "orchestrator/store/epoch_validity.h"
#include "orchestrator/store/store_impl.h"

namespace dmlbench {

void Store::RecordRunStart(std::int64_t attempt_id, const RunStartRecord& r) {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement update(impl_->db, R"(
      UPDATE attempts SET mpi_library_version = ?, world_size = ?, parameters = ?, iterations_per_epoch = ?,
        train_samples = ?, test_samples = ?, trainer_dataset_sha256 = ?, threads = ?
      WHERE attempt_id = ?)");
    update.bind(1, r.mpi_library_version);
    update.bind(2, r.world_size);
    update.bind(3, r.parameters);
    update.bind(4, r.iterations_per_epoch);
    update.bind(5, r.train_samples);
    update.bind(6, r.test_samples);
    update.bind(7, r.dataset_sha256);
    update.bind(8, r.threads);
    update.bind(9, attempt_id);
    update.exec();
  });
}

void Store::AddEpoch(std::int64_t run_id, std::int64_t attempt_id, const EpochRecord& r) {
  return WithStoreErrors(path_, [&] {
    std::optional<SQLite::Transaction> transaction = impl_->OwnTransaction(/*immediate=*/false);
    SQLite::Statement& epoch = *impl_->insert_epoch;
    epoch.reset();
    epoch.bind(1, attempt_id);
    epoch.bind(2, r.epoch);
    epoch.bind(3, run_id);
    epoch.bind(4, r.iterations);
    epoch.bind(5, r.samples);
    epoch.bind(6, r.wall_s);
    epoch.bind(7, r.throughput_samples_per_s);
    BindOptional(epoch, 8, r.loss);
    BindOptional(epoch, 9, r.test_accuracy);
    BindOptional(epoch, 10, r.eval_s);
    BindOptional(epoch, 11, r.overlap_ratio);
    int column = 12;
    for (const PhaseStats* phase : {&r.forward, &r.backward, &r.exchange, &r.update, &r.exposed_comm, &r.comm}) {
      epoch.bind(column++, phase->max_s);
      epoch.bind(column++, phase->mean_s);
      epoch.bind(column++, phase->min_s);
    }
    epoch.exec();
    SQLite::Statement& rank = *impl_->insert_rank;
    for (const RankPhaseRecord& k : r.ranks) {
      rank.reset();
      rank.bind(1, attempt_id);
      rank.bind(2, r.epoch);
      rank.bind(3, k.rank);
      rank.bind(4, k.role);
      rank.bind(5, k.forward_s);
      rank.bind(6, k.backward_s);
      rank.bind(7, k.exchange_s);
      rank.bind(8, k.update_s);
      rank.bind(9, k.exposed_comm_s);
      rank.bind(10, k.comm_s);
      rank.bind(11, k.wait_s);
      rank.bind(12, k.bytes_sent);
      rank.bind(13, k.bytes_received);
      rank.bind(14, k.messages_sent);
      BindOptional(rank, 15, k.cpu_s);
      BindOptional(rank, 16, k.quota_periods);
      BindOptional(rank, 17, k.throttled_periods);
      BindOptional(rank, 18, k.throttled_s);
      rank.exec();
    }
    SQLite::Statement& iteration = *impl_->insert_iteration;
    for (std::size_t i = 0; i < r.iteration_wall_s.size(); ++i) {
      iteration.reset();
      iteration.bind(1, attempt_id);
      iteration.bind(2, r.epoch);
      iteration.bind(3, static_cast<std::int64_t>(i + 1));
      iteration.bind(4, r.iteration_wall_s[i]);
      iteration.exec();
    }
    if (transaction) transaction->commit();
  });
}

void Store::RecordRunEnd(std::int64_t attempt_id, const RunEndRecord& r) {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement update(impl_->db, R"(
      UPDATE attempts SET trainer_status = ?, trainer_error = ?, parameter_checksum = ?, total_wall_s = ?,
        peak_rss_bytes = ?
      WHERE attempt_id = ?)");
    update.bind(1, r.status);
    BindTextOrNull(update, 2, r.error);
    BindTextOrNull(update, 3, r.parameter_checksum);
    BindOptional(update, 4, r.total_wall_s);
    BindOptional(update, 5, r.peak_rss_bytes);
    update.bind(6, attempt_id);
    update.exec();
  });
}

std::optional<RunMeasures> Store::CompleteRunMeasures(std::int64_t run_id) const {
  return WithStoreErrors(path_, [&]() -> std::optional<RunMeasures> {
    SQLite::Statement select(impl_->db, R"(
      SELECT (SELECT count(*) FROM complete_epochs WHERE run_id = ?1), avg(wall_s), avg(throughput_samples_per_s),
             (SELECT test_accuracy FROM complete_epochs WHERE run_id = ?1 ORDER BY epoch DESC LIMIT 1)
      FROM steady_epochs WHERE run_id = ?1)");
    select.bind(1, run_id);
    select.executeStep();
    if (select.getColumn(0).getInt() == 0) return std::nullopt;
    RunMeasures measures;
    measures.epochs = select.getColumn(0).getInt();
    measures.epoch_s_mean = select.getColumn(1).getDouble();
    measures.throughput_mean = select.getColumn(2).getDouble();
    if (!select.getColumn(3).isNull()) measures.final_test_accuracy = select.getColumn(3).getDouble();
    return measures;
  });
}

std::vector<SteadyEpoch> Store::SteadyEpochs(std::map<std::int64_t, std::string>* left_out) const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT run_id, epoch, wall_s, warmup_included, iterations, samples, run_key,
             forward_mean_s, backward_mean_s, update_mean_s, exchange_mean_s, exposed_comm_mean_s
      FROM steady_epochs ORDER BY run_id, epoch)");
    std::vector<SteadyEpoch> epochs;
    struct Faults {
      std::string run_key, why;
      int count = 0;
    };
    std::map<std::int64_t, Faults> faults;
    while (select.executeStep()) {
      SteadyEpoch epoch;
      epoch.run_id = select.getColumn(0).getInt64();
      epoch.epoch = select.getColumn(1).getInt();
      epoch.wall_s = select.getColumn(2).getDouble();
      epoch.warmup_included = select.getColumn(3).getInt() != 0;
      epoch.iterations = select.getColumn(4).getInt64();
      epoch.forward_mean_s = select.getColumn(7).getDouble();
      epoch.backward_mean_s = select.getColumn(8).getDouble();
      epoch.update_mean_s = select.getColumn(9).getDouble();
      epoch.exchange_mean_s = select.getColumn(10).getDouble();
      epoch.exposed_comm_mean_s = select.getColumn(11).getDouble();
      if (const auto why = EpochFault(epoch.wall_s, epoch.iterations, select.getColumn(5).getInt64())) {
        Faults& run = faults[epoch.run_id];
        if (run.count++ == 0) run = {select.getColumn(6).getString(), *why, 1};
        continue;
      }
      epochs.push_back(epoch);
    }
    if (left_out) {
      for (const auto& [run_id, run] : faults) (*left_out)[run_id] = LeftOutText(run.count, run.run_key, run.why);
    }
    return epochs;
  });
}

std::vector<BusiestCpu> Store::BusiestCpuPerIteration() const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT s.run_id, s.epoch, p.role, max(p.cpu_s) / max(1, s.iterations)
      FROM steady_epochs s JOIN rank_phases p ON p.attempt_id = s.attempt_id AND p.epoch = s.epoch
      WHERE p.cpu_s IS NOT NULL
      GROUP BY s.run_id, s.epoch, p.role ORDER BY s.run_id, s.epoch)");
    std::vector<BusiestCpu> rows;
    while (select.executeStep()) {
      rows.push_back({select.getColumn(0).getInt64(), select.getColumn(1).getInt(), select.getColumn(2).getString(),
                      select.getColumn(3).getDouble()});
    }
    return rows;
  });
}

}  // namespace dmlbench
