#include "orchestrator/store/store.h"

#include "orchestrator/store/migrations.h"
#include "orchestrator/store/store_impl.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

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

// What a migration adds that a database shows it holds: a table it creates
// first, or a column it adds to one (column "" for a table).
struct SchemaMark {
  int migration = 0;
  std::string table, column;
};

// Every migration's marks, in migration order (comments stripped first).
const std::vector<SchemaMark>& SchemaMarks() {
  static const std::vector<SchemaMark> marks = [] {
    static const std::regex comment("--[^\n]*");
    static const std::regex statement(
        "CREATE\\s+TABLE\\s+(\\w+)|ALTER\\s+TABLE\\s+(\\w+)\\s+ADD\\s+COLUMN\\s+(\\w+)", std::regex::icase);
    std::vector<SchemaMark> found;
    std::set<std::string> tables;
    for (const auto& [number, sql] : Migrations()) {
      const std::string text = std::regex_replace(sql, comment, "");
      for (std::sregex_iterator it(text.begin(), text.end(), statement), end; it != end; ++it) {
        if ((*it)[1].matched) {
          if (tables.insert((*it)[1].str()).second) found.push_back({number, (*it)[1].str(), ""});
        } else {
          found.push_back({number, (*it)[2].str(), (*it)[3].str()});
        }
      }
    }
    return found;
  }();
  return marks;
}

// Refuses (StoreError) a database whose user_version is below
// the migration its own tables and columns come from: migrating it would
// create what it holds ("table experiments already exists"), and reading
// it as that version would take columns it has for absent.
void RequireVersionOfItsTables(SQLite::Database& db, const std::string& path) {
  // The version and the tables of one snapshot: another process may be
  // migrating the database meanwhile.
  SQLite::Transaction snapshot(db);
  const int version = db.execAndGet("PRAGMA user_version").getInt();
  std::set<std::string> tables;
  SQLite::Statement select(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
  while (select.executeStep()) tables.insert(select.getColumn(0).getString());
  std::map<std::string, std::set<std::string>> columns;
  const SchemaMark* newest = nullptr;
  for (const SchemaMark& mark : SchemaMarks()) {
    if (mark.migration <= version || !tables.count(mark.table)) continue;
    if (!mark.column.empty()) {
      if (!columns.count(mark.table)) {
        SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?)");
        info.bind(1, mark.table);
        while (info.executeStep()) columns[mark.table].insert(info.getColumn(0).getString());
      }
      if (!columns[mark.table].count(mark.column)) continue;
    }
    newest = &mark;
  }
  if (newest == nullptr) return;
  throw StoreError(path + ": the database's schema says version " + std::to_string(version) +
                       " (PRAGMA user_version), but it holds tables of version " + std::to_string(newest->migration) +
                       " or later (" + (newest->column.empty() ? newest->table : newest->table + "." + newest->column) +
                       "): its user_version was changed after it was written; refusing to open it",
                   -1);
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

// Whether the directory of `path` is on a file system mounted read-only.
bool OnReadOnlyFileSystem(const std::string& path) {
  std::filesystem::path directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  struct statvfs mount {};
  return ::statvfs(directory.c_str(), &mount) == 0 && (mount.f_flag & ST_RDONLY) != 0;
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
Store::Store(const std::string& path, Mode mode) : path_(path), mode_(mode) {
  WithStoreErrors(path_, [&] {
    const int version = mode == Mode::kReadWrite ? OpenReadWrite() : OpenReadOnly();
    const int known = KnownSchemaVersion();
    if (version > known) {
      throw StoreError(path_ + ": the database has schema version " + std::to_string(version) +
                           ", newer than this program's " + std::to_string(known) + "; use a newer dmlbench",
                       -1);
    }
    RequireVersionOfItsTables(impl_->db, path_);
    ResolveLogsDir();
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

void Store::ResolveLogsDir() {
  logs_dir_ = path_ + ".logs";
  if (path_ == ":memory:") return;
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(path_, error);
  if (error) return;  // no file yet
  logs_dir_ = real.string() + ".logs";
  struct stat file {};
  if (::stat(real.c_str(), &file) == 0 && file.st_nlink > 1) {
    logs_refusal_ = path_ + ": the database file has " + std::to_string(file.st_nlink) +
                    " names (hard links), and its logs directory sits beside one of them, which no name can tell: "
                    "dmlbench keeps, shows and forgets logs only of a database of one name (remove the other "
                    "links, or copy the file; a symbolic link is followed)";
  }
}

std::string Store::logs_dir() const {
  if (!logs_refusal_.empty()) throw StoreError(logs_refusal_, -1);
  return logs_dir_;
}

int Store::OpenReadOnly() {
  impl_ = std::make_unique<Impl>(path_, SQLite::OPEN_READONLY);
  try {
    return impl_->db.execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception& e) {
    // A WAL database in a directory this process cannot write (another
    // user's, or a read-only mount): a reader needs the -shm file beside
    // it, which it cannot create. Unless a write-ahead log holds changes,
    // the file alone is the whole database: open it as immutable.
    const int code = e.getExtendedErrorCode();
    if (((code & 0xff) != SQLITE_CANTOPEN && code != SQLITE_READONLY_DIRECTORY && code != SQLITE_READONLY_CANTINIT) ||
        !std::filesystem::exists(path_) || DirectoryWritable(path_)) {
      throw;
    }
    // On a read-only mount nobody writes; elsewhere its owner may.
    const bool mounted_read_only = OnReadOnlyFileSystem(path_);
    std::error_code ignored;
    if (std::filesystem::file_size(path_ + "-wal", ignored) > 0 && !ignored) {
      if (mounted_read_only) {
        throw StoreError(path_ + ": cannot read a database on a read-only file system while its write-ahead log " +
                             path_ + "-wal holds changes; copy the database with its -wal file to a writable "
                             "directory",
                         -1);
      }
      throw StoreError(path_ + ": cannot read it: its write-ahead log " + path_ + "-wal holds changes, and this user "
                           "cannot create " + path_ + "-shm beside it (the directory is not writable for it); copy "
                           "the database with its -wal file to a directory of your own, or ask its owner to "
                           "checkpoint it (sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)')",
                       -1);
    }
    impl_ = std::make_unique<Impl>(FileUri(path_) + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    if (!mounted_read_only) {
      open_note_ = path_ + ": read as an unchanging file (its directory is not writable for this user, so SQLite "
                           "cannot share a writer's locks): what a sweep writes while this command reads may be "
                           "missed, or fail the read";
    }
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
