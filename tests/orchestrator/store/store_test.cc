// The results database on real SQLite files: migrations, the typed run and
// attempt life cycle, the constraints the schema enforces, and every error
// path with its whole message.
#include "orchestrator/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "orchestrator/store/gzip.h"
#include "orchestrator/store/migrations.h"
#include "common/sha256.h"

#include "tests/orchestrator/support/model_fixture.h"
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
  // Rank 0's 10 iterations: the first 0.095 s, the others 0.045 s.
  r.iteration_wall_s.assign(10, 0.045);
  r.iteration_wall_s[0] = 0.095;
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

// A pending run (key "k..."), and the attempt it began at time 10: the run
// is running. Returns the run id and the attempt id.
std::pair<std::int64_t, std::int64_t> RunWithAnAttempt(Store& store) {
  const std::int64_t run =
      store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'c'), MakeProvenance());
  return {run, store.BeginAttempt(run, 10)};
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
  for (const char* name : {"experiments", "runs", "attempts", "hosts", "epochs", "rank_phases", "iterations",
                           "run_summary", "failures", "complete_epochs", "run_tags", "run_overview",
                           "attempt_phases", "phase_totals"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST_F(StoreTest, ARunBelongsToEveryExperimentThatPlansIt) {
  Store store(db_);
  const PlannedRun ring = MakeRun();
  const PlannedRun mpi = MakeRun(Architecture::kMpi);
  const std::string ring_key(64, 'e');
  const std::string mpi_key(64, 'd');
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

TEST_F(StoreTest, ARunNamesEveryExperimentThatPlannedItTheFirstPlannerFirst) {
  Store store(db_);
  const PlannedRun ring = MakeRun();
  const PlannedRun mpi = MakeRun(Architecture::kMpi);
  const std::string ring_key(64, 'e');
  const std::string mpi_key(64, 'd');
  Experiment original = MakeExperiment("a");
  original.name = "original";
  Experiment copy = MakeExperiment("b");
  copy.name = "copy";
  Experiment original_edited = MakeExperiment("c");
  original_edited.name = "original";
  std::vector<std::int64_t> ids;
  store.AddExperimentRuns(original, {{&ring, ring_key, MakeProvenance()}}, 1, &ids);
  store.AddExperimentRuns(copy, {{&ring, ring_key, MakeProvenance()}, {&mpi, mpi_key, MakeProvenance()}}, 2, &ids);
  // The original plans the mpi run later, under two texts of one name.
  store.AddExperimentRuns(original, {{&ring, ring_key, MakeProvenance()}, {&mpi, mpi_key, MakeProvenance()}}, 3,
                          &ids);
  store.AddExperimentRuns(original_edited, {{&mpi, mpi_key, MakeProvenance()}}, 4, &ids);

  const auto found = store.FindRuns({ring_key, mpi_key});
  EXPECT_EQ(found.at(ring_key).experiments, (std::vector<std::string>{"original", "copy"}));
  EXPECT_EQ(found.at(mpi_key).experiments, (std::vector<std::string>{"copy", "original"}));
  const std::vector<RunRecord> runs = store.Runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].experiments, (std::vector<std::string>{"original", "copy"}));
  EXPECT_EQ(runs[1].experiments, (std::vector<std::string>{"copy", "original"}));
}

// A database as `version` left it (the migrations up to it), with one
// experiment (id 5, "old") and one run.
void WriteOldDatabase(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  char next[4];
  std::snprintf(next, sizeof next, "%03d", version + 1);
  for (const EmbeddedMigration& migration : EmbeddedMigrations()) {
    if (std::string(migration.file) >= next) break;
    ASSERT_EQ(sqlite3_exec(raw, migration.sql, nullptr, nullptr, nullptr), SQLITE_OK) << migration.file;
  }
  ASSERT_EQ(sqlite3_exec(raw, ("PRAGMA user_version = " + std::to_string(version) + ";" + R"(
    INSERT INTO experiments (experiment_id, name, source_path, matrix_text, matrix_sha256, first_used_unix_s)
      VALUES (5, 'old', 'old.toml', '', printf('%064d', 0), 1);
    INSERT INTO runs (run_key, experiment_id, architecture, workers, servers, ranks, batch_size, epochs, hidden,
      learning_rate, overlap, bucket_bytes, max_iterations_per_epoch, dataset, seed, repetition,
      canonical_params, split, trainer_sha256, dataset_sha256)
      VALUES (printf('%064d', 1), 5, 'ring', 1, 0, 1, 100, 1, '128,32', 0.05, 0, 65536, 0, 'synthetic', 1, 0,
              '{}', 'validation', 't', 'd'))").c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

// `sql` run on the database at `path` as it is, past the Store.
void ExecuteAsItIs(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

TEST_F(StoreTest, MigrationSevenGivesEveryOldRunItsExperiment) {
  WriteOldDatabase(db_, 6);
  {
    // Read as it is, without experiment_runs.
    const Store old(db_, Store::Mode::kReadOnly);
    ASSERT_EQ(old.Runs().size(), 1u);
    EXPECT_EQ(old.Runs()[0].experiments, std::vector<std::string>{"old"});
    EXPECT_EQ(old.FindRuns({std::string(63, '0') + "1"}).at(std::string(63, '0') + "1").experiments,
              std::vector<std::string>{"old"});
  }
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
  EXPECT_EQ(reader.open_note(), "");  // a read-only mount has no writer whose rows it could miss
}

// A database as version 7 left it, with a run: opened for writing it gains
// the iterations table (008) and each rank's CPU time column (009), both
// empty, and keeps its run.
TEST_F(StoreTest, AnOlderDatabaseGainsTheIterationsTableAndTheRanksCpuTimeEmpty) {
  WriteOldDatabase(db_, 7);
  {
    const Store old(db_, Store::Mode::kReadOnly);
    ASSERT_EQ(old.schema_version(), 7);
  }
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('rank_phases') WHERE name = 'cpu_s'"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('rank_phases') WHERE name IN "
                       "('quota_periods', 'throttled_periods', 'throttled_s')"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 1);
}

// A database as version 9 left it, with a run: read as it is, the run
// exchanged whole; opened for writing it gains runs.partition_bytes, 0 for
// the run it had, and run_summary tells runs apart by it.
TEST_F(StoreTest, AnOlderDatabasesRunsExchangedWholeAndKeepTheirKeys) {
  WriteOldDatabase(db_, 9);
  std::string key;
  {
    const Store old(db_, Store::Mode::kReadOnly);
    ASSERT_EQ(old.schema_version(), 9);
    ASSERT_EQ(old.Runs().size(), 1u);
    EXPECT_EQ(old.Runs()[0].params.partition_bytes, 0);
    key = old.Runs()[0].run_key;
  }
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Int(store, "SELECT partition_bytes FROM runs"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('run_summary') WHERE name = 'partition_bytes'"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('run_overview') WHERE name = 'partition_bytes'"), 1);
  EXPECT_EQ(store.Runs()[0].run_key, key);
}

// A database as version 11 left it, with a prediction: opened for writing
// it gains the predictions' CPU account (012), empty in the row it had; a
// new prediction stores its account, and nothing but the three limits.
TEST_F(StoreTest, AnOlderDatabasesPredictionsGainAnEmptyCpuAccount) {
  WriteOldDatabase(db_, 11);
  ExecuteAsItIs(db_, R"(
    INSERT INTO model_fits (fit_id, model, model_version, created_unix_s, code_commit, points)
      VALUES (3, 'corrected', 16, 1, 'old', 1);
    INSERT INTO predictions (fit_id, run_id, split, iterations_per_epoch, predicted_iteration_s,
      predicted_epoch_s, compute_s, update_s, comm_s, measured_epoch_s, relative_error)
      VALUES (3, 1, 'validation', 10, 0.1, 1.0, 0.05, 0, 0.05, 1.1, -0.09))");
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Int(store, "SELECT count(*) FROM predictions WHERE predicted_worker_cpu_s IS NULL AND "
                       "predicted_server_cpu_s IS NULL AND limited_by IS NULL AND measured_worker_cpu_s IS NULL "
                       "AND measured_server_cpu_s IS NULL"),
            1);
  PredictionRow row;
  row.fit_id = 3;
  row.run_id = 1;
  row.split = "validation";
  row.iterations_per_epoch = 10;
  row.predicted_worker_cpu_s = 0.002;
  row.limited_by = "worker CPU";
  row.measured_worker_cpu_s = 0.0025;
  store.AddPredictions({row});  // replaces the old row: one per fit and run
  EXPECT_EQ(Text(store, "SELECT limited_by || ' ' || predicted_worker_cpu_s || ' ' || measured_worker_cpu_s || ' ' "
                        "|| ifnull(predicted_server_cpu_s, 'none') FROM predictions"),
            "worker CPU 0.002 0.0025 none");
  row.limited_by = "the weather";
  EXPECT_THROW(store.AddPredictions({row}), StoreError);
  EXPECT_EQ(Text(store, "SELECT limited_by FROM predictions"), "worker CPU");
}

// A database as version 12 left it: its run's server sent at once; opened
// for writing it gains runs.pulls_in_turn, 0, run_summary tells runs apart
// by it, and the schema refuses it where the trainer would.
TEST_F(StoreTest, AnOlderDatabasesServersSentAtOnceAndOnlyOneServerTakesTurns) {
  WriteOldDatabase(db_, 12);
  {
    const Store old(db_, Store::Mode::kReadOnly);
    ASSERT_EQ(old.Runs().size(), 1u);
    EXPECT_FALSE(old.Runs()[0].params.pulls_in_turn);
  }
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Int(store, "SELECT pulls_in_turn FROM runs"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('run_summary') WHERE name = 'pulls_in_turn'"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM pragma_table_info('run_overview') WHERE name = 'pulls_in_turn'"), 1);
  EXPECT_THROW(store.ExecuteScript("UPDATE runs SET pulls_in_turn = 1"), StoreError);  // a ring run

  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  PlannedRun run = MakeRun(Architecture::kPs, 4);
  run.params.servers = 1;
  run.params.pulls_in_turn = true;
  const std::int64_t id = store.AddRun(experiment, run, std::string(64, 'c'), MakeProvenance());
  EXPECT_TRUE(store.Runs().back().params.pulls_in_turn);
  EXPECT_THROW(store.ExecuteScript("UPDATE runs SET servers = 2, ranks = 6 WHERE run_id = " + std::to_string(id)),
               StoreError);
}

TEST_F(StoreTest, AnOlderDatabaseGainsAnEmptyPhaseTableAndItsView) {
  WriteOldDatabase(db_, 13);
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM phase_totals"), 0);
}

// A database as version 16 left it, with a fit's parameter: opened for
// writing (017) it keeps the row as it was, and a parameter may then be
// stored as measured beside the fitted ones; a source the schema does not
// know is refused, and the fit is not stored.
TEST_F(StoreTest, AnOlderDatabasesParametersStayAndANewFitMayHoldMeasuredOnes) {
  WriteOldDatabase(db_, 16);
  ExecuteAsItIs(db_, R"(
    INSERT INTO model_fits (fit_id, model, model_version, created_unix_s, code_commit, points)
      VALUES (3, 'counts', 1, 1, 'old', 1);
    INSERT INTO model_parameters (fit_id, name, value, ci_low, ci_high, unit, source)
      VALUES (3, 'cpu_overhead_s', 5e-5, 4e-5, 6e-5, 's', 'fitted'))");
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Text(store, "SELECT name || ' ' || value || ' ' || ci_low || ' ' || ci_high || ' ' || source "
                        "FROM model_parameters WHERE fit_id = 3"),
            "cpu_overhead_s 5.0e-05 4.0e-05 6.0e-05 fitted");
  ModelFitRecord fit;
  fit.model = "counts";
  fit.parameters = {{"cpu_overhead_s", 5e-5, 4e-5, 6e-5, "s", "measured", ""},
                    {"cpu_per_wait_s", 1e-5, 0.5e-5, 1.5e-5, "s/wait", "fitted", ""}};
  const std::int64_t id = store.AddModelFit(fit);
  const std::optional<ModelFitRecord> stored = store.ModelFitById(id);
  ASSERT_TRUE(stored);
  ASSERT_EQ(stored->parameters.size(), 2u);
  EXPECT_EQ(stored->parameters[0].source + " " + stored->parameters[1].source, "measured fitted");
  fit.parameters[0].source = "guessed";
  EXPECT_THROW(store.AddModelFit(fit), StoreError);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM model_fits"), 2);
}

// A database as version 17 left it, with a fit's interval: read as it is,
// and opened for writing, the row serves every prediction (beyond_workers
// 0); a new fit stores its row beyond the calibration's workers beside the
// others and reads it back, and a second row of one scope and count is
// refused.
TEST_F(StoreTest, AnOlderDatabasesIntervalsServeEveryPredictionAndANewFitKeepsItsRowBeyondTheWorkers) {
  WriteOldDatabase(db_, 17);
  ExecuteAsItIs(db_, R"(
    INSERT INTO model_fits (fit_id, model, model_version, created_unix_s, code_commit, points)
      VALUES (3, 'counts', 1, 1, 'old', 40);
    INSERT INTO model_intervals (fit_id, scope, level, log_half_width, configurations)
      VALUES (3, '', 0.9, 0.1, 40))");
  {
    const Store old(db_, Store::Mode::kReadOnly);
    const std::optional<ModelFitRecord> fit = old.ModelFitById(3);
    ASSERT_TRUE(fit);
    ASSERT_EQ(fit->intervals.size(), 1u);
    EXPECT_EQ(fit->intervals[0].beyond_workers, 0);
    EXPECT_EQ(fit->intervals[0].configurations, 40);
  }
  Store store(db_);
  EXPECT_EQ(store.schema_version(), Store::KnownSchemaVersion());
  EXPECT_EQ(Text(store, "SELECT scope || ':' || beyond_workers || ':' || log_half_width FROM model_intervals"),
            ":0:0.1");
  ModelFitRecord fit;
  fit.model = "counts";
  fit.intervals = {{"", 0.9, 0.1, 40}, {"ring", 0.9, 0.2, 6}, {"", 0.9, 0.3, 12, 4}};
  const std::int64_t id = store.AddModelFit(fit);
  const std::optional<ModelFitRecord> stored = store.ModelFitById(id);
  ASSERT_TRUE(stored);
  ASSERT_EQ(stored->intervals.size(), 3u);
  EXPECT_EQ(stored->intervals[0].scope + "/" + stored->intervals[1].scope, "/ring");
  EXPECT_EQ(stored->intervals[0].beyond_workers + stored->intervals[1].beyond_workers, 0);
  EXPECT_EQ(stored->intervals[2].beyond_workers, 4);
  EXPECT_EQ(stored->intervals[2].configurations, 12);
  EXPECT_DOUBLE_EQ(stored->intervals[2].log_half_width, 0.3);
  fit.intervals.push_back({"", 0.9, 0.5, 12, 4});
  EXPECT_THROW(store.AddModelFit(fit), StoreError);
}

TEST_F(StoreTest, AttemptPhasesAreKeptSummedPerExperimentAndGoWithTheirAttempt) {
  Store store(db_);
  const auto [run, attempt] = RunWithAnAttempt(store);
  store.AddAttemptPhases(attempt, {{"launch", 0.5}, {"steady_epochs", 1.0}, {"ingest", 0.5}});
  const std::vector<PhaseTime> phases = store.AttemptPhases(attempt);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].phase, "ingest");
  EXPECT_EQ(phases[2].phase, "steady_epochs");
  EXPECT_EQ(phases[2].seconds, 1.0);
  store.FinishAttempt(run, attempt, Outcome("failed", "x"), RunDisposition::kRetry, {});
  const std::int64_t second = store.BeginAttempt(run, 30);
  store.AddAttemptPhases(second, {{"launch", 1.0}, {"steady_epochs", 1.0}});
  EXPECT_EQ(Text(store, "SELECT experiment || ' ' || phase || ' ' || attempts || ' ' || seconds || ' ' || share "
                        "FROM phase_totals WHERE phase = 'steady_epochs'"),
            "unit steady_epochs 2 2.0 0.5");
  // Each phase once per attempt; a phase the table does not know, and
  // negative time, are refused.
  EXPECT_THROW(store.AddAttemptPhases(second, {{"launch", 1.0}}), StoreError);
  EXPECT_THROW(store.AddAttemptPhases(second, {{"coffee", 1.0}}), StoreError);
  EXPECT_THROW(store.AddAttemptPhases(second, {{"ingest", -1.0}}), StoreError);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases"), 5);
  store.Forget(store.Runs(), "all", 40);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases"), 0);
}

// An epoch from a trainer that did not report its iterations stores none.
TEST_F(StoreTest, AnEpochWithoutIterationTimesStoresNone) {
  Store store(db_);
  const auto [run, attempt] = RunWithAnAttempt(store);
  EpochRecord epoch = MakeEpoch(1);
  epoch.iteration_wall_s.clear();
  store.AddEpoch(run, attempt, epoch);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 0);
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
  const std::string key(64, 'c');
  const std::int64_t run = store.AddRun(experiment, MakeRun(), key, MakeProvenance());
  EXPECT_EQ(store.AddRun(experiment, MakeRun(), key, MakeProvenance()), run);
  EXPECT_EQ(store.FindRuns({key}).at(key).status, RunState::kPending);
  EXPECT_TRUE(store.FindRuns({std::string(64, 'f')}).empty());

  const std::int64_t attempt = store.BeginAttempt(run, 10);
  EXPECT_EQ(store.FindRuns({key}).at(key).status, RunState::kRunning);
  RunStartRecord start;
  start.mpi_library_version = "Open MPI v4.1.4";
  start.world_size = 2;
  store.RecordRunStart(attempt, start);
  EpochRecord warmup = MakeEpoch(1);  // a short warm-up, which the summary's means leave out
  warmup.wall_s = 0.1;
  warmup.throughput_samples_per_s = 1000;
  store.AddEpoch(run, attempt, warmup);
  store.AddEpoch(run, attempt, MakeEpoch(2));
  store.RecordRunEnd(attempt, OkEnd());
  store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kFailed, {});

  const RunRecord stored = store.FindRuns({key}).at(key);
  EXPECT_EQ(stored.status, RunState::kComplete);
  EXPECT_EQ(stored.attempts, 1);
  EXPECT_EQ(Text(store, "SELECT parameter_checksum FROM runs"), "feed");
  EXPECT_EQ(Text(store, "SELECT mpi_library_version FROM runs"), "Open MPI v4.1.4");
  EXPECT_EQ(Text(store, "SELECT git_commit FROM runs"), std::string(40, 'g'));
  EXPECT_EQ(Int(store, "SELECT stderr_tail IS NULL FROM runs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 20);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations i JOIN complete_epochs e USING (attempt_id, epoch) "
                       "WHERE i.iteration BETWEEN 1 AND 10"),
            20);
  EXPECT_EQ(Text(store, "SELECT group_concat(wall_s) FROM (SELECT wall_s FROM iterations WHERE epoch = 2 "
                        "ORDER BY iteration LIMIT 3)"),
            "0.095,0.045,0.045");
  EXPECT_EQ(Int(store, "SELECT runs FROM run_summary"), 1);
  const auto measures = store.CompleteRunMeasures(run);
  ASSERT_TRUE(measures.has_value());
  EXPECT_EQ(measures->epochs, 2);
  EXPECT_DOUBLE_EQ(measures->epoch_s_mean, 0.5);
  EXPECT_DOUBLE_EQ(measures->throughput_mean, 4000);
  EXPECT_FALSE(measures->final_test_accuracy.has_value());
}

// warmup_iterations and evaluate live in canonical_params alone, named
// there only when not their defaults, and come back with the run.
TEST_F(StoreTest, AShortWarmupAndNoEvaluationComeBackFromTheCanonicalParameters) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  PlannedRun run = MakeRun();
  run.params.epochs = 2;
  run.params.warmup_iterations = 10;
  run.params.evaluate = false;
  store.AddRun(experiment, run, std::string(64, '8'), MakeProvenance());
  store.AddRun(experiment, MakeRun(), std::string(64, '9'), MakeProvenance());
  const auto runs = store.FindRuns({std::string(64, '8'), std::string(64, '9')});
  EXPECT_EQ(runs.at(std::string(64, '8')).params.warmup_iterations, 10);
  EXPECT_FALSE(runs.at(std::string(64, '8')).params.evaluate);
  EXPECT_EQ(CanonicalJson(runs.at(std::string(64, '8')).params), CanonicalJson(run.params));
  EXPECT_EQ(runs.at(std::string(64, '9')).params.warmup_iterations, 0);
  EXPECT_TRUE(runs.at(std::string(64, '9')).params.evaluate);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE canonical_params LIKE '%warmup%'"), 1);
}

TEST_F(StoreTest, NewAttemptDropsThePartialEpochsOfTheLastOne) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'c'),
                                        MakeProvenance());
  const std::int64_t first = store.BeginAttempt(run, 10);
  store.AddEpoch(run, first, MakeEpoch(1));
  store.FinishAttempt(run, first, Outcome("failed", "mpirun exited with status 1"), RunDisposition::kRetry, {});
  EXPECT_EQ(store.FindRuns({std::string(64, 'c')}).begin()->second.status, RunState::kRunning);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 10);
  const std::int64_t second = store.BeginAttempt(run, 11);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 0);
  store.AddEpoch(run, second, MakeEpoch(1));
  store.RecordRunEnd(second, OkEnd());
  store.FinishAttempt(run, second, Outcome("ok"), RunDisposition::kFailed, {});
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 10);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations WHERE attempt_id = " + std::to_string(second)), 10);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts WHERE number = 1"), "mpirun exited with status 1");
  EXPECT_EQ(Text(store, "SELECT stderr_tail FROM attempts WHERE number = 1"), "tail of stderr");
}

TEST_F(StoreTest, FailedRunAppearsInFailuresWithItsReason) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(Architecture::kP2p),
                                        std::string(64, 'c'), MakeProvenance());
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

TEST_F(StoreTest, ARunFoundByItsKeyIsTheRunAmongAllRuns) {
  Store store(db_);
  const std::string key(64, 'c');
  const std::int64_t run =
      store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(Architecture::kPs, 3), key, MakeProvenance());
  store.TagRun(run, {"nightly"}, 2);
  store.FinishAttempt(run, store.BeginAttempt(run, 10), Outcome("timed_out", "timed out after 5 s"),
                      RunDisposition::kRetry, {});
  AttemptOutcome lost = Outcome("failed", "mpirun exited with status 255; lost host 'b'");
  lost.host_failure = true;
  store.FinishAttempt(run, store.BeginAttempt(run, 15), lost, RunDisposition::kRetry, {});
  store.FinishAttempt(run, store.BeginAttempt(run, 20), Outcome("interrupted", "interrupted"),
                      RunDisposition::kInterrupted, {});
  const RunRecord found = store.FindRuns({key}).at(key);
  const RunRecord listed = store.Runs().at(0);
  for (const RunRecord& r : {found, listed}) {
    EXPECT_EQ(r.run_id, run);
    EXPECT_EQ(r.run_key, key);
    EXPECT_EQ(r.params.architecture, Architecture::kPs);
    EXPECT_EQ(r.params.workers, 3);
    EXPECT_EQ(r.split, "validation");
    EXPECT_EQ(r.status, RunState::kInterrupted);
    EXPECT_EQ(r.attempts, 3);
    EXPECT_EQ(r.failures, 1);  // neither the lost host nor the interruption is the run's doing
    EXPECT_EQ(r.failure_reason, "interrupted");
    EXPECT_EQ(r.tags, std::vector<std::string>{"nightly"});
    EXPECT_EQ(r.experiments, std::vector<std::string>{"unit"});
    EXPECT_EQ(r.trainer_sha256, std::string(64, 't'));
  }
}

TEST_F(StoreTest, RecoverInterruptedMarksRunningRunsAndAttempts) {
  Store store(db_);
  const auto [run, attempt] = RunWithAnAttempt(store);
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
  const auto [run, attempt] = RunWithAnAttempt(store);
  store.FinishAttempt(run, attempt, Outcome("failed", "x"), RunDisposition::kFailed, {h});
  EXPECT_EQ(Int(store, "SELECT host_id FROM attempt_hosts"), h);
  EXPECT_EQ(Text(store, "SELECT hosts FROM attempts"), "local");
}

TEST_F(StoreTest, RunsRebuildTheParametersFromTheirColumns) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  PlannedRun run = MakeRun(Architecture::kPs, 4);
  RunParams& p = run.params;
  p.servers = 2;
  p.batch_size = 50;
  p.epochs = 3;
  p.hidden = {256, 64, 8};
  p.learning_rate = 0.025;
  p.overlap = true;
  p.bucket_bytes = 65536;
  p.partition_bytes = 8192;
  p.max_iterations_per_epoch = 7;
  p.seed = 12;
  p.repetition = 11;
  p.network = {"slow", 1e8, 5e-5};
  const std::int64_t id = store.AddRun(experiment, run, std::string(64, 'b'), MakeProvenance());
  store.AddRun(experiment, MakeRun(), std::string(64, 'a'), MakeProvenance());
  store.TagRun(id, {"x", "a"}, 2);

  const std::vector<RunRecord> runs = store.Runs();
  ASSERT_EQ(runs.size(), 2u);
  const RunRecord& r = runs[0];
  EXPECT_EQ(r.run_id, id);
  EXPECT_EQ(r.run_key, std::string(64, 'b'));
  EXPECT_EQ(CanonicalJson(r.params), CanonicalJson(p));
  EXPECT_EQ(r.params.partition_bytes, 8192);
  EXPECT_EQ(r.params.repetition, 11);
  EXPECT_EQ(r.params.network.name, "slow");
  EXPECT_EQ(r.split, "validation");
  EXPECT_EQ(r.status, RunState::kPending);
  EXPECT_EQ(r.attempts, 0);
  EXPECT_EQ(r.tags, (std::vector<std::string>{"a", "x"}));
  EXPECT_EQ(r.experiments, std::vector<std::string>{"unit"});
  EXPECT_EQ(r.trainer_sha256, std::string(64, 't'));
  EXPECT_TRUE(runs[1].tags.empty());
}

TEST_F(StoreTest, TagsAreKeptOnceWithTheTimeTheyWereFirstGiven) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  const std::int64_t id = store.AddRun(experiment, MakeRun(), std::string(64, 'a'), MakeProvenance());
  store.TagRun(id, {"nightly"}, 5);
  store.TagRun(id, {"nightly", "baseline"}, 9);
  EXPECT_EQ(Text(store, "SELECT tags FROM run_overview"), "baseline,nightly");
  EXPECT_EQ(Int(store, "SELECT tagged_unix_s = 5 FROM run_tags WHERE tag = 'nightly'"), 1);
  const auto found = store.FindRuns({std::string(64, 'a')});
  EXPECT_EQ(found.at(std::string(64, 'a')).tags, (std::vector<std::string>{"baseline", "nightly"}));
  EXPECT_EQ(found.at(std::string(64, 'a')).experiments, std::vector<std::string>{"unit"});
}

// `dmlbench tag` and `untag`: the count of those that had the tag, one
// transaction each, and the time a run was first given a tag kept.
TEST_F(StoreTest, TagRunsAndUntagRunsCountTheRunsThatHadTheTag) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  const std::int64_t a = store.AddRun(experiment, MakeRun(), std::string(64, 'a'), MakeProvenance());
  const std::int64_t b = store.AddRun(experiment, MakeRun(Architecture::kMpi), std::string(64, 'b'), MakeProvenance());
  store.TagRun(a, {"baseline"}, 5);
  EXPECT_EQ(store.TagRuns({a, b}, "baseline", 9), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_tags WHERE tag = 'baseline' AND tagged_unix_s = 5"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_tags WHERE tag = 'baseline' AND tagged_unix_s = 9"), 1);
  EXPECT_EQ(store.TagRuns({a, b}, "baseline", 12), 2);
  EXPECT_EQ(store.UntagRuns({b}, "baseline"), 1);
  EXPECT_EQ(store.UntagRuns({a, b}, "baseline"), 1);
  EXPECT_EQ(store.UntagRuns({a, b}, "baseline"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_tags"), 0);
  EXPECT_EQ(store.TagRuns({}, "baseline", 13), 0);
}

TEST_F(StoreTest, KeptLogsAreCompressedBesideTheDatabaseAndListedWithTheirAttempt) {
  Store store(db_);
  const std::int64_t run = store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'a'),
                                        MakeProvenance());
  store.FinishAttempt(run, store.BeginAttempt(run, 10), Outcome("failed", "boom"), RunDisposition::kRetry, {});
  const std::int64_t second = store.BeginAttempt(run, 11);
  testing::WriteFile(dir_ / "out0", "event lines\n");
  testing::WriteFile(dir_ / "err1", "");
  testing::WriteFile(dir_ / "mpirun", "mpirun noticed\n");
  store.KeepAttemptLogs(second, {{std::nullopt, "stderr", dir_ / "mpirun", 0},
                                 {1, "stderr", dir_ / "err1", 0},
                                 {0, "stdout", dir_ / "out0", 0}});

  EXPECT_EQ(store.logs_dir(), db_ + ".logs");
  const std::string dir = std::string(64, 'a') + "/attempt-2";
  EXPECT_EQ(Text(store, "SELECT log_dir FROM attempts WHERE number = 2"), dir);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE number = 1 AND log_dir IS NULL"), 1);
  const std::vector<AttemptLog> logs = store.AttemptLogs(second);
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0].rank, 0);
  EXPECT_EQ(logs[0].stream, "stdout");
  EXPECT_EQ(logs[0].file, dir + "/rank-0.stdout.gz");
  EXPECT_EQ(logs[0].bytes, 12);
  EXPECT_EQ(logs[1].file, dir + "/rank-1.stderr.gz");
  EXPECT_EQ(logs[1].bytes, 0);
  EXPECT_FALSE(logs[2].rank.has_value());
  EXPECT_EQ(logs[2].file, dir + "/mpirun.stderr.gz");
  EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + logs[0].file), "event lines\n");
  EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + logs[2].file), "mpirun noticed\n");
  EXPECT_EQ(Int(store, "SELECT stored_bytes > 0 FROM attempt_logs WHERE rank = 0"), 1);

  const std::vector<AttemptRecord> attempts = store.Attempts(run);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].number, 1);
  EXPECT_EQ(attempts[0].status, AttemptState::kFailed);
  EXPECT_EQ(attempts[0].reason, "boom");
  EXPECT_EQ(attempts[0].log_dir, "");
  EXPECT_EQ(attempts[1].attempt_id, second);
  EXPECT_EQ(attempts[1].status, AttemptState::kRunning);
  EXPECT_EQ(attempts[1].log_dir, dir);
  EXPECT_TRUE(store.AttemptLogs(attempts[0].attempt_id).empty());
}

TEST_F(StoreTest, ForgetRemovesRunsWithEverythingTheyHoldAndRecordsThem) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  HostFacts host;
  host.name = "local";
  host.cpu_model = "cpu";
  host.kernel = "Linux";
  host.mpi_version = "4.1";
  host.provider = "local";
  const std::int64_t host_id = store.AddHost(host, 1);
  // Two runs with the same history: one failed attempt, then a complete one
  // with two epochs, logs and tags.
  for (const std::string& key : {std::string(64, 'a'), std::string(64, 'b')}) {
    const std::int64_t run = store.AddRun(experiment, MakeRun(Architecture::kRing, key == std::string(64, 'a') ? 2 : 4),
                                          key, MakeProvenance());
    store.FinishAttempt(run, store.BeginAttempt(run, 1), Outcome("failed", "x"), RunDisposition::kRetry, {host_id});
    const std::int64_t attempt = store.BeginAttempt(run, 2);
    store.AddEpoch(run, attempt, MakeEpoch(1));
    store.AddEpoch(run, attempt, MakeEpoch(2));
    store.RecordRunEnd(attempt, OkEnd());
    testing::WriteFile(dir_ / "out", "hello\n");
    store.KeepAttemptLogs(attempt, {{0, "stdout", dir_ / "out", 0}});
    store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kRetry, {host_id});
    store.TagRun(run, {"t1", "t2"}, 3);
  }
  std::vector<RunRecord> runs = store.Runs();
  runs.erase(runs.begin() + 1);  // forget the first
  EXPECT_EQ(store.Contents({runs[0].run_id}).attempts, 2);
  EXPECT_EQ(store.Contents({runs[0].run_id}).epochs, 2);
  EXPECT_EQ(store.Contents({runs[0].run_id}).log_files, 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 2 * 2 * 10);

  store.Forget(runs, "workers=2", 50);
  EXPECT_EQ(Text(store, "PRAGMA integrity_check"), "ok");
  EXPECT_TRUE(store.Query("PRAGMA foreign_key_check").rows.empty());
  EXPECT_EQ(Text(store, "SELECT group_concat(run_key) FROM runs"), std::string(64, 'b'));
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 4);
  // The forgotten run's iteration times went with its epochs.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 2 * 10);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations WHERE attempt_id NOT IN (SELECT attempt_id FROM epochs)"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_hosts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_tags"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_logs"), 1);
  EXPECT_FALSE(std::filesystem::exists(store.logs_dir() + "/" + std::string(64, 'a')));
  EXPECT_TRUE(std::filesystem::exists(store.logs_dir() + "/" + std::string(64, 'b')));
  // The hosts and the experiment stay; the audit row says what went.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM hosts"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiments"), 1);
  EXPECT_EQ(Text(store, "SELECT run_key || ' ' || experiment || ' ' || architecture || ' ' || workers || ' ' || "
                        "status || ' ' || attempts || ' ' || tags || ' ' || filter || ' ' || "
                        "(forgotten_unix_s = 50) FROM forgotten_runs"),
            std::string(64, 'a') + " unit ring 2 complete 2 t1,t2 workers=2 1");
  EXPECT_EQ(Text(store, "SELECT canonical_params FROM forgotten_runs"), CanonicalJson(runs[0].params));
  // The key can be run again from scratch.
  const std::int64_t again = store.AddRun(experiment, MakeRun(), std::string(64, 'a'), MakeProvenance());
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE run_id = " + std::to_string(again)), 0);
}

TEST_F(StoreTest, ForgetKeepsTheRunsOfAModelFitAndDropsPredictions) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  PlannedRun calibration = MakeRun(Architecture::kRing, 2);
  calibration.split = "calibration";
  const std::int64_t fitted = store.AddRun(experiment, calibration, std::string(64, 'a'), MakeProvenance());
  const std::int64_t predicted =
      store.AddRun(experiment, MakeRun(Architecture::kRing, 4), std::string(64, 'b'), MakeProvenance());
  ModelFitRecord fit;
  fit.model = "corrected";
  fit.code_commit = "test";
  fit.runs.push_back({fitted, 1, 1.25});
  fit.fit_id = store.AddModelFit(fit);
  // The latest fit comes back with the runs it used.
  const std::optional<ModelFitRecord> latest = store.LatestModelFit("corrected");
  ASSERT_TRUE(latest.has_value());
  ASSERT_EQ(latest->runs.size(), 1u);
  EXPECT_EQ(latest->runs[0].run_id, fitted);
  EXPECT_EQ(latest->runs[0].fitted_iteration_s, 1.25);
  PredictionRow prediction;
  prediction.fit_id = fit.fit_id;
  prediction.run_id = predicted;
  prediction.split = "validation";
  prediction.iterations_per_epoch = 1;
  store.AddPredictions({prediction});

  const std::vector<RunRecord> runs = store.Runs();
  EXPECT_EQ(store.Contents({fitted, predicted}).fit_ids, std::vector<std::int64_t>{fit.fit_id});
  EXPECT_EQ(store.Contents({predicted}).predictions, 1);
  try {
    store.Forget(runs, "all", 5);
    FAIL() << "forgot a run a model fit used";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": run " + std::string(12, 'a') + " is not forgotten: model fit " +
                                         std::to_string(fit.fit_id) + " used it");
  }
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM forgotten_runs"), 0);

  store.Forget({runs[1]}, "workers=4", 5);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM predictions"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM model_fit_runs"), 1);
  EXPECT_TRUE(store.Query("PRAGMA foreign_key_check").rows.empty());
}

TEST_F(StoreTest, SteadyEpochsLeaveOutWarmUpAndIncompleteRuns) {
  Store store(db_);
  const std::int64_t experiment = store.AddExperiment(MakeExperiment(), 1);
  // Three epochs, one epoch, and a run that never completed.
  std::vector<std::int64_t> runs;
  for (int epochs : {3, 1, 2}) {
    const std::string key(64, static_cast<char>('a' + runs.size()));
    const std::int64_t run = store.AddRun(experiment, MakeRun(), key, MakeProvenance());
    const std::int64_t attempt = store.BeginAttempt(run, 1);
    for (int e = 1; e <= epochs; ++e) {
      EpochRecord epoch = MakeEpoch(e);
      epoch.wall_s = 10 * epochs + e;
      store.AddEpoch(run, attempt, epoch);
    }
    if (epochs != 2) {
      store.RecordRunEnd(attempt, OkEnd());
      store.FinishAttempt(run, attempt, Outcome("ok"), RunDisposition::kRetry, {});
    }
    runs.push_back(run);
  }
  const std::vector<SteadyEpoch> steady = store.SteadyEpochs();
  ASSERT_EQ(steady.size(), 3u);
  EXPECT_EQ(steady[0].run_id, runs[0]);
  EXPECT_EQ(steady[0].epoch, 2);
  EXPECT_EQ(steady[0].wall_s, 32);
  EXPECT_FALSE(steady[0].warmup_included);
  EXPECT_EQ(steady[1].epoch, 3);
  EXPECT_EQ(steady[2].run_id, runs[1]);
  EXPECT_EQ(steady[2].wall_s, 11);
  EXPECT_TRUE(steady[2].warmup_included);
}

// What the performance model reads: the complete runs with their run_start
// facts and hosts' CPU share, of the experiments asked for; the busiest
// rank's CPU per iteration of each steady epoch; the latest calibration
// probe of each profile.
TEST_F(StoreTest, TheModelsReadsAreTypedRowsOfCompleteRunsEpochsAndLatestProbes) {
  Store store(db_);
  testing::ModelDatabase db(store, /*cpu_cores=*/0.5);
  RunParams ring;
  ring.workers = 2;
  ring.network = {"1gbit", 1e9, 0};
  RunParams ps = ring;
  ps.architecture = Architecture::kPs;
  ps.servers = 1;
  const std::int64_t ring_id = db.AddRun(ring, "calibration", {3, 2, 2}, 104938, 40, 0.01, 0.02);
  const std::int64_t ps_id = db.AddRun(ps, "validation", {3, 2}, 104938, 40, 0.01, 0.02, 0.04);

  const std::vector<CompleteRun> runs = store.CompleteRuns({});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, ring_id);
  EXPECT_EQ(runs[0].split, "calibration");
  EXPECT_EQ(runs[0].experiment, "model-test");
  EXPECT_EQ(runs[0].params.workers, 2);
  EXPECT_EQ(runs[0].params.network.bandwidth_bits_per_s, 1e9);
  EXPECT_EQ(runs[0].parameters, 104938);
  EXPECT_EQ(runs[0].iterations_per_epoch, 40);
  EXPECT_EQ(runs[0].train_samples, 60000);
  EXPECT_EQ(runs[0].cpu_cores, 0.5);
  EXPECT_EQ(runs[1].run_id, ps_id);
  EXPECT_EQ(runs[1].params.architecture, Architecture::kPs);
  EXPECT_EQ(store.CompleteRuns({"model-test", "other"}).size(), 2u);
  EXPECT_TRUE(store.CompleteRuns({"other"}).empty());

  const std::vector<SteadyEpoch> epochs = store.SteadyEpochs();
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_EQ(epochs[0].iterations, 40);
  EXPECT_DOUBLE_EQ(epochs[0].forward_mean_s, 0.01 * 40 / 3);
  EXPECT_DOUBLE_EQ(epochs[0].backward_mean_s, 2 * 0.01 * 40 / 3);

  const std::vector<BusiestCpu> cpu = store.BusiestCpuPerIteration();
  ASSERT_EQ(cpu.size(), 4u);  // ring's two steady epochs (a worker); ps's one (a worker and a server)
  EXPECT_EQ(cpu[0].run_id, ring_id);
  EXPECT_EQ(cpu[0].epoch, 2);
  EXPECT_EQ(cpu[0].role, "worker");
  EXPECT_DOUBLE_EQ(cpu[0].cpu_s_per_iteration, 0.02);
  for (const BusiestCpu& rank : {cpu[2], cpu[3]}) {
    EXPECT_EQ(rank.run_id, ps_id);
    EXPECT_DOUBLE_EQ(rank.cpu_s_per_iteration, rank.role == "server" ? 0.04 : 0.02) << rank.role;
  }

  db.AddProbe(1e9, 1e-4, 1.1e8, /*time_unix_s=*/10);
  db.AddProbe(1e9, 2e-4, 1.2e8, /*time_unix_s=*/20);
  db.AddProbe(1e8, 3e-4, 1.2e7, /*time_unix_s=*/5);
  const std::vector<LinkProbeRow> probes = store.LatestCalibrationProbes();
  ASSERT_EQ(probes.size(), 6u);  // three message sizes of each profile's latest probe
  EXPECT_EQ(probes[0].bandwidth_bits_per_s, 1e8);
  EXPECT_EQ(probes[3].bandwidth_bits_per_s, 1e9);
  EXPECT_EQ(probes[3].alpha_s, 2e-4);
  EXPECT_EQ(probes[3].time_unix_s, 20);
  EXPECT_LT(probes[3].link_probe_id, probes[4].link_probe_id);
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
  const auto [run, attempt] = RunWithAnAttempt(store);
  Store::Batch batch(store);
  EXPECT_TRUE(store.batch_open());
  store.AddEpoch(run, attempt, MakeEpoch(1));
  store.AddEpoch(run, attempt, MakeEpoch(2));
  Store reader(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM epochs"), 0);
  batch.Commit();
  EXPECT_FALSE(store.batch_open());
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM epochs"), 2);
}

TEST_F(StoreTest, ABatchThatIsNotCommittedIsRolledBackWhenItGoes) {
  Store store(db_);
  const auto [run, attempt] = RunWithAnAttempt(store);
  store.AddEpoch(run, attempt, MakeEpoch(1));
  try {
    Store::Batch batch(store);
    store.AddEpoch(run, attempt, MakeEpoch(2));
    store.RecordRunEnd(attempt, OkEnd());
    EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
    throw std::runtime_error("cut short");
  } catch (const std::runtime_error&) {
  }
  // The batch rolled back as the stack unwound; what was committed before it stays.
  EXPECT_FALSE(store.batch_open());
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE trainer_status IS NULL"), 1);
  // A new batch can begin.
  Store::Batch next(store);
  store.AddEpoch(run, attempt, MakeEpoch(2));
  next.Commit();
  EXPECT_EQ(Int(Store(db_, Store::Mode::kReadOnly), "SELECT count(*) FROM epochs"), 2);
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
    EXPECT_EQ(std::string(e.what()), db_ + ": the database is open read-only, and this statement would write (to "
                                           "it, or as VACUUM INTO to a file of its own): DELETE FROM runs");
    EXPECT_EQ(e.extended_code(), -1);
  }
  try {
    store.ExecuteScript("DELETE FROM runs");
    FAIL() << "wrote through a read-only store";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": attempt to write a readonly database");
    EXPECT_EQ(e.extended_code(), SQLITE_READONLY);
  }
}

TEST_F(StoreTest, ReadOnlyQueryWritesNoFileOfItsOwn) {
  { Store store(db_); }
  for (const Store::Mode mode : {Store::Mode::kReadOnly, Store::Mode::kReadOnlyScratch}) {
    Store store(db_, mode);
    EXPECT_THROW(store.Query("VACUUM INTO '" + (dir_ / "copy.db") + "'"), StoreError);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "copy.db"));
  }
}

// The logs directory sits beside the database's real file, whatever name
// it is opened by; a file of two names keeps none.
TEST_F(StoreTest, TheLogsDirectoryIsBesideTheRealFile) {
  { Store store(db_); }
  std::filesystem::create_directories(dir_ / "links");
  std::filesystem::create_symlink(db_, dir_ / "links/link.db");
  EXPECT_EQ(Store(dir_ / "links/link.db").logs_dir(), db_ + ".logs");
  EXPECT_EQ(Store(dir_ / "links/../results.db", Store::Mode::kReadOnly).logs_dir(), db_ + ".logs");
}

TEST_F(StoreTest, ADatabaseOfTwoNamesHasNoLogsDirectory) {
  { Store store(db_); }
  std::filesystem::create_hard_link(db_, dir_ / "other.db");
  for (const std::string& name : {db_, dir_ / "other.db"}) {
    Store store(name, Store::Mode::kReadOnly);
    try {
      store.logs_dir();
      FAIL() << "a logs directory for " << name;
    } catch (const StoreError& e) {
      EXPECT_EQ(std::string(e.what()),
                name + ": the database file has 2 names (hard links), and its logs directory sits beside one of "
                       "them, which no name can tell: dmlbench keeps, shows and forgets logs only of a database of "
                       "one name (remove the other links, or copy the file; a symbolic link is followed)");
    }
  }
}

// A user_version set below what the database's tables hold is named: a
// migration would otherwise fail on a table that exists.
TEST_F(StoreTest, AUserVersionBelowItsTablesIsRefused) {
  { Store(db_).Query("PRAGMA user_version = 2"); }
  for (const Store::Mode mode : {Store::Mode::kReadWrite, Store::Mode::kReadOnly}) {
    try {
      Store store(db_, mode);
      FAIL() << "opened a database whose user_version was set below its tables";
    } catch (const StoreError& e) {
      EXPECT_EQ(std::string(e.what()),
                db_ + ": the database's schema says version 2 (PRAGMA user_version), but it holds tables of "
                      "version 20 or later (runs.system): its user_version was changed "
                      "after it was written; refusing to open it");
    }
  }
}

TEST_F(StoreTest, ReadOnlyScratchCreatesTemporaryViewsButNeverWritesTheFile) {
  {
    Store store(db_);
    store.AddExperiment(MakeExperiment(), 1);
  }
  const std::string before = Sha256FileHex(db_);
  Store store(db_, Store::Mode::kReadOnlyScratch);
  store.ExecuteScript("CREATE TEMP VIEW names AS SELECT name FROM experiments; "
                      "CREATE TEMP TABLE scratch (x); INSERT INTO scratch VALUES (1);");
  EXPECT_EQ(Text(store, "SELECT name FROM names"), "unit");
  EXPECT_EQ(Int(store, "SELECT x FROM scratch"), 1);
  try {
    store.ExecuteScript("DELETE FROM experiments");
    FAIL() << "wrote through a read-only store";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": attempt to write a readonly database");
  }
  EXPECT_EQ(Sha256FileHex(db_), before);
}

TEST_F(StoreTest, FunctionsAddedToTheConnection) {
  Store store(db_);
  store.AddScalarFunction("twice", 1, [](const std::vector<Cell>& arguments) -> Cell {
    return 2 * std::get<std::int64_t>(arguments[0]);
  });
  store.AddAggregateFunction("joined", 1, [](const std::vector<std::vector<Cell>>& rows) -> Cell {
    std::string text = std::to_string(rows.size()) + ":";
    for (const auto& row : rows) text += std::holds_alternative<std::nullptr_t>(row[0]) ? "-" : std::get<std::string>(row[0]);
    return text;
  });
  store.AddScalarFunction("fails", 0, [](const std::vector<Cell>&) -> Cell { throw Error("no such luck"); });
  EXPECT_EQ(Int(store, "SELECT twice(21)"), 42);
  EXPECT_EQ(Text(store, "SELECT joined(x) FROM (SELECT 'a' AS x UNION ALL SELECT NULL UNION ALL SELECT 'b')"), "3:a-b");
  EXPECT_EQ(Text(store, "SELECT joined(x) FROM (SELECT 'a' AS x) WHERE 0"), "0:");
  try {
    store.Query("SELECT fails()");
    FAIL() << "no error";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": no such luck");
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
    store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'c'), MakeProvenance());
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
  store.AddRun(store.AddExperiment(MakeExperiment(), 1), MakeRun(), std::string(64, 'c'), MakeProvenance());
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
  const auto [run, attempt] = RunWithAnAttempt(store);
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
  const auto [run, attempt] = RunWithAnAttempt(store);
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
  Store::Batch batch(store);
  try {
    Store::Batch nested(store);
    FAIL() << "opened a batch twice";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": a batch is already open");
  }
  EXPECT_TRUE(store.batch_open());
  batch.Commit();
}

TEST_F(StoreTest, ABatchCommitsOnce) {
  Store store(db_);
  Store::Batch batch(store);
  batch.Commit();
  try {
    batch.Commit();
    FAIL() << "committed a batch twice";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": the batch is closed already");
  }
}

TEST_F(StoreTest, DuplicateEpochOfAnAttemptIsRefused) {
  Store store(db_);
  const auto [run, attempt] = RunWithAnAttempt(store);
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
