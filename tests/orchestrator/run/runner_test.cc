// The run loop on a real SQLite file through the real mpirun: complete
// sweeps and resume, retries, crashes, hangs, cancellation, recovery of a
// run left running, the run lock, a full disk and a read-only database.
// Trainers that must crash or hang are shell scripts; one test runs the real
// trainer end to end.
#include "orchestrator/run/runner.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/matrix/matrix.h"
#include "trainer/sha256.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::Echo;
using testing::EpochLine;
using testing::RunEndLine;
using testing::RunStartLine;
using testing::TempDir;
using testing::WriteScript;

std::int64_t Int(const Store& store, const std::string& sql) {
  return std::get<std::int64_t>(store.Query(sql).rows.at(0).at(0));
}

std::string Text(const Store& store, const std::string& sql) {
  return std::get<std::string>(store.Query(sql).rows.at(0).at(0));
}

// Waits (through its own read-only connection) until a trainer's run_start
// is stored, i.e. the job is running.
void WaitForRunStart(const std::string& db) {
  Store reader(db, Store::Mode::kReadOnly);
  for (int i = 0; i < 1200; ++i) {
    if (Int(reader, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL") > 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string MatrixText(const std::string& matrix, double timeout_s = 60, int attempts = 2,
                       const std::string& defaults = "") {
  std::ostringstream text;
  text << "[experiment]\nname = \"runner-test\"\n[defaults]\ndataset = \"synthetic\"\n"
       << "max_iterations_per_epoch = 3\n"
       << defaults << "[matrix]\n"
       << matrix << "[execution]\ntimeout_s = " << timeout_s << "\nattempts = " << attempts
       << "\n[split]\ncalibration = { workers = [1] }\n";
  return text.str();
}

class RunnerTest : public ::testing::Test {
 protected:
  Experiment Load(const std::string& text) {
    testing::WriteFile(dir_ / "matrix.toml", text);
    return LoadExperiment(dir_ / "matrix.toml");
  }

  LocalLauncher MakeLauncher(const std::string& trainer) {
    LocalLauncherOptions options;
    options.mpirun = DMLBENCH_MPIRUN;
    options.trainer = trainer;
    options.warnings = &warnings_;
    return LocalLauncher(options);
  }

  SweepReport Sweep(Store& store, const std::string& trainer, const Experiment& experiment,
                    const std::atomic<bool>& cancel) {
    LocalLauncher launcher = MakeLauncher(trainer);
    RunnerOptions options;
    options.progress = &progress_;
    return Runner(store, launcher, options).Run(experiment, cancel);
  }

  SweepReport Sweep(Store& store, const std::string& trainer, const Experiment& experiment) {
    return Sweep(store, trainer, experiment, no_cancel_);
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
  std::ostringstream warnings_;
  std::ostringstream progress_;
  std::atomic<bool> no_cancel_{false};
};

TEST_F(RunnerTest, SweepRunsEverythingAndResumeSkipsCompleteRuns) {
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody(2));
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"));
  Store store(db_);
  SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(report.failed, 0);
  EXPECT_FALSE(report.cancelled);
  ASSERT_EQ(report.runs.size(), 2u);
  EXPECT_TRUE(report.runs[0].ran_now);
  ASSERT_TRUE(report.runs[0].measures.has_value());
  EXPECT_EQ(report.runs[0].measures->epochs, 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'complete' AND split = 'calibration'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM hosts"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_hosts"), 2);
  EXPECT_NE(progress_.str().find("[2/2] mpi w=1 b=100 rep=0: complete"), std::string::npos) << progress_.str();

  report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_FALSE(report.runs[0].ran_now);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiments"), 1);
}

TEST_F(RunnerTest, CrashingTrainerIsRetriedThenFailedAndTheSweepGoesOn) {
  const std::string trainer = WriteScript(dir_ / "trainer",
                                          "case \" $* \" in *\" --architecture p2p \"*)\n" + Echo(RunStartLine()) +
                                              "  echo 'dmlbench-trainer: error: boom' >&2\n  exit 2;;\nesac\n" +
                                              testing::GoodTrainerBody());
  const Experiment experiment = Load(MatrixText("architecture = [\"p2p\", \"ring\"]\nworkers = [1]\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.attempts, 2);
  EXPECT_EQ(report.runs[0].item.failure_reason, "mpirun exited with status 2: dmlbench-trainer: error: boom");
  EXPECT_EQ(report.runs[1].item.state, RunState::kComplete);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts a JOIN runs r USING (run_id) "
                       "WHERE r.architecture = 'p2p' AND a.status = 'failed' AND a.exit_code = 2"),
            2);
  EXPECT_EQ(Text(store, "SELECT failure_reason FROM failures"),
            "mpirun exited with status 2: dmlbench-trainer: error: boom");
  EXPECT_NE(Text(store, "SELECT stderr_tail FROM failures").find("dmlbench-trainer: error: boom"),
            std::string::npos);

  const std::vector<PlanItem> plan = Plan(experiment, store, {trainer, Sha256FileHex(trainer), ""});
  EXPECT_EQ(plan[0].state, RunState::kFailed);
  EXPECT_EQ(plan[1].state, RunState::kComplete);
}

TEST_F(RunnerTest, HangingTrainerTimesOutAndTheSweepGoesOn) {
  const std::string trainer = WriteScript(dir_ / "trainer",
                                          "case \" $* \" in *\" --architecture mpi \"*)\n" + Echo(RunStartLine()) +
                                              "  exec sleep 60;;\nesac\n" + testing::GoodTrainerBody());
  const Experiment experiment = Load(MatrixText("architecture = [\"mpi\", \"ring\"]\nworkers = [1]\n", 1, 1));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.failure_reason, "timed out after 1 s");
  EXPECT_EQ(report.runs[1].item.state, RunState::kComplete);
  EXPECT_EQ(Text(store, "SELECT status FROM attempts WHERE number = 1 AND run_id = "
                        "(SELECT run_id FROM runs WHERE architecture = 'mpi')"),
            "timed_out");
}

TEST_F(RunnerTest, PartialDataOfAFailedAttemptIsNeverDuplicated) {
  const std::string marker = dir_ / "crashed-once";
  const std::string trainer = WriteScript(
      dir_ / "trainer", "if [ ! -e " + marker + " ]; then\n  touch " + marker + "\n" + Echo(RunStartLine()) +
                            Echo(EpochLine(1)) + "  exit 1\nfi\n" + testing::GoodTrainerBody(2));
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.runs[0].item.attempts, 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM rank_phases"), 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY number)"),
            "failed,ok");
}

TEST_F(RunnerTest, MalformedTrainerOutputFailsTheRun) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo garbage\n" + testing::GoodTrainerBody());
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, Load(MatrixText("workers = [1]\n", 60, 1)));
  EXPECT_EQ(report.runs[0].item.failure_reason, "malformed trainer output: event line 1: not a JSON object: garbage");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 0);
}

TEST_F(RunnerTest, TrainerThatExitsWithoutRunEndFailsTheRun) {
  const std::string trainer = WriteScript(dir_ / "trainer", Echo(RunStartLine()) + Echo(EpochLine(1)));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, Load(MatrixText("workers = [1]\n", 60, 1)));
  EXPECT_EQ(report.runs[0].item.failure_reason, "the trainer exited without a run_end event with status ok");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 0);
}

TEST_F(RunnerTest, CancelInterruptsTheCurrentRunAndTheNextSweepRedoesIt) {
  const std::string marker = dir_ / "slow-once";
  const std::string trainer =
      WriteScript(dir_ / "trainer", "if [ ! -e " + marker + " ]; then\n  touch " + marker + "\n" +
                                        Echo(RunStartLine()) + "  exec sleep 60\nfi\n" + testing::GoodTrainerBody());
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"));
  Store store(db_);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    WaitForRunStart(db_);
    cancel = true;
  });
  SweepReport report = Sweep(store, trainer, experiment, cancel);
  canceller.join();
  EXPECT_TRUE(report.cancelled);
  EXPECT_EQ(report.interrupted, 1);
  EXPECT_EQ(report.pending, 1);
  EXPECT_EQ(report.runs[0].item.state, RunState::kInterrupted);
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(Text(store, "SELECT status FROM attempts"), "interrupted");
  EXPECT_EQ(Text(store, "PRAGMA integrity_check"), "ok");

  report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'ring'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
}

TEST_F(RunnerTest, RunLeftRunningByADeadOrchestratorIsRedone) {
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  // What a killed orchestrator leaves: a running attempt with one epoch.
  const std::vector<PlanItem> plan = Plan(experiment, store, {trainer, Sha256FileHex(trainer), ""});
  RunProvenance provenance{Sha256FileHex(trainer), plan[0].dataset_sha256, std::nullopt, std::nullopt};
  const std::int64_t run = store.AddRun(store.AddExperiment(experiment, 1), plan[0].run, plan[0].run_key, provenance);
  EpochRecord epoch;
  epoch.epoch = 1;
  store.AddEpoch(run, store.BeginAttempt(run, 1), epoch);

  const SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.recovered, 1);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY number)"),
            "interrupted,ok");
}

TEST_F(RunnerTest, RealTrainerThroughRealMpirun) {
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\"]\nworkers = [1, 2]\n", 120, 1, "epochs = 2\nbatch_size = 10\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, DMLBENCH_TRAINER, experiment);
  ASSERT_EQ(report.complete, 2) << report.runs[0].item.failure_reason << report.runs[1].item.failure_reason;
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 2 * 1 + 2 * 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE length(parameter_checksum) = 64"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE mpi_library_version LIKE 'Open MPI%'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE command_line LIKE '%--synthetic 10000%'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE trainer_dataset_sha256 = "
                       "(SELECT dataset_sha256 FROM runs WHERE runs.run_id = attempts.run_id)"),
            2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_summary"), 2);
}

// ---- error paths of runner.cc follow -------------------------------------

TEST_F(RunnerTest, SecondSweepOnTheSameDatabaseIsRefused) {
  const std::string trainer = WriteScript(dir_ / "trainer", Echo(RunStartLine()) + "exec sleep 60\n");
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store first_store(db_);
  std::atomic<bool> cancel{false};
  std::thread first([&] { Sweep(first_store, trainer, experiment, cancel); });
  WaitForRunStart(db_);
  Store second_store(db_);
  try {
    LocalLauncher launcher = MakeLauncher(trainer);
    Runner(second_store, launcher, RunnerOptions{}).Run(experiment, no_cancel_);
    ADD_FAILURE() << "two sweeps ran on one database";
  } catch (const RunnerError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": another `dmlbench run` is using this database");
  }
  cancel = true;
  first.join();
}

TEST_F(RunnerTest, UnreadableDatasetStopsThePlan) {
  Experiment experiment = Load(MatrixText("workers = [1]\n"));
  experiment.runs[0].params.dataset = "fashion-mnist";
  Store store(db_);
  try {
    std::filesystem::create_directories(dir_ / "no-dataset");
    Plan(experiment, store, {DMLBENCH_TRAINER, std::string(64, 't'), dir_ / "no-dataset"});
    FAIL() << "planned without a dataset";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_ / "no-dataset: neither train-images-idx3-ubyte.gz nor train-images-idx3-ubyte found");
  }
}

// Mounts a tmpfs of `size` at dir/mnt (needs root); unmounts at destruction.
class TmpfsMount {
 public:
  TmpfsMount(const TempDir& dir, const std::string& size) : path_(dir / "mnt") {
    std::filesystem::create_directories(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  bool RemountReadOnly() {
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

TEST_F(RunnerTest, FullDiskIsAClearErrorAndNoRunCompletes) {
  TmpfsMount disk(dir_, "1m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  // Epoch events large enough to fill what is left of the disk quickly.
  std::string body = Echo(RunStartLine(5, 64));
  for (int e = 1; e <= 400; ++e) body += Echo(EpochLine(e, 64));
  const std::string trainer = WriteScript(dir_ / "trainer", body + Echo(RunEndLine()));
  const Experiment experiment = Load(MatrixText("workers = [1]\n", 60, 1, "epochs = 400\n"));
  {
    Store store(db);
    try {
      Sweep(store, trainer, experiment);
      FAIL() << "a full disk went unnoticed";
    } catch (const StoreError& e) {
      EXPECT_EQ(std::string(e.what()), db + ": database or disk is full");
      EXPECT_EQ(e.extended_code() & 0xff, SQLITE_FULL);
    }
  }
  Store after(db, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(after, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Int(after, "SELECT count(*) FROM runs WHERE status = 'complete'"), 0);
  EXPECT_EQ(Int(after, "SELECT count(*) FROM complete_epochs"), 0);
}

TEST_F(RunnerTest, ReadOnlyDatabaseFileIsAClearError) {
  TmpfsMount disk(dir_, "1m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  { Store create(db); }
  ASSERT_TRUE(disk.RemountReadOnly());
  try {
    Store store(db);
    FAIL() << "opened a database on a read-only file system for writing";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), db + ": database is not writable: Read-only file system");
    EXPECT_EQ(e.extended_code(), -1);
  }
}

}  // namespace
}  // namespace dmlbench
