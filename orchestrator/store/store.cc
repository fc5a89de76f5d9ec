#include "orchestrator/store/store.h"

#include "orchestrator/store/gzip.h"
#include "orchestrator/store/migrations.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace dmlbench {
namespace {

constexpr int kBusyTimeoutMs = 10000;
// PRAGMA application_id of a dmlbench database ("dmlb"), set by migration 7.
constexpr int kApplicationId = 0x646d6c62;

// The compiled-in schemas/migrations/NNN_name.sql by number (their SQL);
// numbers must run 1..N.
std::map<int, std::string> Migrations() {
  std::map<int, std::string> found;
  for (const EmbeddedMigration& migration : EmbeddedMigrations()) {
    const std::string name = migration.file;
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    found[std::stoi(name)] = migration.sql;
  }
  if (found.empty()) throw StoreError("this dmlbench was built without its schema migrations", -1);
  int expected = 1;
  for (const auto& entry : found) {
    if (entry.first != expected) {
      throw StoreError("schemas/migrations: migration " + std::to_string(expected) + " is missing", -1);
    }
    ++expected;
  }
  return found;
}

// SQLite would silently open a write-protected file read-only, or fail with
// "unable to open database file" in a read-only directory (WAL needs its
// -wal and -shm files next to the database): say what is wrong instead.
void RequireWritable(const std::string& path) {
  if (path == ":memory:") return;
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  for (const std::string& target : {path, directory.string()}) {
    if (target == path && !std::filesystem::exists(path)) continue;
    if (::access(target.c_str(), W_OK) != 0) {
      throw StoreError(path + ": database is not writable: " + std::strerror(errno) +
                           (target == path ? "" : " (directory " + target + ")"),
                       -1);
    }
  }
}

// Whether this process may create files in the directory of `path`.
bool DirectoryWritable(const std::string& path) {
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  return ::access(directory.c_str(), W_OK) == 0;
}

// The "file:" URI of `path` (absolute; what URIs reserve percent-encoded).
std::string FileUri(const std::string& path) {
  std::string uri = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      uri += escaped;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri;
}

std::string Trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  return std::string(text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1));
}

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

// "128,32" -> {128, 32}; the hidden column's text.
std::vector<int> SplitInts(const std::string& text) {
  std::vector<int> values;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) values.push_back(std::stoi(part));
  return values;
}

std::string JoinStrings(const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += values[i];
  }
  return out;
}

template <typename T>
void BindOptional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}

void BindText(SQLite::Statement& statement, int index, const std::string& value) {
  statement.bind(index, value);
}

void BindTextOrNull(SQLite::Statement& statement, int index, const std::string& value) {
  if (value.empty()) {
    statement.bind(index);
  } else {
    statement.bind(index, value);
  }
}

// Schema version from which experiment_runs holds which experiments planned
// each run (migration 7); before it a run belonged to runs.experiment_id.
constexpr int kExperimentRunsVersion = 7;


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

}  // namespace

struct Store::Impl {
  // `name` is a path, or a "file:" URI with OPEN_URI in `flags`.
  explicit Impl(const std::string& name, int flags) : db(name, flags, kBusyTimeoutMs) {}

  // Declared before db: SQL functions outlive the connection that calls them.
  std::vector<std::unique_ptr<ScalarFunction>> scalar_functions;
  std::vector<std::unique_ptr<AggregateFunction>> aggregate_functions;
  SQLite::Database db;
  // Prepared once: the statements ingest runs for every event.
  std::unique_ptr<SQLite::Statement> insert_epoch;
  std::unique_ptr<SQLite::Statement> insert_rank;
  std::unique_ptr<SQLite::Statement> insert_iteration;
};

namespace {

// Every SQLiteCpp call runs inside this so that callers only ever see
// StoreError: the database path, SQLite's own message and extended code.
template <typename Body>
auto WithStoreErrors(const std::string& path, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    throw StoreError(path + ": " + e.what(), e.getExtendedErrorCode());
  }
}

// Refuses (StoreError) a database another program made: one that is not
// empty and has neither dmlbench's application_id nor, from before that
// mark (migration 7), dmlbench's tables. Adding our tables to it would mix
// two programs' data in one file.
void RequireOurs(SQLite::Database& db, const std::string& path, int version) {
  const int application = db.execAndGet("PRAGMA application_id").getInt();
  if (application == kApplicationId) return;
  std::vector<std::string> names;
  SQLite::Statement select(db, R"(
    SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name)");
  while (select.executeStep()) names.push_back(select.getColumn(0).getString());
  const auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  std::string found;
  if (application != 0) {
    found = "its application_id is " + std::to_string(application);
  } else if (names.empty()) {
    if (version == 0) return;  // a new database
    found = "its user_version is " + std::to_string(version) + " but it holds no tables";
  } else if (version > 0 && has("experiments") && has("runs")) {
    return;  // ours, from before migration 7
  } else {
    constexpr size_t kShown = 5;
    for (size_t i = 0; i < names.size() && i < kShown; ++i) found += (i ? ", " : "") + names[i];
    if (names.size() > kShown) found += " and " + std::to_string(names.size() - kShown) + " more";
    found = "it holds " + found;
  }
  throw StoreError(path + ": not a dmlbench results database (" + found + "); refusing to add dmlbench's tables to it",
                   -1);
}

}  // namespace

Store::Store(const std::string& path, Mode mode) : path_(path) {
  WithStoreErrors(path_, [&] {
  const int known = KnownSchemaVersion();
  int version = 0;
  if (mode != Mode::kReadWrite) {
    impl_ = std::make_unique<Impl>(path, SQLite::OPEN_READONLY);
    try {
      version = impl_->db.execAndGet("PRAGMA user_version").getInt();
    } catch (const SQLite::Exception& e) {
      // A WAL database whose directory is read-only (a read-only mount):
      // readers need the -shm file beside it, which cannot be created. With
      // no write-ahead log left nobody can be writing there, and the file
      // alone is the whole database: open it as immutable.
      if ((e.getExtendedErrorCode() & 0xff) != SQLITE_CANTOPEN || !std::filesystem::exists(path) ||
          DirectoryWritable(path)) {
        throw;
      }
      std::error_code ignored;
      if (std::filesystem::file_size(path + "-wal", ignored) > 0 && !ignored) {
        throw StoreError(path + ": cannot read a database on a read-only file system while its write-ahead log " +
                             path + "-wal holds changes; copy the database with its -wal file to a writable directory",
                         -1);
      }
      impl_ = std::make_unique<Impl>(FileUri(path) + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI);
      version = impl_->db.execAndGet("PRAGMA user_version").getInt();
    }
  } else {
    RequireWritable(path);
    impl_ = std::make_unique<Impl>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    version = impl_->db.execAndGet("PRAGMA user_version").getInt();
    RequireOurs(impl_->db, path_, version);
  }
  if (version > known) {
    throw StoreError(path_ + ": the database has schema version " + std::to_string(version) +
                         ", newer than this program's " + std::to_string(known) +
                         "; use a newer dmlbench",
                     -1);
  }
  if (mode == Mode::kReadOnly) impl_->db.exec("PRAGMA query_only = ON");
  if (mode != Mode::kReadWrite) return;
  impl_->db.exec("PRAGMA journal_mode = WAL");
  impl_->db.exec("PRAGMA synchronous = NORMAL");
  impl_->db.exec("PRAGMA foreign_keys = ON");
  if (version < known) {
    // Each migration and its version bump commit together or not at all.
    for (const auto& [number, sql] : Migrations()) {
      if (number <= version) continue;
      SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
      // Another process may have migrated while we waited for the lock.
      if (impl_->db.execAndGet("PRAGMA user_version").getInt() >= number) continue;
      impl_->db.exec(sql);
      impl_->db.exec("PRAGMA user_version = " + std::to_string(number));
      transaction.commit();
    }
  }
  impl_->insert_epoch = std::make_unique<SQLite::Statement>(impl_->db, R"(
    INSERT INTO epochs (attempt_id, epoch, run_id, iterations, samples, wall_s,
      throughput_samples_per_s, loss, test_accuracy, eval_s, overlap_ratio,
      forward_max_s, forward_mean_s, forward_min_s, backward_max_s, backward_mean_s, backward_min_s,
      exchange_max_s, exchange_mean_s, exchange_min_s, update_max_s, update_mean_s, update_min_s,
      exposed_comm_max_s, exposed_comm_mean_s, exposed_comm_min_s, comm_max_s, comm_mean_s, comm_min_s)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
  impl_->insert_rank = std::make_unique<SQLite::Statement>(impl_->db, R"(
    INSERT INTO rank_phases (attempt_id, epoch, rank, role, forward_s, backward_s, exchange_s,
      update_s, exposed_comm_s, comm_s, wait_s, bytes_sent, bytes_received, messages_sent, cpu_s,
      quota_periods, throttled_periods, throttled_s)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
  impl_->insert_iteration = std::make_unique<SQLite::Statement>(impl_->db, R"(
    INSERT INTO iterations (attempt_id, epoch, iteration, wall_s) VALUES (?, ?, ?, ?))");
  });
}

Store::~Store() = default;

int Store::KnownSchemaVersion() {
  static const int known = Migrations().rbegin()->first;
  return known;
}

std::string Store::LibraryVersion() { return std::string("SQLite ") + sqlite3_libversion(); }

int Store::schema_version() const {
  return WithStoreErrors(path_, [&] {
  return impl_->db.execAndGet("PRAGMA user_version").getInt();
  });
}

std::string Store::RunsColumnOrZero(std::string_view column) const {
  const int since = column == "partition_bytes" ? kPartitionBytesVersion
                    : column == "pulls_in_turn" ? kPullsInTurnVersion
                                                : 0;
  return schema_version() >= since ? "r." + std::string(column) : "0";
}

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
    std::optional<SQLite::Transaction> transaction;
    if (!batch_open_) transaction.emplace(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const std::int64_t experiment_id = AddExperiment(experiment, now_unix_s);
    run_ids->clear();
    for (const NewRun& run : runs) run_ids->push_back(AddRun(experiment_id, *run.run, run.run_key, run.provenance));
    if (transaction) transaction->commit();
    return experiment_id;
  });
}

namespace {
// A host's CPU share as HostCpuShares gives it.
constexpr char kHostShare[] = "printf('%g', CAST(json_extract(h.tags_json, '$.cpu_cores') AS REAL))";
}  // namespace

std::set<std::string> Store::HostCpuShares(const std::vector<std::int64_t>& host_ids) const {
  return WithStoreErrors(path_, [&] {
    std::set<std::string> shares;
    SQLite::Statement select(impl_->db, std::string("SELECT ") + kHostShare + " FROM hosts h WHERE h.host_id = ?");
    for (const std::int64_t id : host_ids) {
      select.bind(1, id);
      if (select.executeStep()) shares.insert(select.getColumn(0).getString());
      select.reset();
    }
    return shares;
  });
}

std::map<std::int64_t, std::set<std::string>> Store::CompleteRunCpuShares() const {
  return WithStoreErrors(path_, [&] {
    std::map<std::int64_t, std::set<std::string>> shares;
    SQLite::Statement select(impl_->db, std::string("SELECT DISTINCT r.run_id, ") + kHostShare + R"(
      FROM runs r JOIN attempt_hosts ah ON ah.attempt_id = r.complete_attempt_id
      JOIN hosts h ON h.host_id = ah.host_id)");
    while (select.executeStep()) shares[select.getColumn(0).getInt64()].insert(select.getColumn(1).getString());
    return shares;
  });
}

std::int64_t Store::AddHost(const HostFacts& facts, double now_unix_s) {
  return WithStoreErrors(path_, [&] {
  const std::string tags = facts.tags_json.empty() ? "{}" : facts.tags_json;
  SQLite::Statement upsert(impl_->db, R"(
    INSERT INTO hosts (name, address, cpu_model, cores, memory_bytes, kernel, mpi_version, provider,
                       tags_json, first_seen_unix_s, last_seen_unix_s)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (name, address, cpu_model, cores, memory_bytes, kernel, mpi_version, provider, tags_json)
    DO UPDATE SET last_seen_unix_s = excluded.last_seen_unix_s
    RETURNING host_id)");
  upsert.bind(1, facts.name);
  upsert.bind(2, facts.address);
  upsert.bind(3, facts.cpu_model);
  upsert.bind(4, facts.cores);
  upsert.bind(5, facts.memory_bytes);
  upsert.bind(6, facts.kernel);
  upsert.bind(7, facts.mpi_version);
  upsert.bind(8, facts.provider);
  upsert.bind(9, tags);
  upsert.bind(10, now_unix_s);
  upsert.bind(11, now_unix_s);
  upsert.executeStep();
  const std::int64_t id = upsert.getColumn(0).getInt64();
  upsert.reset();
  return id;
  });
}

std::unordered_map<std::string, StoredRun> Store::FindRuns(const std::vector<std::string>& run_keys) const {
  return WithStoreErrors(path_, [&] {
  std::unordered_map<std::string, StoredRun> found;
  found.reserve(run_keys.size());
  SQLite::Statement select(impl_->db, R"(
    SELECT r.run_id, r.status, r.split, r.attempts, coalesce(r.failure_reason, ''),
           (SELECT count(*) FROM attempts a WHERE a.run_id = r.run_id AND a.status IN ('failed', 'timed_out'))
    FROM runs r WHERE r.run_key = ?)");
  SQLite::Statement tags(impl_->db, "SELECT tag FROM run_tags WHERE run_id = ? ORDER BY tag");
  SQLite::Statement experiments(impl_->db, R"(
    SELECT e.name FROM )" + Memberships(impl_->db) + R"( m JOIN experiments e USING (experiment_id)
    WHERE m.run_id = ?1
    ORDER BY e.experiment_id != (SELECT experiment_id FROM runs WHERE run_id = ?1), e.experiment_id)");
  for (const std::string& key : run_keys) {
    select.bind(1, key);
    if (select.executeStep()) {
      StoredRun run;
      run.run_id = select.getColumn(0).getInt64();
      run.status = FromText<RunState>(select.getColumn(1).getString()).value_or(RunState::kPending);
      run.split = select.getColumn(2).getString();
      run.attempts = select.getColumn(3).getInt();
      run.failure_reason = select.getColumn(4).getString();
      run.failures = select.getColumn(5).getInt();
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
  SQLite::Statement select(impl_->db, R"(
    SELECT r.run_id, r.run_key, r.architecture, r.workers, r.servers, r.batch_size, r.epochs, r.hidden,
           r.learning_rate, r.overlap, r.bucket_bytes, r.max_iterations_per_epoch, r.dataset, r.seed,
           r.repetition, r.network, r.network_bandwidth_bits_per_s, r.network_latency_s, r.split, r.status,
           r.attempts, r.trainer_sha256, )" + RunsColumnOrZero("partition_bytes") + ", " +
                                    RunsColumnOrZero("pulls_in_turn") + R"(
    FROM runs r ORDER BY r.run_id)");
  std::vector<RunRecord> runs;
  while (select.executeStep()) {
    RunRecord run;
    run.run_id = select.getColumn(0).getInt64();
    run.run_key = select.getColumn(1).getString();
    RunParams& p = run.params;
    p.architecture = FromText<Architecture>(select.getColumn(2).getString()).value_or(Architecture::kRing);
    p.workers = select.getColumn(3).getInt();
    p.servers = select.getColumn(4).getInt();
    p.batch_size = select.getColumn(5).getInt();
    p.epochs = select.getColumn(6).getInt();
    p.hidden = SplitInts(select.getColumn(7).getString());
    p.learning_rate = select.getColumn(8).getDouble();
    p.overlap = select.getColumn(9).getInt() != 0;
    p.bucket_bytes = select.getColumn(10).getInt64();
    p.max_iterations_per_epoch = select.getColumn(11).getInt64();
    p.dataset = select.getColumn(12).getString();
    p.seed = static_cast<std::uint64_t>(select.getColumn(13).getInt64());
    p.repetition = select.getColumn(14).getInt();
    p.network.name = select.getColumn(15).getString();
    p.network.bandwidth_bits_per_s = select.getColumn(16).getDouble();
    p.network.latency_s = select.getColumn(17).getDouble();
    run.split = select.getColumn(18).getString();
    run.status = FromText<RunState>(select.getColumn(19).getString()).value_or(RunState::kPending);
    run.attempts = select.getColumn(20).getInt();
    run.trainer_sha256 = select.getColumn(21).getString();
    p.partition_bytes = select.getColumn(22).getInt64();
    p.pulls_in_turn = select.getColumn(23).getInt() != 0;
    if (auto it = tags.find(run.run_id); it != tags.end()) run.tags = std::move(it->second);
    if (auto it = experiments.find(run.run_id); it != experiments.end()) run.experiments = std::move(it->second);
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

std::int64_t Store::AddRun(std::int64_t experiment_id, const PlannedRun& run, const std::string& run_key,
                           const RunProvenance& provenance) {
  return WithStoreErrors(path_, [&] {
  const RunParams& p = run.params;
  SQLite::Statement insert(impl_->db, R"(
    INSERT INTO runs (run_key, experiment_id, architecture, workers, servers, ranks, batch_size, epochs,
      hidden, learning_rate, overlap, bucket_bytes, max_iterations_per_epoch, dataset, seed, repetition,
      network, network_bandwidth_bits_per_s, network_latency_s, canonical_params, split,
      trainer_sha256, dataset_sha256, git_commit, git_dirty, partition_bytes, pulls_in_turn)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
                            "DELETE FROM attempts WHERE run_id = ?",  // and their hosts and logs
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
    std::filesystem::remove_all(logs_dir() + "/" + run.run_key, ignored);
  }
}

int Store::RecoverInterrupted(double now_unix_s) {
  return WithStoreErrors(path_, [&] {
  SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement attempts(impl_->db, R"(
    UPDATE attempts SET status = 'interrupted', end_unix_s = ?,
      reason = 'the orchestrator stopped during this attempt'
    WHERE status = 'running')");
  attempts.bind(1, now_unix_s);
  attempts.exec();
  SQLite::Statement runs(impl_->db, R"(
    UPDATE runs SET status = 'interrupted', end_unix_s = ?,
      failure_reason = 'the orchestrator stopped during this run'
    WHERE status = 'running')");
  runs.bind(1, now_unix_s);
  const int count = runs.exec();
  transaction.commit();
  return count;
  });
}

std::int64_t Store::BeginAttempt(std::int64_t run_id, double now_unix_s, std::optional<SweepOrder> order) {
  return WithStoreErrors(path_, [&] {
  SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement bump(impl_->db, R"(
    UPDATE runs SET status = 'running', attempts = attempts + 1, start_unix_s = ?, end_unix_s = NULL
    WHERE run_id = ? AND status <> 'complete' RETURNING attempts)");
  bump.bind(1, now_unix_s);
  bump.bind(2, run_id);
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
    VALUES (?, ?, 'running', ?, ?, ?))");
  insert.bind(1, run_id);
  insert.bind(2, number);
  insert.bind(3, now_unix_s);
  if (order) {
    insert.bind(4, static_cast<std::int64_t>(order->seed));
    insert.bind(5, order->position);
  } else {
    insert.bind(4);
    insert.bind(5);
  }
  insert.exec();
  const std::int64_t attempt_id = impl_->db.getLastInsertRowid();
  transaction.commit();
  return attempt_id;
  });
}

void Store::BeginBatch() {
  WithStoreErrors(path_, [&] {
    if (batch_open_) throw StoreError(path_ + ": a batch is already open", -1);
    impl_->db.exec("BEGIN");
    batch_open_ = true;
  });
}

void Store::CommitBatch() {
  WithStoreErrors(path_, [&] {
    if (!batch_open_) return;
    batch_open_ = false;
    try {
      impl_->db.exec("COMMIT");
    } catch (const SQLite::Exception&) {
      // SQLite may have rolled back already (e.g. on a full disk).
      if (!sqlite3_get_autocommit(impl_->db.getHandle())) impl_->db.exec("ROLLBACK");
      throw;
    }
  });
}

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
  std::optional<SQLite::Transaction> transaction;
  if (!batch_open_) transaction.emplace(impl_->db);
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
    BindText(rank, 4, k.role);
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

void Store::KeepAttemptLogs(std::int64_t attempt_id, const std::vector<AttemptLog>& logs) {
  if (logs.empty()) return;
  const std::string dir = WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT r.run_key, a.number FROM attempts a JOIN runs r USING (run_id) WHERE a.attempt_id = ?)");
    select.bind(1, attempt_id);
    if (!select.executeStep()) {
      throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) + " does not exist", -1);
    }
    return select.getColumn(0).getString() + "/attempt-" + std::to_string(select.getColumn(1).getInt());
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
      if (!select.getColumn(0).isNull()) log.rank = select.getColumn(0).getInt();
      log.stream = select.getColumn(1).getString();
      log.file = select.getColumn(2).getString();
      log.bytes = select.getColumn(3).getInt64();
      logs.push_back(std::move(log));
    }
    return logs;
  });
}

std::vector<AttemptRecord> Store::Attempts(std::int64_t run_id) const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT attempt_id, number, status, coalesce(reason, ''), coalesce(log_dir, '')
      FROM attempts WHERE run_id = ? ORDER BY number)");
    select.bind(1, run_id);
    std::vector<AttemptRecord> attempts;
    while (select.executeStep()) {
      AttemptRecord attempt;
      attempt.attempt_id = select.getColumn(0).getInt64();
      attempt.number = select.getColumn(1).getInt();
      attempt.status = FromText<AttemptState>(select.getColumn(2).getString()).value_or(AttemptState::kRunning);
      attempt.reason = select.getColumn(3).getString();
      attempt.log_dir = select.getColumn(4).getString();
      attempts.push_back(std::move(attempt));
    }
    return attempts;
  });
}

void Store::AddLinkProbe(const std::vector<LinkProbeRow>& rows) {
  return WithStoreErrors(path_, [&] {
  SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement insert(impl_->db, R"(
    INSERT INTO link_probes (profile, bandwidth_bits_per_s, latency_s, message_bytes, repetitions,
      median_one_way_s, alpha_s, bandwidth_bytes_per_s, time_unix_s, hosts)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
  for (const LinkProbeRow& r : rows) {
    insert.bind(1, r.profile);
    insert.bind(2, r.bandwidth_bits_per_s);
    insert.bind(3, r.latency_s);
    insert.bind(4, r.message_bytes);
    insert.bind(5, r.repetitions);
    insert.bind(6, r.median_one_way_s);
    insert.bind(7, r.alpha_s);
    insert.bind(8, r.bandwidth_bytes_per_s);
    insert.bind(9, r.time_unix_s);
    insert.bind(10, r.hosts);
    insert.exec();
    insert.reset();
  }
  transaction.commit();
  });
}

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
      predicted_worker_cpu_s, predicted_server_cpu_s, limited_by, measured_worker_cpu_s, measured_server_cpu_s)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
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
  return fit;
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

void Store::FinishAttempt(std::int64_t run_id, std::int64_t attempt_id, const AttemptOutcome& outcome,
                          RunDisposition disposition, const std::vector<std::int64_t>& host_ids) {
  return WithStoreErrors(path_, [&] {
  const bool ok = outcome.status == AttemptState::kOk;
  SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement attempt(impl_->db, R"(
    UPDATE attempts SET status = ?, end_unix_s = ?, exit_code = ?, reason = ?, stderr_tail = ?,
      command_line = ?, hosts = ?, host_failure = ?
    WHERE attempt_id = ? AND run_id = ?)");
  attempt.bind(1, std::string(Text(outcome.status)));
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
  attempt.bind(9, attempt_id);
  attempt.bind(10, run_id);
  if (attempt.exec() != 1) {
    throw StoreError(path_ + ": attempt " + std::to_string(attempt_id) + " of run " + std::to_string(run_id) +
                         " does not exist",
                     -1);
  }
  SQLite::Statement link(impl_->db, "INSERT OR IGNORE INTO attempt_hosts (attempt_id, host_id) VALUES (?, ?)");
  for (std::int64_t host_id : host_ids) {
    link.bind(1, attempt_id);
    link.bind(2, host_id);
    link.exec();
    link.reset();
  }
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
  std::string status = "running";
  if (ok) {
    status = "complete";
  } else if (disposition == RunDisposition::kFailed) {
    status = "failed";
  } else if (disposition == RunDisposition::kInterrupted) {
    status = "interrupted";
  }
  SQLite::Statement run(impl_->db, R"(
    UPDATE runs SET status = ?1,
      complete_attempt_id = CASE WHEN ?1 = 'complete' THEN a.attempt_id END,
      mpi_library_version = a.mpi_library_version, command_line = a.command_line,
      start_unix_s = a.start_unix_s, end_unix_s = a.end_unix_s, exit_code = a.exit_code,
      failure_reason = a.reason, stderr_tail = a.stderr_tail,
      parameter_checksum = CASE WHEN ?1 = 'complete' THEN a.parameter_checksum END
    FROM (SELECT * FROM attempts WHERE attempt_id = ?2) AS a
    WHERE runs.run_id = ?3)");
  run.bind(1, status);
  run.bind(2, attempt_id);
  run.bind(3, run_id);
  run.exec();
  transaction.commit();
  });
}

std::optional<RunMeasures> Store::CompleteRunMeasures(std::int64_t run_id) const {
  return WithStoreErrors(path_, [&]() -> std::optional<RunMeasures> {
    SQLite::Statement select(impl_->db, R"(
      SELECT count(*), avg(wall_s), avg(throughput_samples_per_s),
             (SELECT test_accuracy FROM complete_epochs WHERE run_id = ?1 ORDER BY epoch DESC LIMIT 1)
      FROM complete_epochs WHERE run_id = ?1)");
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

std::vector<Store::SteadyEpoch> Store::SteadyEpochs() const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db,
                             "SELECT run_id, epoch, wall_s, warmup_included FROM steady_epochs ORDER BY run_id, epoch");
    std::vector<SteadyEpoch> epochs;
    while (select.executeStep()) {
      epochs.push_back({select.getColumn(0).getInt64(), select.getColumn(1).getInt(),
                        select.getColumn(2).getDouble(), select.getColumn(3).getInt() != 0});
    }
    return epochs;
  });
}


namespace {

Cell CellOf(sqlite3_value* value) {
  switch (sqlite3_value_type(value)) {
    case SQLITE_INTEGER:
      return static_cast<std::int64_t>(sqlite3_value_int64(value));
    case SQLITE_FLOAT:
      return sqlite3_value_double(value);
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_BLOB:
      return "<blob of " + std::to_string(sqlite3_value_bytes(value)) + " bytes>";
    default:
      return std::string(reinterpret_cast<const char*>(sqlite3_value_text(value)),
                         static_cast<std::size_t>(sqlite3_value_bytes(value)));
  }
}

void SetResult(sqlite3_context* context, const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) {
    sqlite3_result_int64(context, *i);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    sqlite3_result_double(context, *d);
  } else if (const auto* text = std::get_if<std::string>(&cell)) {
    sqlite3_result_text(context, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(context);
  }
}

void CallScalar(sqlite3_context* context, int count, sqlite3_value** values) {
  try {
    std::vector<Cell> arguments;
    for (int i = 0; i < count; ++i) arguments.push_back(CellOf(values[i]));
    SetResult(context, (*static_cast<ScalarFunction*>(sqlite3_user_data(context)))(arguments));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

// An aggregate's rows live behind a pointer in SQLite's per-group context;
// the final call (which SQLite makes for every group, also after an error)
// frees them.
using AggregateRows = std::vector<std::vector<Cell>>;

void StepAggregate(sqlite3_context* context, int count, sqlite3_value** values) {
  auto** rows = static_cast<AggregateRows**>(sqlite3_aggregate_context(context, sizeof(AggregateRows*)));
  if (rows == nullptr) {
    sqlite3_result_error_nomem(context);
    return;
  }
  try {
    if (*rows == nullptr) *rows = new AggregateRows;
    std::vector<Cell> row;
    for (int i = 0; i < count; ++i) row.push_back(CellOf(values[i]));
    (*rows)->push_back(std::move(row));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

void FinishAggregate(sqlite3_context* context) {
  auto** slot = static_cast<AggregateRows**>(sqlite3_aggregate_context(context, 0));
  const std::unique_ptr<AggregateRows> rows(slot != nullptr ? *slot : nullptr);
  try {
    const AggregateRows none;
    SetResult(context, (*static_cast<AggregateFunction*>(sqlite3_user_data(context)))(rows ? *rows : none));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

}  // namespace

QueryResult Store::Query(const std::string& sql) const {
  return WithStoreErrors(path_, [&] {
  // SQLite compiles the first statement and would silently drop the rest.
  sqlite3_stmt* first = nullptr;
  const char* rest = nullptr;
  if (sqlite3_prepare_v2(impl_->db.getHandle(), sql.c_str(), static_cast<int>(sql.size()), &first, &rest) ==
      SQLITE_OK) {
    sqlite3_finalize(first);
    sqlite3_stmt* second = nullptr;
    const int status = sqlite3_prepare_v2(impl_->db.getHandle(), rest, -1, &second, nullptr);
    sqlite3_finalize(second);
    if (status != SQLITE_OK || second != nullptr) {
      throw StoreError(path_ + ": one SQL statement at a time, got more after the first: " + Trimmed(rest), -1);
    }
  }
  SQLite::Statement statement(impl_->db, sql);
  QueryResult result;
  const int count = statement.getColumnCount();
  for (int i = 0; i < count; ++i) result.columns.emplace_back(statement.getColumnName(i));
  while (statement.executeStep()) {
    std::vector<Cell> row;
    row.reserve(count);
    for (int i = 0; i < count; ++i) {
      const SQLite::Column column = statement.getColumn(i);
      switch (column.getType()) {
        case SQLITE_INTEGER:
          row.emplace_back(column.getInt64());
          break;
        case SQLITE_FLOAT:
          row.emplace_back(column.getDouble());
          break;
        case SQLITE_NULL:
          row.emplace_back(nullptr);
          break;
        case SQLITE_BLOB:
          row.emplace_back("<blob of " + std::to_string(column.getBytes()) + " bytes>");
          break;
        default:
          row.emplace_back(column.getString());
      }
    }
    result.rows.push_back(std::move(row));
  }
  return result;
  });
}

void Store::ExecuteScript(const std::string& sql) {
  WithStoreErrors(path_, [&] { impl_->db.exec(sql); });
}

void Store::AddScalarFunction(const std::string& name, int arguments, ScalarFunction function) {
  impl_->scalar_functions.push_back(std::make_unique<ScalarFunction>(std::move(function)));
  const int code = sqlite3_create_function_v2(impl_->db.getHandle(), name.c_str(), arguments,
                                              SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                              impl_->scalar_functions.back().get(), CallScalar, nullptr, nullptr,
                                              nullptr);
  if (code != SQLITE_OK) throw StoreError(path_ + ": cannot add SQL function " + name + ": " + sqlite3_errstr(code), code);
}

void Store::AddAggregateFunction(const std::string& name, int arguments, AggregateFunction function) {
  impl_->aggregate_functions.push_back(std::make_unique<AggregateFunction>(std::move(function)));
  const int code = sqlite3_create_function_v2(impl_->db.getHandle(), name.c_str(), arguments,
                                              SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                              impl_->aggregate_functions.back().get(), nullptr, StepAggregate,
                                              FinishAggregate, nullptr);
  if (code != SQLITE_OK) throw StoreError(path_ + ": cannot add SQL function " + name + ": " + sqlite3_errstr(code), code);
}

std::vector<std::string> Store::TablesAndViews() const {
  return WithStoreErrors(path_, [&] {
  SQLite::Statement select(impl_->db, R"(
    SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
    ORDER BY type = 'view', name)");
  std::vector<std::string> names;
  while (select.executeStep()) names.push_back(select.getColumn(0).getString());
  return names;
  });
}

}  // namespace dmlbench
