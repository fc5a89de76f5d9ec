// The results database on real SQLite files: migrations, the typed run and
// attempt life cycle, the constraints the schema enforces, and every error
// path with its whole message.
#include "orchestrator/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "orchestrator/store/migrations.h"
#include "trainer/sha256.h"

#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"
#include "tests/orchestrator/support/tmpfs_mount.h"

namespace dmlbench {
namespace {

using testing::Int;
using testing::Text;

using testing::TempDir;
using testing::TmpfsMount;

Experiment MakeExperiment(const std::string& text = "name = 'x'") {
  Experiment experiment;
  experiment.name = "unit";
  experiment.description = "store test";
  experiment.source_path = "experiments/unit.toml";
  experiment.source_text = text;
  experiment.source_sha256 = Sha256Hex(text);
  return experiment;
}

PlannedRun MakeRun(Architecture architecture = Architecture::kRing, int workers = 2) {
  PlannedRun run;
  run.params.architecture = architecture;
  run.params.workers = workers;
  run.params.dataset = "synthetic";
  run.split = "validation";
  return run;
}

RunProvenance MakeProvenance() {
  RunProvenance provenance;
  provenance.trainer_sha256 = std::string(64, 't');
  provenance.dataset_sha256 = "synthetic:1:10000";
  provenance.git_commit = std::string(40, 'g');
  provenance.git_dirty = true;
  return provenance;
}

EpochRecord MakeEpoch(int epoch, int ranks = 2) {
  EpochRecord r;
  r.epoch = epoch;
  r.iterations = 10;
  r.samples = 2000;
  r.wall_s = 0.5;
  r.throughput_samples_per_s = 4000;
  r.loss = 1.5;
  r.forward = {0.2, 0.1, 0.05};
  for (int k = 0; k < ranks; ++k) {
    RankPhaseRecord rank;
    rank.rank = k;
    rank.role = "worker";
    rank.bytes_sent = 100;
    r.ranks.push_back(rank);
  }
  return r;
}

RunEndRecord OkEnd() {
  RunEndRecord end;
  end.status = "ok";
  end.parameter_checksum = "feed";
  end.total_wall_s = 1.0;
  return end;
}

AttemptOutcome Outcome(const std::string& status, const std::string& reason = "") {
  AttemptOutcome outcome;
  outcome.status = *FromText<AttemptState>(status);
  outcome.exit_code = status == "ok" ? 0 : 1;
  outcome.reason = reason;
  outcome.stderr_tail = "tail of stderr";
  outcome.command_line = "mpirun -np 2 dmlbench-trainer";
  outcome.hosts = {"local"};
  outcome.end_unix_s = 20;
  return outcome;
}

class StoreTest : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string db_ = dir_ / "results.db";
};

TEST_F(StoreTest, NewDatabaseHasEveryMigrationWalAndForeignKeys) {
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_GE(Store::KnownSchemaVersion(), 1);
  EXPECT_EQ(Text(store, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Int(store, "PRAGMA foreign_keys"), 1);
  const std::vector<std::string> names = store.TablesAndViews();
  for (const char* name : {"experiments", "runs", "attempts", "hosts", "epochs", "rank_phases", "run_summary",
                           "failures", "complete_epochs"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST_F(StoreTest, ARunBelongsToEveryExperimentThatPlansIt) {
  Store store(db_);
  const PlannedRun ring = MakeRun();
  const PlannedRun mpi = MakeRun(Architecture::kMpi);
  const std::string ring_key(64, 'r');
  const std::string mpi_key(64, 'm');
  std::vector<std::int64_t> first_ids;
  const std::int64_t first = store.AddExperimentRuns(
      MakeExperiment("a"), {{&ring, ring_key, MakeProvenance()}, {&mpi, mpi_key, MakeProvenance()}}, 1, &first_ids);
  // An edited copy: another text, one of the same runs.
  std::vector<std::int64_t> copy_ids;
  const std::int64_t copy = store.AddExperimentRuns(MakeExperiment("b"), {{&mpi, mpi_key, MakeProvenance()}}, 2,
                                                    &copy_ids);
  ASSERT_EQ(first_ids.size(), 2u);
  ASSERT_EQ(copy_ids.size(), 1u);
  EXPECT_NE(copy, first);
  EXPECT_EQ(copy_ids[0], first_ids[1]);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'pending'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiment_runs WHERE experiment_id = " + std::to_string(first)), 2);
  EXPECT_EQ(Int(store, "SELECT run_id FROM experiment_runs WHERE experiment_id = " + std::to_string(copy)),
            first_ids[1]);
  // The run remembers who planned it first.
  EXPECT_EQ(Int(store, "SELECT experiment_id FROM runs WHERE run_id = " + std::to_string(first_ids[1])), first);
}

TEST_F(StoreTest, MigrationSevenGivesEveryOldRunItsExperiment) {
  // A database as version 6 left it, with one experiment and one run.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
  for (const EmbeddedMigration& migration : EmbeddedMigrations()) {
    if (std::string(migration.file) >= "007") break;
    ASSERT_EQ(sqlite3_exec(raw, migration.sql, nullptr, nullptr, nullptr), SQLITE_OK) << migration.file;
  }
  ASSERT_EQ(sqlite3_exec(raw, R"(
    PRAGMA user_version = 6;
    INSERT INTO experiments (experiment_id, name, source_path, matrix_text, matrix_sha256, first_used_unix_s)
      VALUES (5, 'old', 'old.toml', '', printf('%064d', 0), 1);
    INSERT INTO runs (run_key, experiment_id, architecture, workers, servers, ranks, batch_size, epochs, hidden,
      learning_rate, overlap, bucket_bytes, max_iterations_per_epoch, dataset, seed, repetition,
      canonical_params, split, trainer_sha256, dataset_sha256)
      VALUES (printf('%064d', 1), 5, 'ring', 1, 0, 1, 100, 1, '128,32', 0.05, 0, 65536, 0, 'synthetic', 1, 0,
              '{}', 'validation', 't', 'd'))",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Text(store, "SELECT experiment_id || ':' || run_id FROM experiment_runs"), "5:1");
  EXPECT_EQ(Int(store, "PRAGMA application_id"), 0x646d6c62);
}

TEST_F(StoreTest, ADatabaseOnAReadOnlyFileSystemIsReadAsItIs) {
  TmpfsMount disk(dir_, "8m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  { Store(db).AddExperiment(MakeExperiment(), 1); }
  ASSERT_TRUE(disk.RemountReadOnly());
  Store reader(db, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(reader, "SELECT name FROM experiments"), "unit");
  EXPECT_FALSE(std::filesystem::exists(db + "-shm"));
}

TEST_F(StoreTest, ReopeningAppliesNothingTwice) {
  { Store store(db_); }
  Store again(db_);
  EXPECT_EQ(again.schema_version(), Store::KnownSchemaVersion());
}

TEST_F(StoreTest, ExperimentsAndHostsAreDeduplicated) {
  Store store(db_);
  const std::int64_t a = store.AddExperiment(MakeExperiment(), 1);
  EXPECT_EQ(store.AddExperiment(MakeExperiment(), 2), a);
  EXPECT_NE(store.AddExperiment(MakeExperiment("name = 'changed'"), 3), a);
  HostFacts host;
  host.name = "local";
  host.cpu_model = "cpu";
  host.cores = 2;
  host.memory_bytes = 1 << 30;
  host.kernel = "Linux";
  host.mpi_version = "mpirun (Open MPI) 4.1.4";
  host.provider = "local";
  const std::int64_t h = store.AddHost(host, 1);
  EXPECT_EQ(store.AddHost(host, 5), h);
  EXPECT_EQ(Int(store, "SELECT last_seen_unix_s = 5 FROM hosts"), 1);
  host.kernel = "Linux 6.2";
  EXPECT_NE(store.AddHost(host, 6), h);
}

TEST_F(StoreTest, RunLifeCycleFromPendingToComplete) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  const std::string key(64, 'k');
  const std::int64_t run = store.AddRun(experiment, MakeRun(), key, MakeProvenance());
  EXPECT_EQ(store.AddRun(experiment, MakeRun(), key, MakeProvenance()), run);
  EXPECT_EQ(store.FindRuns({key}).at(key).status, RunState::kPending);
  EXPECT_TRUE(store.FindRuns({std::string(64, 'z')}).empty());

  const std::int64_t attempt = store.BeginAttempt(run, 10);
  EXPECT_EQ(store.FindRuns({key}).at(key).status, RunState::kRunning);
  RunStartRecord start;
  start.mpi_library_version = "Open MPI v4.1.4";
  start.world_size = 2;
  store.RecordRunStart(attempt, start);
  store.AddEpoch(run, attempt, MakeEpoch(1));
  store.AddEpoch(run, attempt, MakeEpoch(2));
  store.RecordRunEnd(attempt, OkEnd());
  store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kFailed, {});

  const StoredRun stored = store.FindRuns({key}).at(key);
  EXPECT_EQ(stored.status, RunState::kComplete);
  EXPECT_EQ(stored.attempts, 1);
  EXPECT_EQ(Text(store, "SELECT parameter_checksum FROM runs"), "feed");
  EXPECT_EQ(Text(store, "SELECT mpi_library_version FROM runs"), "Open MPI v4.1.4");
  EXPECT_EQ(Text(store, "SELECT git_commit FROM runs"), std::string(40, 'g'));
  EXPECT_EQ(Int(store, "SELECT stderr_tail IS NULL FROM runs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 4);
  EXPECT_EQ(Int(store, "SELECT runs FROM run_summary"), 1);
  const auto measures = store.CompleteRunMeasures(run);
  ASSERT_TRUE(measures.has_value());
  EXPECT_EQ(measures->epochs, 2);
  EXPECT_DOUBLE_EQ(measures->throughput_mean, 4000);
}

TEST_F(StoreTest, NewAttemptDropsThePartialEpochsOfTheLastOne) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t first = store.BeginAttempt(run, 10);
  store.AddEpoch(run, first, MakeEpoch(1));
  store.FinishAttempt(run, first, Outcome("failed", "mpirun exited with status 1"), RunDisposition::kRetry, {});
  EXPECT_EQ(store.FindRuns({std::string(64, 'k')}).begin()->second.status, RunState::kRunning);
  const std::int64_t second = store.BeginAttempt(run, 11);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 0);
  store.AddEpoch(run, second, MakeEpoch(1));
  store.RecordRunEnd(second, OkEnd());
  store.FinishAttempt(run, second, Outcome("ok"), RunDisposition::kFailed, {});
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts WHERE number = 1"), "mpirun exited with status 1");
  EXPECT_EQ(Text(store, "SELECT stderr_tail FROM attempts WHERE number = 1"), "tail of stderr");
}

TEST_F(StoreTest, FailedRunAppearsInFailuresWithItsReason) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(Architecture::kP2p),
                                        std::string(64, 'k'), MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.FinishAttempt(run, attempt, Outcome("timed_out", "timed out after 5 s"), RunDisposition::kFailed, {});
  const QueryResult failures = store.Query("SELECT architecture, status, failure_reason, stderr_tail FROM failures");
  ASSERT_EQ(failures.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(failures.rows[0][0]), "p2p");
  EXPECT_EQ(std::get<std::string>(failures.rows[0][1]), "failed");
  EXPECT_EQ(std::get<std::string>(failures.rows[0][2]), "timed out after 5 s");
  EXPECT_EQ(std::get<std::string>(failures.rows[0][3]), "tail of stderr");
  EXPECT_FALSE(store.CompleteRunMeasures(run).has_value());
}

TEST_F(StoreTest, RecoverInterruptedMarksRunningRunsAndAttempts) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.AddEpoch(run, attempt, MakeEpoch(1));
  EXPECT_EQ(store.RecoverInterrupted(12), 1);
  EXPECT_EQ(store.RecoverInterrupted(13), 0);
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts"), "the orchestrator stopped during this attempt");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_summary"), 0);
}

TEST_F(StoreTest, HostsOfAnAttemptAreLinked) {
  Store store(db_);
  HostFacts host;
  host.name = "local";
  host.provider = "local";
  const std::int64_t h = store.AddHost(host, 1);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.FinishAttempt(run, attempt, Outcome("failed", "x"), RunDisposition::kFailed, {h});
  EXPECT_EQ(Int(store, "SELECT host_id FROM attempt_hosts"), h);
  EXPECT_EQ(Text(store, "SELECT hosts FROM attempts"), "local");
}

TEST_F(StoreTest, QueryReturnsTypedCells) {
  Store store(db_);
  const QueryResult result = store.Query("SELECT 1 AS i, 2.5 AS d, 'x' AS s, NULL AS n");
  EXPECT_EQ(result.columns, (std::vector<std::string>{"i", "d", "s", "n"}));
  EXPECT_EQ(std::get<std::int64_t>(result.rows[0][0]), 1);
  EXPECT_EQ(std::get<double>(result.rows[0][1]), 2.5);
  EXPECT_EQ(std::get<std::string>(result.rows[0][2]), "x");
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(result.rows[0][3]));
}

TEST_F(StoreTest, BatchIsInvisibleToOtherConnectionsUntilCommitted) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.BeginBatch();
  EXPECT_TRUE(store.batch_open());
  store.AddEpoch(run, attempt, MakeEpoch(1));
  store.AddEpoch(run, attempt, MakeEpoch(2));
  Store reader(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM epochs"), 0);
  store.CommitBatch();
  EXPECT_FALSE(store.batch_open());
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM epochs"), 2);
}

// ---- error paths of store.cc follow --------------------------------------

TEST_F(StoreTest, DatabaseNewerThanTheProgramIsRefused) {
  { Store(db_).Query("PRAGMA user_version = 99"); }
  const std::string expected = db_ + ": the database has schema version 99, newer than this program's " +
                               std::to_string(Store::KnownSchemaVersion()) + "; use a newer dmlbench";
  try {
    Store store(db_);
    FAIL() << "opened a newer database";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
    EXPECT_EQ(e.extended_code(), -1);
  }
  try {
    Store store(db_, Store::Mode::kReadOnly);
    FAIL() << "opened a newer database read-only";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TEST_F(StoreTest, AForeignDatabaseIsRefusedAndLeftAsItWas) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  try {
    Store store(db_);
    FAIL() << "opened another program's database for writing";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": not a dmlbench results database (it holds notes); refusing to add "
                                           "dmlbench's tables to it");
    EXPECT_EQ(e.extended_code(), -1);
  }
  Store reader(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(reader, "SELECT group_concat(name, ',') FROM sqlite_schema"), "notes");
  EXPECT_EQ(Int(reader, "PRAGMA user_version"), 0);
}

TEST_F(StoreTest, ReadOnlyRefusesWrites) {
  { Store store(db_); }
  Store store(db_, Store::Mode::kReadOnly);
  try {
    store.Query("DELETE FROM runs");
    FAIL() << "wrote through a read-only store";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": attempt to write a readonly database");
    EXPECT_EQ(e.extended_code(), SQLITE_READONLY);
  }
}

TEST_F(StoreTest, DatabaseInAMissingDirectoryIsNotWritable) {
  try {
    Store store(dir_ / "missing/results.db");
    FAIL() << "created a database in a missing directory";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir_ / "missing/results.db: database is not writable: No such file or "
                                            "directory (directory " + (dir_ / "missing") + ")");
  }
}

TEST_F(StoreTest, AReadOnlyFileSystemWithChangesStillInTheLogIsAClearError) {
  TmpfsMount disk(dir_, "8m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  {
    // Copied while a writer has changes in its write-ahead log only.
    Store writer(db_);
    writer.AddExperiment(MakeExperiment(), 1);
    ASSERT_GT(std::filesystem::file_size(db_ + "-wal"), 0u);
    std::filesystem::copy_file(db_, db);
    std::filesystem::copy_file(db_ + "-wal", db + "-wal");
  }
  ASSERT_TRUE(disk.RemountReadOnly());
  try {
    Store reader(db, Store::Mode::kReadOnly);
    FAIL() << "read a database without the changes in its log";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db + ": cannot read a database on a read-only file system while its "
                                          "write-ahead log " + db + "-wal holds changes; copy the database with "
                                          "its -wal file to a writable directory");
  }
}

TEST_F(StoreTest, ReadOnlyOfAMissingFileNamesIt) {
  try {
    Store store(dir_ / "missing.db", Store::Mode::kReadOnly);
    FAIL() << "opened a missing database";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), dir_ / "missing.db: unable to open database file");
    EXPECT_EQ(e.extended_code(), SQLITE_CANTOPEN);
  }
}

TEST_F(StoreTest, UnknownArchitectureViolatesItsCheckConstraint) {
  Store store(db_);
  try {
    // Architecture is an enum in the program, so only SQL can name another.
    store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'), MakeProvenance());
    store.Query("UPDATE runs SET architecture = 'allgather'");
    FAIL() << "stored an unknown architecture";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              db_ + ": CHECK constraint failed: architecture IN ('ring', 'mpi', 'ps', 'p2p')");
    EXPECT_EQ(e.extended_code(), SQLITE_CONSTRAINT_CHECK);
  }
}

TEST_F(StoreTest, SplitOfARunNeverChanges) {
  Store store(db_);
  store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'), MakeProvenance());
  try {
    store.Query("UPDATE runs SET split = 'calibration'");
    FAIL() << "changed a split";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": the split of a run never changes");
    EXPECT_EQ(e.extended_code(), SQLITE_CONSTRAINT_TRIGGER);
  }
}

TEST_F(StoreTest, AttemptWithoutRunEndCannotCompleteItsRun) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.AddEpoch(run, attempt, MakeEpoch(1));
  try {
    store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kFailed, {});
    FAIL() << "completed a run without run_end";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": attempt " + std::to_string(attempt) +
                                         " cannot complete its run: no run_end with status ok was stored");
  }
  // The transaction rolled back: the attempt and the run are untouched.
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "running");
  EXPECT_EQ(Text(store, "SELECT status FROM attempts"), "running");
}

TEST_F(StoreTest, CompleteRunGetsNoNewAttempt) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.RecordRunEnd(attempt, OkEnd());
  store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kFailed, {});
  try {
    store.BeginAttempt(run, 11);
    FAIL() << "began an attempt of a complete run";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": run " + std::to_string(run) + " is complete or does not exist");
  }
}

TEST_F(StoreTest, NestedBatchIsRefused) {
  Store store(db_);
  store.BeginBatch();
  try {
    store.BeginBatch();
    FAIL() << "opened a batch twice";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": a batch is already open");
  }
  store.CommitBatch();
}

TEST_F(StoreTest, DuplicateEpochOfAnAttemptIsRefused) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'k'),
                                        MakeProvenance());
  const std::int64_t attempt = store.BeginAttempt(run, 10);
  store.AddEpoch(run, attempt, MakeEpoch(1));
  try {
    store.AddEpoch(run, attempt, MakeEpoch(1));
    FAIL() << "stored an epoch twice";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": UNIQUE constraint failed: epochs.attempt_id, epochs.epoch");
    EXPECT_EQ(e.extended_code(), SQLITE_CONSTRAINT_PRIMARYKEY);
  }
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 2);
}

}  // namespace
}  // namespace dmlbench
