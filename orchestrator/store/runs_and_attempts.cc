#include "orchestrator/store/store.h"

#include "orchestrator/core/toml_reader.h"
#include "orchestrator/store/checked_text.h"
#include "orchestrator/store/gzip.h"
#include "orchestrator/store/store_impl.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace dmlbench {
namespace {

// Links an attempt to hosts (attempt_hosts), each once.
void LinkAttemptHosts(SQLite::Database& db, std::int64_t attempt_id, const std::vector<std::int64_t>& host_ids) {
  SQLite::Statement link(db, "INSERT OR IGNORE INTO attempt_hosts (attempt_id, host_id) VALUES (?, ?)");
  for (std::int64_t host_id : host_ids) {
    link.bind(1, attempt_id);
    link.bind(2, host_id);
    link.exec();
    link.reset();
  }
}


std::string JoinStrings(const std::vector<std::string>& values);

// The Slurm job of an attempt into its slurm_* columns (schema version 19).
void SetAttemptSlurm(SQLite::Database& db, std::int64_t attempt_id, const SlurmJobFacts& slurm) {
  SQLite::Statement update(db, R"(
    UPDATE attempts SET slurm_job_id = :job, slurm_step_id = :step, slurm_nodes = :nodes, slurm_state = :state,
      slurm_exit = :exit WHERE attempt_id = :attempt)");
  update.bind(":job", slurm.job_id);
  BindTextOrNull(update, update.getIndex(":step"), slurm.step_id);
  update.bind(":nodes", JoinStrings(slurm.nodes));
  update.bind(":state", slurm.state);
  update.bind(":exit", slurm.exit);
  update.bind(":attempt", attempt_id);
  update.exec();
}

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

std::string JoinStrings(const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += values[i];
  }
  return out;
}

// The text of a state as the status columns hold it, quoted for SQL.
template <typename Enum>
std::string Quoted(Enum state) {
  return "'" + std::string(Text(state)) + "'";
}

// Binds the text of a state (core/enums.h) as the status columns hold it.
template <typename Enum>
void BindState(SQLite::Statement& statement, int index, Enum state) {
  statement.bind(index, std::string(Text(state)));
}

// Schema version from which experiment_runs holds which experiments planned
// each run (migration 7); before it a run belonged to runs.experiment_id.
constexpr int kExperimentRunsVersion = 7;
// Schema version from which runs.system says where a run is measured (migration 20).
constexpr int kRunSystemVersion = 20;

// The (experiment_id, run_id) pairs of experiments and the runs they
// planned, as a table expression for a FROM clause of `db`'s schema (a
// read-only store is never migrated).
std::string Memberships(SQLite::Database& db) {
  return db.execAndGet("PRAGMA user_version").getInt() >= kExperimentRunsVersion
             ? "experiment_runs"
             : "(SELECT experiment_id, run_id FROM runs)";
}

// Appends `name` to `names` unless it is there (two experiment texts may
// share a name).
void AddOnce(std::vector<std::string>& names, std::string name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
}

// The columns of runs r that ReadRun reads, in its order; `failures`
// counts the attempts that failed or timed out, except those that lost a
// host (not the run's fault: they do not use up its attempts).
std::string RunColumns(const Store& store) {
  const std::string failed = Quoted(AttemptState::kFailed) + ", " + Quoted(AttemptState::kTimedOut);
  return R"(r.run_id, r.run_key, r.architecture, r.workers, r.servers, r.batch_size, r.epochs, r.hidden,
    r.learning_rate, r.overlap, r.bucket_bytes, r.max_iterations_per_epoch, r.dataset, r.seed, r.repetition,
    r.network, r.network_bandwidth_bits_per_s, r.network_latency_s, r.split, r.status, r.attempts,
    r.trainer_sha256, )" + store.RunsColumnOrZero("partition_bytes") + ", " +
         store.RunsColumnOrZero("pulls_in_turn") + R"(, coalesce(r.failure_reason, ''),
    (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id AND a.status IN ()" + failed + R"() AND NOT a.host_failure),
    CASE WHEN json_valid(r.canonical_params)
         THEN coalesce(json_extract(r.canonical_params, '$.warmup_iterations'), 0) END,
    CASE WHEN json_valid(r.canonical_params) THEN coalesce(json_extract(r.canonical_params, '$.evaluate'), 1) END,
    CASE WHEN json_valid(r.canonical_params) AND json_type(r.canonical_params) = 'object' THEN NULL
         ELSE r.canonical_params END, )" +
         (store.schema_version() >= kRunSystemVersion ? "r.system" : "NULL");
}

// How many columns RunColumns() selects; a statement's own columns follow.
constexpr int kRunColumnCount = 30;

// A run from the current row of a statement of database `db` that selects
// RunColumns(); without its tags and experiments. Every column is checked
// (checked_text.h): paths, models and choices are built from them.
RunRecord ReadRun(SQLite::Statement& select, const std::string& db) {
  RunRecord run;
  run.run_id = select.getColumn(0).getInt64();
  const std::string row = "run " + std::to_string(run.run_id);
  const auto place = [&](std::string_view column) { return ColumnPlace(db, row, "runs." + std::string(column)); };
  const auto integer = [&](int index, std::string_view column, std::int64_t low, std::int64_t high) {
    return CheckedInteger(place(column), CellOf(select.getColumn(index)), low, high);
  };
  constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::max();
  constexpr int kIntMax = std::numeric_limits<int>::max();
  run.run_key = CheckedRunKey(db, run.run_id, select.getColumn(1).getString());
  RunParams& p = run.params;
  p.architecture = CheckedState<Architecture>(place("architecture"), CellOf(select.getColumn(2)));
  p.workers = static_cast<int>(integer(3, "workers", 1, kMaxWorkers));
  p.servers = static_cast<int>(integer(4, "servers", 0, kMaxServers));
  p.batch_size = static_cast<int>(integer(5, "batch_size", 1, kMaxBatchSize));
  p.epochs = static_cast<int>(integer(6, "epochs", 1, kMaxEpochs));
  p.hidden = CheckedLayerWidths(db, run.run_id, select.getColumn(7).getString());
  p.learning_rate = CheckedPositiveReal(place("learning_rate"), CellOf(select.getColumn(8)));
  p.overlap = CheckedFlag(place("overlap"), CellOf(select.getColumn(9)));
  p.bucket_bytes = integer(10, "bucket_bytes", 1, kAny);
  p.max_iterations_per_epoch = integer(11, "max_iterations_per_epoch", 0, kAny);
  p.dataset = CheckedWord(place("dataset"), CellOf(select.getColumn(12)), {"fashion-mnist", "synthetic"});
  p.seed = static_cast<std::uint64_t>(integer(13, "seed", std::numeric_limits<std::int64_t>::min(), kAny));
  p.repetition = static_cast<int>(integer(14, "repetition", 0, kMaxRepetitions));
  p.network.name = select.getColumn(15).getString();
  p.network.bandwidth_bits_per_s = CheckedReal(place("network_bandwidth_bits_per_s"), CellOf(select.getColumn(16)), 0);
  p.network.latency_s = CheckedReal(place("network_latency_s"), CellOf(select.getColumn(17)), 0);
  run.split = CheckedWord(place("split"), CellOf(select.getColumn(18)), {"calibration", "validation"});
  run.status = CheckedState<RunState>(place("status"), CellOf(select.getColumn(19)));
  run.attempts = static_cast<int>(integer(20, "attempts", 0, kIntMax));
  run.trainer_sha256 = select.getColumn(21).getString();
  p.partition_bytes = integer(22, "partition_bytes", 0, kAny);
  p.pulls_in_turn = CheckedFlag(place("pulls_in_turn"), CellOf(select.getColumn(23)));
  run.failure_reason = select.getColumn(24).getString();
  run.failures = select.getColumn(25).getInt();
  // Kept in canonical_params alone, named there only when not the default.
  if (!select.getColumn(28).isNull()) {
    throw StoreError(place("canonical_params") + " is not a JSON object, got " +
                         CellQuoted(CellOf(select.getColumn(28))),
                     -1);
  }
  p.warmup_iterations = CheckedInteger(place("canonical_params") + " warmup_iterations", CellOf(select.getColumn(26)),
                                       0, kAny);
  p.evaluate = CheckedFlag(place("canonical_params") + " evaluate", CellOf(select.getColumn(27)));
  // NULL: stored before systems were recorded.
  if (!select.getColumn(29).isNull()) {
    run.system = select.getColumn(29).getString();
    if (!IsValidSystemName(run.system)) {
      throw StoreError(place("system") + " is not a system name (1 to 128 printable characters), got " +
                           CellQuoted(CellOf(select.getColumn(29))),
                       -1);
    }
  }
  return run;
}

// The run's status once an attempt ended so.
RunState NextRunState(bool attempt_ok, RunDisposition disposition) {
  if (attempt_ok) return RunState::kComplete;
  switch (disposition) {
    case RunDisposition::kFailed:
      return RunState::kFailed;
    case RunDisposition::kInterrupted:
      return RunState::kInterrupted;
    case RunDisposition::kRetry:
      break;
  }
  return RunState::kRunning;
}

}  // namespace

// ---- experiments and runs ----------------------------------------------

std::int64_t Store::AddExperiment(const Experiment& experiment, double now_unix_s) {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO experiments (name, description, source_path, matrix_text, matrix_sha256, first_used_unix_s)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (matrix_sha256) DO NOTHING)");
    insert.bind(1, experiment.name);
    insert.bind(2, experiment.description);
    insert.bind(3, experiment.source_path);
    insert.bind(4, experiment.source_text);
    insert.bind(5, experiment.source_sha256);
    insert.bind(6, now_unix_s);
    insert.exec();
    SQLite::Statement select(impl_->db, "SELECT experiment_id FROM experiments WHERE matrix_sha256 = ?");
    select.bind(1, experiment.source_sha256);
    select.executeStep();
    return select.getColumn(0).getInt64();
  });
}

std::int64_t Store::AddExperimentRuns(const Experiment& experiment, const std::vector<NewRun>& runs,
                                      double now_unix_s, std::vector<std::int64_t>* run_ids) {
  return WithStoreErrors(path_, [&] {
    std::optional<SQLite::Transaction> transaction = impl_->OwnTransaction(/*immediate=*/true);
    const std::int64_t experiment_id = AddExperiment(experiment, now_unix_s);
    run_ids->clear();
    for (const NewRun& run : runs) run_ids->push_back(AddRun(experiment_id, *run.run, run.run_key, run.provenance));
    if (transaction) transaction->commit();
    return experiment_id;
  });
}

std::unordered_map<std::string, RunRecord> Store::FindRuns(const std::vector<std::string>& run_keys) const {
  return WithStoreErrors(path_, [&] {
    std::unordered_map<std::string, RunRecord> found;
    found.reserve(run_keys.size());
    SQLite::Statement select(impl_->db, "SELECT " + RunColumns(*this) + " FROM runs r WHERE r.run_key = ?");
    SQLite::Statement tags(impl_->db, "SELECT tag FROM run_tags WHERE run_id = ? ORDER BY tag");
    SQLite::Statement experiments(impl_->db, R"(
      SELECT e.name FROM )" + Memberships(impl_->db) + R"( m JOIN experiments e USING (experiment_id)
      WHERE m.run_id = ?1
      ORDER BY e.experiment_id != (SELECT experiment_id FROM runs WHERE run_id = ?1), e.experiment_id)");
    for (const std::string& key : run_keys) {
      select.bind(1, key);
      if (select.executeStep()) {
        RunRecord run = ReadRun(select, path_);
        tags.bind(1, run.run_id);
        while (tags.executeStep()) run.tags.push_back(tags.getColumn(0).getString());
        tags.reset();
        experiments.bind(1, run.run_id);
        while (experiments.executeStep()) AddOnce(run.experiments, experiments.getColumn(0).getString());
        experiments.reset();
        found.emplace(key, std::move(run));
      }
      select.reset();
    }
    return found;
  });
}

std::vector<RunRecord> Store::Runs() const {
  return WithStoreErrors(path_, [&] {
    std::map<std::int64_t, std::vector<std::string>> tags;
    SQLite::Statement select_tags(impl_->db, "SELECT run_id, tag FROM run_tags ORDER BY run_id, tag");
    while (select_tags.executeStep()) {
      tags[select_tags.getColumn(0).getInt64()].push_back(select_tags.getColumn(1).getString());
    }
    // The experiment that first planned each run, then the others that did.
    std::map<std::int64_t, std::vector<std::string>> experiments;
    SQLite::Statement select_experiments(impl_->db, R"(
      SELECT m.run_id, e.name FROM )" + Memberships(impl_->db) + R"( m JOIN experiments e USING (experiment_id)
      JOIN runs r USING (run_id)
      ORDER BY m.run_id, e.experiment_id != r.experiment_id, e.experiment_id)");
    while (select_experiments.executeStep()) {
      AddOnce(experiments[select_experiments.getColumn(0).getInt64()], select_experiments.getColumn(1).getString());
    }
    SQLite::Statement select(impl_->db, "SELECT " + RunColumns(*this) + " FROM runs r ORDER BY r.run_id");
    std::vector<RunRecord> runs;
    while (select.executeStep()) {
      RunRecord run = ReadRun(select, path_);
      if (auto it = tags.find(run.run_id); it != tags.end()) run.tags = std::move(it->second);
      if (auto it = experiments.find(run.run_id); it != experiments.end()) run.experiments = std::move(it->second);
      runs.push_back(std::move(run));
    }
    return runs;
  });
}

std::vector<CompleteRun> Store::CompleteRuns(const std::vector<std::string>& experiments) const {
  return WithStoreErrors(path_, [&] {
    std::string names;
    for (std::size_t i = 0; i < experiments.size(); ++i) names += i == 0 ? "?" : ", ?";
    // The columns after RunColumns, in their order.
    enum Extra { kExperiment = kRunColumnCount, kParameters, kIterationsPerEpoch, kTrainSamples, kAttemptId };
    const std::map<std::int64_t, std::vector<HostTags>> hosts = CompleteRunHostTags();
    SQLite::Statement select(impl_->db, "SELECT " + RunColumns(*this) + R"(, e.name, a.parameters,
             a.iterations_per_epoch, a.train_samples, a.attempt_id
      FROM runs r JOIN experiments e USING (experiment_id) JOIN attempts a ON a.attempt_id = r.complete_attempt_id
      WHERE r.status = 'complete')" + (names.empty() ? "" : " AND e.name IN (" + names + ")") +
                                            " ORDER BY r.run_id");
    for (std::size_t i = 0; i < experiments.size(); ++i) select.bind(static_cast<int>(i) + 1, experiments[i]);
    std::vector<CompleteRun> runs;
    while (select.executeStep()) {
      RunRecord record = ReadRun(select, path_);
      CompleteRun run;
      run.run_id = record.run_id;
      run.run_key = std::move(record.run_key);
      run.split = std::move(record.split);
      run.params = std::move(record.params);
      run.experiment = select.getColumn(kExperiment).getString();
      // What the trainer reported at run_start, which every model divides by.
      const std::string attempt = "attempt " + std::to_string(select.getColumn(kAttemptId).getInt64());
      constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::max();
      run.parameters = CheckedInteger(ColumnPlace(path_, attempt, "attempts.parameters"),
                                      CellOf(select.getColumn(kParameters)), 1, kAny);
      run.iterations_per_epoch = CheckedInteger(ColumnPlace(path_, attempt, "attempts.iterations_per_epoch"),
                                                CellOf(select.getColumn(kIterationsPerEpoch)), 1, kAny);
      run.train_samples = CheckedInteger(ColumnPlace(path_, attempt, "attempts.train_samples"),
                                         CellOf(select.getColumn(kTrainSamples)), 1, kAny);
      if (const auto it = hosts.find(run.run_id); it != hosts.end()) {
        for (const HostTags& host : it->second) run.cpu_cores = std::max(run.cpu_cores, host.cpu_cores);
      }
      runs.push_back(std::move(run));
    }
    return runs;
  });
}

void Store::TagRun(std::int64_t run_id, const std::vector<std::string>& tags, double now_unix_s) {
  WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(impl_->db,
                             "INSERT OR IGNORE INTO run_tags (run_id, tag, tagged_unix_s) VALUES (?, ?, ?)");
    for (const std::string& tag : tags) {
      insert.bind(1, run_id);
      insert.bind(2, tag);
      insert.bind(3, now_unix_s);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  });
}

int Store::TagRuns(const std::vector<std::int64_t>& run_ids, const std::string& tag, double now_unix_s) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(impl_->db,
                             "INSERT OR IGNORE INTO run_tags (run_id, tag, tagged_unix_s) VALUES (?, ?, ?)");
    int had_it = 0;
    for (std::int64_t run_id : run_ids) {
      insert.bind(1, run_id);
      insert.bind(2, tag);
      insert.bind(3, now_unix_s);
      if (insert.exec() == 0) ++had_it;
      insert.reset();
    }
    transaction.commit();
    return had_it;
  });
}

int Store::UntagRuns(const std::vector<std::int64_t>& run_ids, const std::string& tag) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement remove(impl_->db, "DELETE FROM run_tags WHERE run_id = ? AND tag = ?");
    int had_it = 0;
    for (std::int64_t run_id : run_ids) {
      remove.bind(1, run_id);
      remove.bind(2, tag);
      had_it += remove.exec();
      remove.reset();
    }
    transaction.commit();
    return had_it;
  });
}

std::int64_t Store::AddRun(std::int64_t experiment_id, const PlannedRun& run, const std::string& run_key,
                           const RunProvenance& provenance) {
  return WithStoreErrors(path_, [&] {
    const RunParams& p = run.params;
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO runs (run_key, experiment_id, architecture, workers, servers, ranks, batch_size, epochs,
        hidden, learning_rate, overlap, bucket_bytes, max_iterations_per_epoch, dataset, seed, repetition,
        network, network_bandwidth_bits_per_s, network_latency_s, canonical_params, split,
        trainer_sha256, dataset_sha256, git_commit, git_dirty, partition_bytes, pulls_in_turn, system)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (run_key) DO NOTHING)");
    insert.bind(1, run_key);
    insert.bind(2, experiment_id);
    insert.bind(3, std::string(Text(p.architecture)));
    insert.bind(4, p.workers);
    insert.bind(5, p.architecture == Architecture::kPs ? p.servers : 0);
    insert.bind(6, p.ranks());
    insert.bind(7, p.batch_size);
    insert.bind(8, p.epochs);
    insert.bind(9, JoinInts(p.hidden));
    insert.bind(10, p.learning_rate);
    insert.bind(11, p.overlap ? 1 : 0);
    insert.bind(12, p.bucket_bytes);
    insert.bind(13, p.max_iterations_per_epoch);
    insert.bind(14, p.dataset);
    insert.bind(15, static_cast<std::int64_t>(p.seed));
    insert.bind(16, p.repetition);
    insert.bind(17, p.network.name);
    insert.bind(18, p.network.bandwidth_bits_per_s);
    insert.bind(19, p.network.latency_s);
    insert.bind(20, CanonicalJson(p));
    insert.bind(21, run.split);
    insert.bind(22, provenance.trainer_sha256);
    insert.bind(23, provenance.dataset_sha256);
    BindOptional(insert, 24, provenance.git_commit);
    if (provenance.git_dirty) {
      insert.bind(25, *provenance.git_dirty ? 1 : 0);
    } else {
      insert.bind(25);
    }
    insert.bind(26, p.partition_bytes);
    insert.bind(27, p.pulls_in_turn ? 1 : 0);
    BindTextOrNull(insert, 28, provenance.system);
    insert.exec();
    SQLite::Statement select(impl_->db, "SELECT run_id FROM runs WHERE run_key = ?");
    select.bind(1, run_key);
    select.executeStep();
    const std::int64_t run_id = select.getColumn(0).getInt64();
    SQLite::Statement member(impl_->db, "INSERT OR IGNORE INTO experiment_runs (experiment_id, run_id) VALUES (?, ?)");
    member.bind(1, experiment_id);
    member.bind(2, run_id);
    member.exec();
    return run_id;
  });
}

RunContents Store::Contents(const std::vector<std::int64_t>& run_ids) const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT (SELECT count(*) FROM attempts WHERE run_id = ?1),
             (SELECT count(*) FROM epochs WHERE run_id = ?1),
             (SELECT count(*) FROM attempt_logs l JOIN attempts a USING (attempt_id) WHERE a.run_id = ?1),
             (SELECT count(*) FROM predictions WHERE run_id = ?1))");
    SQLite::Statement fits(impl_->db, "SELECT fit_id FROM model_fit_runs WHERE run_id = ?");
    RunContents contents;
    std::set<std::int64_t> fit_ids;
    for (std::int64_t run_id : run_ids) {
      select.bind(1, run_id);
      select.executeStep();
      contents.attempts += select.getColumn(0).getInt64();
      contents.epochs += select.getColumn(1).getInt64();
      contents.log_files += select.getColumn(2).getInt64();
      contents.predictions += select.getColumn(3).getInt64();
      select.reset();
      fits.bind(1, run_id);
      while (fits.executeStep()) fit_ids.insert(fits.getColumn(0).getInt64());
      fits.reset();
    }
    contents.fit_ids.assign(fit_ids.begin(), fit_ids.end());
    return contents;
  });
}

void Store::Forget(const std::vector<RunRecord>& runs, const std::string& filter, double now_unix_s) {
  const std::string logs = logs_dir();  // before anything is removed: it may refuse
  WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement used(impl_->db, "SELECT min(fit_id) FROM model_fit_runs WHERE run_id = ?");
    for (const RunRecord& run : runs) {
      used.bind(1, run.run_id);
      used.executeStep();
      if (!used.getColumn(0).isNull()) {
        throw StoreError(path_ + ": run " + run.run_key.substr(0, 12) + " is not forgotten: model fit " +
                             std::to_string(used.getColumn(0).getInt64()) + " used it",
                         -1);
      }
      used.reset();
    }
    // A complete run and its completing attempt refer to each other: the
    // references are checked at commit, when both are gone.
    impl_->db.exec("PRAGMA defer_foreign_keys = ON");
    SQLite::Statement record(impl_->db, R"(
      INSERT INTO forgotten_runs (run_key, experiment, architecture, servers, workers, batch_size, repetition,
        network, canonical_params, split, status, attempts, tags, trainer_sha256, filter, forgotten_unix_s)
      SELECT run_key, experiment, architecture, servers, workers, batch_size, repetition, network,
             (SELECT canonical_params FROM runs WHERE run_id = ?1), split, status, attempts, tags,
             trainer_sha256, ?2, ?3
      FROM run_overview WHERE run_id = ?1)");
    std::vector<SQLite::Statement> removals;
    for (const char* sql : {"DELETE FROM predictions WHERE run_id = ?",
                            "DELETE FROM epochs WHERE run_id = ?",  // and their rank_phases and iterations
                            "DELETE FROM attempts WHERE run_id = ?",  // and their hosts, logs and phases
                            "DELETE FROM run_tags WHERE run_id = ?", "DELETE FROM runs WHERE run_id = ?"}) {
      removals.emplace_back(impl_->db, sql);
    }
    for (const RunRecord& run : runs) {
      record.bind(1, run.run_id);
      record.bind(2, filter);
      record.bind(3, now_unix_s);
      if (record.exec() != 1) {
        throw StoreError(path_ + ": run " + run.run_key.substr(0, 12) + " does not exist", -1);
      }
      record.reset();
      for (SQLite::Statement& removal : removals) {
        removal.bind(1, run.run_id);
        removal.exec();
        removal.reset();
      }
    }
    transaction.commit();
  });
  for (const RunRecord& run : runs) {
    std::error_code ignored;
    std::filesystem::remove_all(PathInside(path_, logs, CheckedRunKey(path_, run.run_id, run.run_key),
                                           "the logs of run " + std::to_string(run.run_id)),
                                ignored);
  }
}

// ---- attempts -----------------------------------------------------------

int Store::RecoverInterrupted(double now_unix_s) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement attempts(impl_->db, R"(
      UPDATE attempts SET status = ?2, end_unix_s = ?1, reason = 'the orchestrator stopped during this attempt'
      WHERE status = ?3)");
    attempts.bind(1, now_unix_s);
    BindState(attempts, 2, AttemptState::kInterrupted);
    BindState(attempts, 3, AttemptState::kRunning);
    attempts.exec();
    SQLite::Statement runs(impl_->db, R"(
      UPDATE runs SET status = ?2, end_unix_s = ?1, failure_reason = 'the orchestrator stopped during this run'
      WHERE status = ?3)");
    runs.bind(1, now_unix_s);
    BindState(runs, 2, RunState::kInterrupted);
    BindState(runs, 3, RunState::kRunning);
    const int count = runs.exec();
    transaction.commit();
    return count;
  });
}

std::int64_t Store::BeginAttempt(std::int64_t run_id, double now_unix_s, std::optional<SweepOrder> order) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement bump(impl_->db, R"(
      UPDATE runs SET status = ?3, attempts = attempts + 1, start_unix_s = ?1, end_unix_s = NULL
      WHERE run_id = ?2 AND status <> ?4 RETURNING attempts)");
    bump.bind(1, now_unix_s);
    bump.bind(2, run_id);
    BindState(bump, 3, RunState::kRunning);
    BindState(bump, 4, RunState::kComplete);
    if (!bump.executeStep()) {
      throw StoreError(path_ + ": run " + std::to_string(run_id) + " is complete or does not exist", -1);
    }
    const int number = bump.getColumn(0).getInt();
    bump.reset();
    SQLite::Statement drop(impl_->db, "DELETE FROM epochs WHERE run_id = ?");
    drop.bind(1, run_id);
    drop.exec();
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO attempts (run_id, number, status, start_unix_s, sweep_seed, sweep_position)
      VALUES (?, ?, ?, ?, ?, ?))");
    insert.bind(1, run_id);
    insert.bind(2, number);
    BindState(insert, 3, AttemptState::kRunning);
    insert.bind(4, now_unix_s);
    if (order) {
      insert.bind(5, static_cast<std::int64_t>(order->seed));
      insert.bind(6, order->position);
    } else {
      insert.bind(5);
      insert.bind(6);
    }
    insert.exec();
    const std::int64_t attempt_id = impl_->db.getLastInsertRowid();
    transaction.commit();
    return attempt_id;
  });
}

void Store::FinishAttempt(std::int64_t run_id, std::int64_t attempt_id, const AttemptOutcome& outcome,
                          RunDisposition disposition, const std::vector<std::int64_t>& host_ids) {
  return WithStoreErrors(path_, [&] {
    const bool ok = outcome.status == AttemptState::kOk;
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement attempt(impl_->db, R"(
      UPDATE attempts SET status = ?, end_unix_s = ?, exit_code = ?, reason = ?, stderr_tail = ?,
        command_line = ?, hosts = ?, host_failure = ?, note = ?
      WHERE attempt_id = ? AND run_id = ?)");
    BindState(attempt, 1, outcome.status);
    attempt.bind(2, outcome.end_unix_s);
    BindOptional(attempt, 3, outcome.exit_code);
    BindTextOrNull(attempt, 4, outcome.reason);
    if (ok) {
      attempt.bind(5);
    } else {
      attempt.bind(5, outcome.stderr_tail);
    }
    attempt.bind(6, outcome.command_line);
    attempt.bind(7, JoinStrings(outcome.hosts));
    attempt.bind(8, outcome.host_failure ? 1 : 0);
    BindTextOrNull(attempt, 9, outcome.note);
    attempt.bind(10, attempt_id);
    attempt.bind(11, run_id);
    if (attempt.exec() != 1) {
      throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) + " of run " + std::to_string(run_id) +
                           " does not exist",
                       -1);
    }
    LinkAttemptHosts(impl_->db, attempt_id, host_ids);
    if (outcome.slurm) SetAttemptSlurm(impl_->db, attempt_id, *outcome.slurm);
    if (ok) {
      SQLite::Statement check(impl_->db, R"(
        SELECT 1 FROM attempts WHERE attempt_id = ? AND trainer_status = 'ok' AND parameter_checksum IS NOT NULL)");
      check.bind(1, attempt_id);
      if (!check.executeStep()) {
        throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) +
                             " cannot complete its run: no run_end with status ok was stored",
                         -1);
      }
    }
    // The run takes the attempt's facts; the completing attempt's also its checksum.
    SQLite::Statement run(impl_->db, R"(
      UPDATE runs SET status = ?1,
        complete_attempt_id = CASE WHEN ?4 THEN a.attempt_id END,
        mpi_library_version = a.mpi_library_version, command_line = a.command_line,
        start_unix_s = a.start_unix_s, end_unix_s = a.end_unix_s, exit_code = a.exit_code,
        failure_reason = a.reason, stderr_tail = a.stderr_tail,
        parameter_checksum = CASE WHEN ?4 THEN a.parameter_checksum END
      FROM (SELECT * FROM attempts WHERE attempt_id = ?2) AS a
      WHERE runs.run_id = ?3)");
    BindState(run, 1, NextRunState(ok, disposition));
    run.bind(2, attempt_id);
    run.bind(3, run_id);
    run.bind(4, ok ? 1 : 0);
    run.exec();
    transaction.commit();
  });
}

void Store::AddAttemptJob(std::int64_t attempt_id, std::optional<int> exit_code, const std::string& command_line,
                          const std::vector<std::string>& hosts, const std::vector<std::int64_t>& host_ids,
                          const std::optional<SlurmJobFacts>& slurm) {
  WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement update(impl_->db,
                             "UPDATE attempts SET exit_code = ?, command_line = ?, hosts = ? WHERE attempt_id = ?");
    BindOptional(update, 1, exit_code);
    update.bind(2, command_line);
    update.bind(3, JoinStrings(hosts));
    update.bind(4, attempt_id);
    if (update.exec() != 1) throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) + " does not exist", -1);
    LinkAttemptHosts(impl_->db, attempt_id, host_ids);
    if (slurm) SetAttemptSlurm(impl_->db, attempt_id, *slurm);
    transaction.commit();
  });
}

std::vector<AttemptRecord> Store::Attempts(std::int64_t run_id) const {
  return WithStoreErrors(path_, [&] {
    const std::string note = schema_version() >= kAttemptNotesVersion ? "coalesce(note, '')" : "''";
    SQLite::Statement select(impl_->db, R"(
      SELECT attempt_id, number, status, coalesce(reason, ''), coalesce(log_dir, ''), )" + note + R"(
      FROM attempts WHERE run_id = ? ORDER BY number)");
    select.bind(1, run_id);
    std::vector<AttemptRecord> attempts;
    while (select.executeStep()) {
      AttemptRecord attempt;
      attempt.attempt_id = select.getColumn(0).getInt64();
      const std::string row = "attempt " + std::to_string(attempt.attempt_id);
      attempt.number = static_cast<int>(CheckedInteger(ColumnPlace(path_, row, "attempts.number"),
                                                       CellOf(select.getColumn(1)), 1, std::numeric_limits<int>::max()));
      attempt.status =
          CheckedState<AttemptState>(ColumnPlace(path_, row, "attempts.status"), CellOf(select.getColumn(2)));
      attempt.reason = select.getColumn(3).getString();
      attempt.log_dir = select.getColumn(4).getString();
      if (!attempt.log_dir.empty()) {
        PathInside(path_, logs_dir(), attempt.log_dir, "attempts.log_dir of attempt " + std::to_string(attempt.attempt_id));
      }
      attempt.note = select.getColumn(5).getString();
      attempts.push_back(std::move(attempt));
    }
    return attempts;
  });
}

void Store::AddAttemptPhases(std::int64_t attempt_id, const std::vector<PhaseTime>& phases) {
  WithStoreErrors(path_, [&] {
    std::optional<SQLite::Transaction> transaction = impl_->OwnTransaction(/*immediate=*/true);
    SQLite::Statement insert(impl_->db, "INSERT INTO attempt_phases (attempt_id, phase, seconds) VALUES (?, ?, ?)");
    for (const PhaseTime& phase : phases) {
      insert.bind(1, attempt_id);
      insert.bind(2, phase.phase);
      insert.bind(3, phase.seconds);
      insert.exec();
      insert.reset();
    }
    if (transaction) transaction->commit();
  });
}

std::vector<PhaseTime> Store::AttemptPhases(std::int64_t attempt_id) const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db,
                             "SELECT phase, seconds FROM attempt_phases WHERE attempt_id = ? ORDER BY phase");
    select.bind(1, attempt_id);
    std::vector<PhaseTime> phases;
    while (select.executeStep()) phases.push_back({select.getColumn(0).getString(), select.getColumn(1).getDouble()});
    return phases;
  });
}

// ---- kept logs ------------------------------------------------------------

void Store::KeepAttemptLogs(std::int64_t attempt_id, const std::vector<AttemptLog>& logs) {
  if (logs.empty()) return;
  const std::string dir = WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT r.run_key, a.number, r.run_id FROM attempts a JOIN runs r USING (run_id) WHERE a.attempt_id = ?)");
    select.bind(1, attempt_id);
    if (!select.executeStep()) {
      throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) + " does not exist", -1);
    }
    return CheckedRunKey(path_, select.getColumn(2).getInt64(), select.getColumn(0).getString()) + "/attempt-" +
           std::to_string(select.getColumn(1).getInt());
  });
  std::error_code error;
  std::filesystem::create_directories(logs_dir() + "/" + dir, error);
  if (error) throw StoreError(logs_dir() + "/" + dir + ": cannot create: " + error.message(), -1);
  std::vector<AttemptLog> kept;
  std::vector<std::int64_t> stored_bytes;
  for (const AttemptLog& log : logs) {
    AttemptLog entry = log;
    entry.file = dir + "/" + (log.rank ? "rank-" + std::to_string(*log.rank) : std::string("mpirun")) + "." +
                 log.stream + ".gz";
    entry.bytes = GzipFile(log.file, logs_dir() + "/" + entry.file);
    stored_bytes.push_back(static_cast<std::int64_t>(std::filesystem::file_size(logs_dir() + "/" + entry.file)));
    kept.push_back(std::move(entry));
  }
  WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement update(impl_->db, "UPDATE attempts SET log_dir = ? WHERE attempt_id = ?");
    update.bind(1, dir);
    update.bind(2, attempt_id);
    update.exec();
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO attempt_logs (attempt_id, rank, stream, file, bytes, stored_bytes) VALUES (?, ?, ?, ?, ?, ?))");
    for (size_t i = 0; i < kept.size(); ++i) {
      insert.bind(1, attempt_id);
      BindOptional(insert, 2, kept[i].rank);
      insert.bind(3, kept[i].stream);
      insert.bind(4, kept[i].file);
      insert.bind(5, kept[i].bytes);
      insert.bind(6, stored_bytes[i]);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  });
}

std::vector<AttemptLog> Store::AttemptLogs(std::int64_t attempt_id) const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT rank, stream, file, bytes FROM attempt_logs WHERE attempt_id = ?
      ORDER BY rank IS NULL, rank, stream = 'stderr')");
    select.bind(1, attempt_id);
    std::vector<AttemptLog> logs;
    while (select.executeStep()) {
      AttemptLog log;
      const std::string row = "attempt " + std::to_string(attempt_id);
      if (!select.getColumn(0).isNull()) {
        log.rank = static_cast<int>(CheckedInteger(ColumnPlace(path_, row, "attempt_logs.rank"),
                                                   CellOf(select.getColumn(0)), 0, std::numeric_limits<int>::max()));
      }
      log.stream = CheckedWord(ColumnPlace(path_, row, "attempt_logs.stream"), CellOf(select.getColumn(1)),
                               {"stdout", "stderr"});
      log.file = select.getColumn(2).getString();
      PathInside(path_, logs_dir(), log.file, "attempt_logs.file of attempt " + std::to_string(attempt_id));
      log.bytes = CheckedInteger(ColumnPlace(path_, row, "attempt_logs.bytes"), CellOf(select.getColumn(3)), 0,
                                 std::numeric_limits<std::int64_t>::max());
      logs.push_back(std::move(log));
    }
    return logs;
  });
}

}  // namespace dmlbench
