#include "orchestrator/store/store.h"

#include "orchestrator/store/migrations.h"
#include "orchestrator/store/store_impl.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

namespace dmlbench {

bool StoreError::constraint_violation() const {
  return extended_code_ >= 0 && (extended_code_ & 0xff) == SQLITE_CONSTRAINT;
}

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

Store::Impl::Impl(const std::string& name, int flags) : db(name, flags, kBusyTimeoutMs) {}

std::optional<SQLite::Transaction> Store::Impl::OwnTransaction(bool immediate) {
  if (batch) return std::nullopt;
  if (!immediate) return std::optional<SQLite::Transaction>(std::in_place, db);
  return std::optional<SQLite::Transaction>(std::in_place, db, SQLite::TransactionBehavior::IMMEDIATE);
}

void BindTextOrNull(SQLite::Statement& statement, int index, const std::string& value) {
  if (value.empty()) {
    statement.bind(index);
  } else {
    statement.bind(index, value);
  }
}

// Opening, in steps: the connection for the mode (and the schema version it
// finds), the refusal of a newer schema, then for kReadWrite the pragmas,
// the pending migrations and the statements prepared once.
Store::Store(const std::string& path, Mode mode) : path_(path) {
  WithStoreErrors(path_, [&] {
    const int version = mode == Mode::kReadWrite ? OpenReadWrite() : OpenReadOnly();
    const int known = KnownSchemaVersion();
    if (version > known) {
      throw StoreError(path_ + ": the database has schema version " + std::to_string(version) +
                           ", newer than this program's " + std::to_string(known) + "; use a newer dmlbench",
                       -1);
    }
    if (mode == Mode::kReadOnly) impl_->db.exec("PRAGMA query_only = ON");
    if (mode != Mode::kReadWrite) return;
    impl_->db.exec("PRAGMA journal_mode = WAL");
    impl_->db.exec("PRAGMA synchronous = NORMAL");
    impl_->db.exec("PRAGMA foreign_keys = ON");
    if (version < known) Migrate(version);
    PrepareStatements();
  });
}

Store::~Store() = default;

int Store::OpenReadOnly() {
  impl_ = std::make_unique<Impl>(path_, SQLite::OPEN_READONLY);
  try {
    return impl_->db.execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception& e) {
    // A WAL database whose directory is read-only (a read-only mount):
    // readers need the -shm file beside it, which cannot be created. With
    // no write-ahead log left nobody can be writing there, and the file
    // alone is the whole database: open it as immutable.
    if ((e.getExtendedErrorCode() & 0xff) != SQLITE_CANTOPEN || !std::filesystem::exists(path_) ||
        DirectoryWritable(path_)) {
      throw;
    }
    std::error_code ignored;
    if (std::filesystem::file_size(path_ + "-wal", ignored) > 0 && !ignored) {
      throw StoreError(path_ + ": cannot read a database on a read-only file system while its write-ahead log " +
                           path_ + "-wal holds changes; copy the database with its -wal file to a writable directory",
                       -1);
    }
    impl_ = std::make_unique<Impl>(FileUri(path_) + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    return impl_->db.execAndGet("PRAGMA user_version").getInt();
  }
}

int Store::OpenReadWrite() {
  RequireWritable(path_);
  impl_ = std::make_unique<Impl>(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  const int version = impl_->db.execAndGet("PRAGMA user_version").getInt();
  RequireOurs(impl_->db, path_, version);
  return version;
}

void Store::Migrate(int version) {
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

void Store::PrepareStatements() {
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
}

int Store::KnownSchemaVersion() {
  static const int known = Migrations().rbegin()->first;
  return known;
}

std::string Store::LibraryVersion() { return std::string("SQLite ") + sqlite3_libversion(); }

int Store::schema_version() const {
  return WithStoreErrors(path_, [&] { return impl_->db.execAndGet("PRAGMA user_version").getInt(); });
}

std::string Store::RunsColumnOrZero(std::string_view column) const {
  const int since = column == "partition_bytes" ? kPartitionBytesVersion
                    : column == "pulls_in_turn" ? kPullsInTurnVersion
                                                : 0;
  return schema_version() >= since ? "r." + std::string(column) : "0";
}

// ---- the batch ----------------------------------------------------------

Store::Batch::Batch(Store& store) : store_(store) {
  WithStoreErrors(store_.path_, [&] {
    if (store_.impl_->batch) throw StoreError(store_.path_ + ": a batch is already open", -1);
    store_.impl_->batch = std::make_unique<SQLite::Transaction>(store_.impl_->db);
  });
}

// SQLite::Transaction's destructor rolls back what was not committed and
// swallows any error.
Store::Batch::~Batch() {
  if (open_) store_.impl_->batch.reset();
}

void Store::Batch::Commit() {
  if (!open_) throw StoreError(store_.path_ + ": the batch is closed already", -1);
  open_ = false;
  // Taken out first: a failed commit (e.g. a full disk) rolls back as the
  // transaction goes, and no batch is left open either way.
  const std::unique_ptr<SQLite::Transaction> transaction = std::move(store_.impl_->batch);
  WithStoreErrors(store_.path_, [&] { transaction->commit(); });
}

bool Store::batch_open() const { return impl_->batch != nullptr; }

}  // namespace dmlbench
