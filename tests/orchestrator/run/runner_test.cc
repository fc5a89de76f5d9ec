// The run loop on a real SQLite file with a FakeLauncher (no processes):
// complete sweeps and resume, retries and their bound over sweeps, failures
// no retry can fix, crashes, malformed output, cancellation, recovery of a
// run left running, the run lock, a full disk and a read-only database.
// Processes end to end: runner_mpirun_test.cc.
#include "orchestrator/run/runner.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "orchestrator/matrix/matrix.h"
#include "orchestrator/store/gzip.h"
#include "tests/orchestrator/support/fake_launcher.h"
#include "tests/orchestrator/run/runner_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"
#include "tests/orchestrator/support/tmpfs_mount.h"

namespace dmlbench {
namespace {

using testing::Int;
using testing::Text;
using testing::MatrixText;

using testing::EpochLine;
using testing::FailingJob;
using testing::FactsOf;
using testing::FakeJob;
using testing::FakeLauncher;
using testing::GoodJob;
using testing::RunEndLine;
using testing::RunStartLine;
using testing::TempDir;
using testing::TmpfsMount;
using testing::TrainerArg;

class RunnerTest : public ::testing::Test {
 protected:
  Experiment Load(const std::string& text) {
    testing::WriteFile(dir_ / "matrix.toml", text);
    return LoadExperiment(dir_ / "matrix.toml");
  }

  SweepReport Sweep(Store& store, Launcher& launcher, const Experiment& experiment,
                    const std::atomic<bool>& cancel, RunnerOptions options = {}) {
    options.progress = &progress_;
    return Runner(store, launcher, options).Run(experiment, lock_, cancel);
  }

  SweepReport Sweep(Store& store, Launcher& launcher, const Experiment& experiment, RunnerOptions options) {
    return Sweep(store, launcher, experiment, no_cancel_, std::move(options));
  }

  SweepReport Sweep(Store& store, Launcher& launcher, const Experiment& experiment) {
    return Sweep(store, launcher, experiment, no_cancel_);
  }

  // The plan of `experiment` as the fake's runs are keyed.
  std::vector<PlanItem> PlanOf(const Experiment& experiment, const Store& store, const Launcher& launcher) {
    return Plan(experiment, store, {"", launcher.TrainerSha256(), ""});
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
  RunLock lock_{db_};  // before any Store of the test, released after them
  std::ostringstream progress_;
  std::atomic<bool> no_cancel_{false};
};

TEST_F(RunnerTest, SweepRunsEverythingAndResumeSkipsCompleteRuns) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 60, 2, "epochs = 2\n"));
  Store store(db_);
  SweepReport report = Sweep(store, launcher, experiment);
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

  report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_FALSE(report.runs[0].ran_now);
  EXPECT_EQ(launcher.specs().size(), 2u);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiments"), 1);
}

TEST_F(RunnerTest, EveryAttemptRecordsWhereItsTimeWentAndTheSweepSumsThem) {
  FakeLauncher launcher([](const LaunchSpec& spec, int call) { return call == 1 ? FailingJob(1) : GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 60, 2, "epochs = 3\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM attempt_phases"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases WHERE phase = 'host_preparation'"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases WHERE phase IN ('plan_to_launch', 'launch', 'ingest')"),
            3 * 3);
  // The failed attempt printed no event: it was all launch.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases JOIN attempts USING (attempt_id) "
                       "WHERE status = 'failed' AND phase LIKE '%epochs'"),
            0);
  // Epochs 2 and 3 of each complete run are steady: 4 of EpochLine's 0.5 s.
  EXPECT_DOUBLE_EQ(report.time.phase_s.at("steady_epochs"), 2.0);
  EXPECT_DOUBLE_EQ(report.time.phase_s.at("warmup_epochs"), 1.0);
  EXPECT_EQ(Text(store, "SELECT printf('%.1f', sum(seconds)) FROM attempt_phases WHERE phase = 'steady_epochs'"), "2.0");
  EXPECT_GT(report.time.wall_s, 0);
  // A sweep with nothing left to run has no phases.
  EXPECT_TRUE(Sweep(store, launcher, experiment).time.phase_s.empty());
}

TEST_F(RunnerTest, EachRunIsLaunchedWithItsTrainerArgumentsAndTimeout) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("architecture = [\"ps\"]\nworkers = [1]\nservers = [2]\n", 42));
  Store store(db_);
  Sweep(store, launcher, experiment);
  ASSERT_EQ(launcher.specs().size(), 1u);
  const LaunchSpec& spec = launcher.specs()[0];
  EXPECT_EQ(spec.ranks, 3);
  EXPECT_EQ(spec.timeout_s, 42);
  EXPECT_EQ(TrainerArg(spec, "--architecture"), "ps");
  EXPECT_EQ(TrainerArg(spec, "--servers"), "2");
  EXPECT_EQ(TrainerArg(spec, "--synthetic"), "10000");
  EXPECT_EQ(spec.dataset_dir, "");
  EXPECT_EQ(spec.run_key.size(), 64u);
}

TEST_F(RunnerTest, CrashingTrainerIsRetriedThenFailedAndTheSweepGoesOn) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    if (TrainerArg(spec, "--architecture") == "p2p") {
      return FailingJob(2, {RunStartLine(FactsOf(spec))}, "dmlbench-trainer: error: boom\n");
    }
    return GoodJob(spec);
  });
  const Experiment experiment = Load(MatrixText("architecture = [\"p2p\", \"ring\"]\nworkers = [1]\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
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

  const std::vector<PlanItem> plan = PlanOf(experiment, store, launcher);
  EXPECT_EQ(plan[0].state, RunState::kFailed);
  EXPECT_EQ(plan[1].state, RunState::kComplete);
}

// A rank killed by a signal makes mpirun exit 137 whoever it was; the
// attempt's reason names the rank, its node and the signal from mpirun's
// own sentence.
TEST_F(RunnerTest, ARankKilledByASignalIsNamedInTheReason) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    if (launch > 1) return GoodJob(spec);
    return FailingJob(137, {RunStartLine()},
                      "--------------------------------------------------------------------------\n"
                      "mpirun noticed that process rank 1 with PID 23497 on node dmlb-sk1-h2 exited on signal 9 "
                      "(Killed).\n"
                      "--------------------------------------------------------------------------\n");
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts WHERE number = 1"),
            "mpirun exited with status 137: rank 1 on node dmlb-sk1-h2 exited on signal 9 (Killed)");
}

// When mpirun cannot start its daemon on a host it prints its help text on
// stdout too: the attempt is the launch's failure, named, and retried, not
// the trainer's malformed output.
TEST_F(RunnerTest, AnMpiDaemonThatCouldNotStartIsNamedNotMalformedOutput) {
  const std::string banner = "--------------------------------------------------------------------------";
  FakeLauncher launcher([&](const LaunchSpec& spec, int launch) {
    if (launch > 1) return GoodJob(spec);
    return FailingJob(1, {banner, "ORTE was unable to reliably start one or more daemons."},
                      banner + "\nORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n");
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts WHERE number = 1"),
            "mpirun exited with status 1: Open MPI could not start its daemon on a host (unreachable, or its sshd "
            "down)");
}

TEST_F(RunnerTest, OnlyRunsWhatTheFilterChooses) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"ps\"]\nworkers = [1, 2, 4]\n"));
  Store store(db_);
  RunnerOptions options;
  options.only = Filter::Parse("architecture=ps,workers>=2", "--only");
  const SweepReport report = Sweep(store, launcher, experiment, options);
  EXPECT_EQ(report.planned, 6);
  ASSERT_EQ(report.runs.size(), 2u);
  EXPECT_EQ(Describe(report.runs[0].item.run.params), "ps k=1 w=2 b=100 rep=0");
  EXPECT_EQ(Describe(report.runs[1].item.run.params), "ps k=1 w=4 b=100 rep=0");
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(launcher.specs().size(), 2u);
  // The others belong to the experiment too, pending and never tried.
  EXPECT_EQ(Text(store, "SELECT group_concat(status || ':' || attempts, ',') FROM "
                        "(SELECT status, attempts FROM runs ORDER BY status, run_id)"),
            "complete:1,complete:1,pending:0,pending:0,pending:0,pending:0");
  EXPECT_NE(progress_.str().find("[2/2] ps k=1 w=4 b=100 rep=0: complete"), std::string::npos) << progress_.str();
}

TEST_F(RunnerTest, OnlyFiltersOnTheStateInTheDatabase) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    // The mpi run fails in the first sweep only.
    return TrainerArg(spec, "--architecture") == "mpi" && launch <= 3 ? FailingJob(1) : GoodJob(spec);
  });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"));
  Store store(db_);
  EXPECT_EQ(Sweep(store, launcher, experiment).failed, 1);
  ASSERT_EQ(launcher.specs().size(), 3u);
  // The failed run had its two tries: a third needs a higher bound.
  RunnerOptions options;
  options.only = Filter::Parse("status=failed", "--only");
  const SweepReport report =
      Sweep(store, launcher, Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 60, 3)), options);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].item.run.params.architecture, Architecture::kMpi);
  EXPECT_EQ(report.runs[0].item.state, RunState::kComplete);
  EXPECT_EQ(launcher.specs().size(), 4u);
}

TEST_F(RunnerTest, WithoutRetryFailedRunsThatFailedStayFailed) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    return TrainerArg(spec, "--architecture") == "mpi" ? FailingJob(1) : GoodJob(spec);
  });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\n"));
  Store store(db_);
  RunnerOptions first;
  first.only = Filter::Parse("architecture=ring|mpi", "--only");
  EXPECT_EQ(Sweep(store, launcher, experiment, first).failed, 1);
  const size_t launches = launcher.specs().size();

  RunnerOptions options;
  options.retry_failed = false;
  const SweepReport report = Sweep(store, launcher, experiment, options);
  ASSERT_EQ(report.runs.size(), 3u);
  EXPECT_EQ(report.runs[1].item.state, RunState::kFailed);
  EXPECT_FALSE(report.runs[1].ran_now);
  EXPECT_EQ(report.runs[1].item.attempts, 2);
  EXPECT_TRUE(report.runs[2].ran_now);  // the p2p run was pending: it runs
  EXPECT_EQ(report.failed, 1);
  ASSERT_EQ(launcher.specs().size(), launches + 1);
  EXPECT_EQ(TrainerArg(launcher.specs().back(), "--architecture"), "p2p");
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'mpi'"), 2);
}

TEST_F(RunnerTest, TagsOfTheExperimentAndTheSweepGoToEveryRunItConsidered) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment first = Load(
      "[experiment]\nname = \"tagged\"\ntags = [\"baseline\"]\n[defaults]\ndataset = \"synthetic\"\n"
      "[matrix]\nworkers = [1, 2]\n");
  Store store(db_);
  RunnerOptions options;
  options.tags = {"nightly", "baseline"};
  options.only = Filter::Parse("workers=1", "--only");
  Sweep(store, launcher, first, options);
  // The run --only left out is stored (pending), without the sweep's tags.
  EXPECT_EQ(Text(store, "SELECT group_concat(workers || ':' || tags, ' ') FROM run_overview"),
            "1:baseline,nightly 2:");

  // A later sweep tags the runs it finds complete as well as those it runs.
  options.tags = {"rerun"};
  options.only = Filter();
  Sweep(store, launcher, first, options);
  EXPECT_EQ(Text(store, "SELECT group_concat(workers || ':' || tags, ' ') FROM run_overview"),
            "1:baseline,nightly,rerun 2:baseline,rerun");
  EXPECT_EQ(launcher.specs().size(), 2u);
  options.only = Filter::Parse("tag=nightly", "--only");
  options.tags = {};
  const SweepReport report = Sweep(store, launcher, first, options);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].item.run.params.workers, 1);
}

TEST_F(RunnerTest, EachAttemptGetsAnOutputDirectoryWhoseFilesAreKept) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    // What a launcher leaves: rank 0's streams and mpirun's stderr.
    std::filesystem::create_directories(spec.output_dir + "/rank.0");
    testing::WriteFile(spec.output_dir + "/rank.0/stdout", "launch " + std::to_string(launch) + "\n");
    testing::WriteFile(spec.output_dir + "/rank.0/stderr", "");
    testing::WriteFile(spec.output_dir + "/mpirun.stderr", "");
    return launch == 1 ? FailingJob(1) : GoodJob(spec);
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  EXPECT_EQ(Sweep(store, launcher, experiment).complete, 1);
  ASSERT_EQ(launcher.specs().size(), 2u);
  EXPECT_NE(launcher.specs()[0].output_dir, launcher.specs()[1].output_dir);
  for (const LaunchSpec& spec : launcher.specs()) {
    EXPECT_FALSE(spec.output_dir.empty());
    EXPECT_FALSE(std::filesystem::exists(spec.output_dir)) << spec.output_dir << " was left behind";
  }
  const std::vector<AttemptRecord> attempts = store.Attempts(Int(store, "SELECT run_id FROM runs"));
  ASSERT_EQ(attempts.size(), 2u);
  for (int n = 0; n < 2; ++n) {
    const std::vector<AttemptLog> logs = store.AttemptLogs(attempts[n].attempt_id);
    ASSERT_EQ(logs.size(), 3u);
    EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + logs[0].file), "launch " + std::to_string(n + 1) + "\n");
  }
}

TEST_F(RunnerTest, AttemptThatPrintedNothingKeepsNoLogs) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  Store store(db_);
  Sweep(store, launcher, Load(MatrixText("workers = [1]\n")));
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE log_dir IS NULL"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_logs"), 0);
  EXPECT_FALSE(std::filesystem::exists(store.logs_dir()));
}

TEST_F(RunnerTest, PartialDataOfAFailedAttemptIsNeverDuplicated) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    return launch == 1 ? FailingJob(1, {RunStartLine(FactsOf(spec)), EpochLine(1)}) : GoodJob(spec);
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n", 60, 2, "epochs = 2\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.runs[0].item.attempts, 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 2);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM rank_phases"), 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY number)"),
            "failed,ok");
}

TEST_F(RunnerTest, MalformedTrainerOutputFailsTheRun) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    FakeJob job = GoodJob(spec);
    job.lines.insert(job.lines.begin(), "garbage");
    return job;
  });
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, Load(MatrixText("workers = [1]\n", 60, 1)));
  EXPECT_EQ(report.runs[0].item.failure_reason, "malformed trainer output: event line 1: not a JSON object: garbage");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 0);
}

TEST_F(RunnerTest, TrainerThatExitsWithoutRunEndFailsTheRun) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    FakeJob job;
    job.lines = {RunStartLine(FactsOf(spec)), EpochLine(1)};
    job.result.exit_code = 0;
    return job;
  });
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, Load(MatrixText("workers = [1]\n", 60, 1)));
  EXPECT_EQ(report.runs[0].item.failure_reason, "the trainer exited without a run_end event with status ok");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 0);
}

// The database's constraints are the last line behind the ingest's checks:
// an event they let through and the schema refuses (a trigger stands here
// for such a rule) fails that run as malformed output, keeps its logs,
// counts as an attempt, and the sweep goes on; a sweep again tries it
// again instead of stopping at it.
TEST_F(RunnerTest, TrustAnEventTheDatabaseRefusesFailsThatRunAndTheSweepGoesOn) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    std::filesystem::create_directories(spec.output_dir + "/rank.0");
    testing::WriteFile(spec.output_dir + "/rank.0/stdout", "what rank 0 printed\n");
    FakeJob job = GoodJob(spec);
    if (TrainerArg(spec, "--architecture") == "mpi") {
      std::string& epoch = job.lines[1];
      epoch.replace(epoch.find("\"loss\":2.25"), 11, "\"loss\":7.5");
    }
    return job;
  });
  const std::string matrix = "architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\n";
  Store store(db_);
  store.ExecuteScript("CREATE TRIGGER refuse_loss BEFORE INSERT ON epochs WHEN NEW.loss = 7.5 "
                      "BEGIN SELECT RAISE(ABORT, 'a loss of 7.5 is refused'); END");

  SweepReport report = Sweep(store, launcher, Load(MatrixText(matrix)));
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.stopped, "");
  EXPECT_EQ(report.runs[1].item.failure_reason,
            "malformed trainer output: event line 2: the database refused it: a loss of 7.5 is refused");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'mpi'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts a JOIN runs r USING (run_id) WHERE r.architecture = 'mpi' "
                       "AND a.status = 'failed' AND a.log_dir IS NOT NULL"),
            2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs e JOIN runs r USING (run_id) WHERE r.architecture = 'mpi'"), 0);

  // A third try allowed: the sweep runs it, it fails alike, the sweep ends.
  report = Sweep(store, launcher, Load(MatrixText(matrix, 60, 3)));
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'mpi'"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
}

TEST_F(RunnerTest, HostFailureIsRetriedAndRecordedOnTheAttempt) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    if (launch > 1) return GoodJob(spec);
    FakeJob lost = FailingJob(255);
    lost.result.host_failure = true;
    lost.result.failure_reason = "host 'b' was lost";
    return lost;
  });
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, Load(MatrixText("workers = [1]\n")));
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(Text(store, "SELECT reason FROM attempts WHERE number = 1"), "host 'b' was lost");
  EXPECT_EQ(Int(store, "SELECT host_failure FROM attempts WHERE number = 1"), 1);
}

TEST_F(RunnerTest, CancelInterruptsTheCurrentRunAndTheNextSweepRedoesIt) {
  std::atomic<bool> cancel{false};
  FakeLauncher launcher([&](const LaunchSpec& spec, int launch) {
    if (launch > 1) return GoodJob(spec);
    FakeJob slow;
    slow.lines = {RunStartLine(FactsOf(spec))};
    slow.runs_until_cancelled = true;
    cancel = true;  // Ctrl-C while the first job runs
    return slow;
  });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"));
  Store store(db_);
  SweepReport report = Sweep(store, launcher, experiment, cancel);
  EXPECT_TRUE(report.cancelled);
  EXPECT_EQ(report.interrupted, 1);
  EXPECT_EQ(report.pending, 1);
  EXPECT_EQ(report.runs[0].item.state, RunState::kInterrupted);
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(Text(store, "SELECT status FROM attempts"), "interrupted");
  EXPECT_EQ(Text(store, "PRAGMA integrity_check"), "ok");

  report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'ring'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 2);
}

TEST_F(RunnerTest, RunLeftRunningByADeadOrchestratorIsRedone) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store store(db_);
  // What a killed orchestrator leaves: a running attempt with one epoch.
  const std::vector<PlanItem> plan = PlanOf(experiment, store, launcher);
  RunProvenance provenance{launcher.TrainerSha256(), plan[0].dataset_sha256, std::nullopt, std::nullopt};
  const std::int64_t run = store.AddRun(store.AddExperiment(experiment, 1), plan[0].run, plan[0].run_key, provenance);
  EpochRecord epoch;
  epoch.epoch = 1;
  store.AddEpoch(run, store.BeginAttempt(run, 1), epoch);

  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.recovered, 1);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY number)"),
            "interrupted,ok");
}

TEST_F(RunnerTest, AttemptsBoundARunAcrossSweeps) {
  FakeLauncher launcher([](const LaunchSpec&, int) { return FailingJob(1); });
  Store store(db_);
  EXPECT_EQ(Sweep(store, launcher, Load(MatrixText("workers = [1]\n", 60, 2))).failed, 1);
  // Run again: the run has had its two tries.
  const SweepReport again = Sweep(store, launcher, Load(MatrixText("workers = [1]\n", 60, 2)));
  EXPECT_EQ(again.failed, 1);
  EXPECT_FALSE(again.runs[0].ran_now);
  EXPECT_EQ(launcher.specs().size(), 2u);
  // A higher bound gives it one more.
  Sweep(store, launcher, Load(MatrixText("workers = [1]\n", 60, 3)));
  EXPECT_EQ(launcher.specs().size(), 3u);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 3);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs"), 3);
}

TEST_F(RunnerTest, RetryFailedRetriesAFailedRunOnlyWithTheTriesItHasLeft) {
  // The trainer refuses its input: each attempt fails the run at once.
  FakeLauncher launcher([](const LaunchSpec&, int) {
    return FailingJob(1, {}, "dmlbench-trainer: error: /data/train-images-idx3-ubyte.gz: truncated\n");
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n", 60, 2));
  Store store(db_);
  EXPECT_EQ(Sweep(store, launcher, experiment).failed, 1);
  EXPECT_EQ(launcher.specs().size(), 1u);
  RunnerOptions keep;
  keep.retry_failed = false;
  SweepReport report = Sweep(store, launcher, experiment, keep);
  EXPECT_FALSE(report.runs[0].ran_now);
  EXPECT_EQ(report.exhausted, 0);
  EXPECT_EQ(launcher.specs().size(), 1u);
  // Retried: one try of the two is left.
  report = Sweep(store, launcher, experiment);
  EXPECT_TRUE(report.runs[0].ran_now);
  EXPECT_EQ(report.runs[0].item.attempts, 2);
  EXPECT_EQ(launcher.specs().size(), 2u);
  // Now it failed `attempts` times: retrying does not try it.
  report = Sweep(store, launcher, experiment);
  EXPECT_FALSE(report.runs[0].ran_now);
  EXPECT_EQ(report.exhausted, 1);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(launcher.specs().size(), 2u);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs"), 2);
}

TEST_F(RunnerTest, AnInterruptedAttemptDoesNotCountAgainstTheBound) {
  std::atomic<bool> cancel{false};
  FakeLauncher launcher([&](const LaunchSpec&, int number) {
    if (number > 1) return FailingJob(1);
    cancel = true;
    FakeJob job;
    job.runs_until_cancelled = true;
    return job;
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n", 60, 2));
  Store store(db_);
  EXPECT_TRUE(Sweep(store, launcher, experiment, cancel).cancelled);
  EXPECT_EQ(Sweep(store, launcher, experiment).failed, 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY number)"),
            "interrupted,failed,failed");
}

TEST_F(RunnerTest, AnErrorEveryAttemptWouldMeetStopsTheSweep) {
  FakeLauncher launcher([](const LaunchSpec&, int) {
    return FailingJob(1, {},
                      "--------------------------------------------------------------------------\n"
                      "mpirun was unable to launch the specified application as it could not access\n"
                      "or execute an executable:\n\nExecutable: /opt/w/dmlbench-trainer\nNode: h1\n\n"
                      "while attempting to start process rank 0.\n");
  });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 60, 3));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(launcher.specs().size(), 1u);
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.pending, 1);
  EXPECT_EQ(report.runs[0].item.failure_reason,
            "mpirun exited with status 1: Open MPI cannot execute /opt/w/dmlbench-trainer on h1");
  EXPECT_EQ(report.stopped, "ring w=1 b=100 rep=0 failed with an error that every attempt would meet: "
                            "mpirun exited with status 1: Open MPI cannot execute /opt/w/dmlbench-trainer on h1");
  // The next sweep tries it again: the run has tries left, and the cause may be fixed.
  Sweep(store, launcher, experiment);
  EXPECT_EQ(launcher.specs().size(), 2u);
}

// A trainer rebuilt in place during a sweep: the run under way ran the
// build it started with (the kernel keeps a running binary's old file); the
// sweep stops before the next run instead of storing the new build's times
// under the old build's key.
TEST_F(RunnerTest, ATrainerRebuiltDuringTheSweepStopsItBeforeTheNextRun) {
  FakeLauncher* self = nullptr;
  FakeLauncher launcher([&self](const LaunchSpec& spec, int) {
    self->SetTrainerSha256(std::string(64, 'e'));
    return GoodJob(spec);
  });
  self = &launcher;
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 60, 3));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(launcher.specs().size(), 1u);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.pending, 1);
  EXPECT_EQ(report.stopped, "the trainer changed while the sweep ran (sha256 ffffffffffff when it began, "
                            "eeeeeeeeeeee now); the runs left are planned for the build it began with. Run again "
                            "to plan them for this build, or pass --trainer a copy that stays put");
}

// ---- error paths of the run stage follow ----------------------------------

TEST_F(RunnerTest, SecondSweepOnTheSameDatabaseIsRefused) {
  std::atomic<bool> cancel{false};
  std::atomic<bool> first_running{false};
  FakeLauncher first_launcher([&](const LaunchSpec&, int) {
    FakeJob job;
    job.runs_until_cancelled = true;
    first_running = true;
    return job;
  });
  const Experiment experiment = Load(MatrixText("workers = [1]\n"));
  Store first_store(db_);
  std::thread first([&] { Sweep(first_store, first_launcher, experiment, cancel); });
  while (!first_running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  try {
    const RunLock second(db_);
    ADD_FAILURE() << "two sweeps locked one database";
  } catch (const RunnerError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": another `dmlbench run` is using this database");
  }
  cancel = true;
  first.join();
}

TEST_F(RunnerTest, ASweepWithoutTheDatabasesLockIsRefused) {
  const RunLock other(dir_ / "other.db");
  Store store(db_);
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  try {
    Runner(store, launcher, RunnerOptions{}).Run(Load(MatrixText("workers = [1]\n")), other, no_cancel_);
    FAIL() << "swept without the lock";
  } catch (const RunnerError& e) {
    EXPECT_EQ(std::string(e.what()), db_ + ": the sweep does not hold this database's run lock");
  }
  EXPECT_TRUE(launcher.specs().empty());
}

// A run is its parameters, not its hosts: the same matrix on hosts of
// another CPU share finds its runs complete and does not run them again,
// and the report says how many and on which shares they were measured.
TEST_F(RunnerTest, CompleteRunsFromHostsOfAnotherCpuShareAreCounted) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"));
  Store store(db_);
  // Hosts without the tag (this machine, an inventory that says nothing),
  // then again: the same hosts.
  EXPECT_EQ(Sweep(store, launcher, experiment).complete, 2);
  EXPECT_EQ(Sweep(store, launcher, experiment).measured_elsewhere, 0);

  launcher.SetHostTags(R"({"cpu_cores":"0.3"})");
  SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(launcher.specs().size(), 2u);  // nothing ran again
  EXPECT_EQ(report.complete, 2);
  EXPECT_EQ(report.measured_elsewhere, 2);
  EXPECT_EQ(report.elsewhere, "uncapped (these hosts: 0.3 core)");
  EXPECT_EQ(Sweep(store, launcher, experiment).measured_elsewhere, 2);  // still measured there

  // Runs complete on hosts of 0.3 core, on hosts of 0.3 core: nothing to say.
  const Experiment more = Load(MatrixText("architecture = [\"p2p\"]\nworkers = [1]\n"));
  EXPECT_EQ(Sweep(store, launcher, more).complete, 1);
  EXPECT_EQ(Sweep(store, launcher, more).measured_elsewhere, 0);
  launcher.SetHostTags(R"({"cpu_cores":"0.15"})");
  EXPECT_EQ(Sweep(store, launcher, more).elsewhere, "0.3 core (these hosts: 0.15 core)");
}

TEST_F(RunnerTest, FilterThatMatchesNothingStopsBeforeAnyHostIsPrepared) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return GoodJob(spec); });
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"ps\"]\nworkers = [1, 2]\n"));
  Store store(db_);
  RunnerOptions options;
  options.only = Filter::Parse("architecture=ps,workers>=64", "--only");
  try {
    Sweep(store, launcher, experiment, options);
    FAIL() << "a sweep ran with no run chosen";
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()), "--only architecture=ps,workers>=64 matches none of the 4 runs of runner-test");
  }
  EXPECT_TRUE(launcher.specs().empty());
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiments"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM hosts"), 0);
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

// A good job of the run `spec` launches, each epoch listing every rank:
// with many ranks, events large enough to fill a small disk quickly.
FakeJob LargeEventsJob(const LaunchSpec& spec) {
  const testing::RunFacts facts = FactsOf(spec);
  FakeJob job;
  job.lines.push_back(RunStartLine(facts));
  for (int e = 1; e <= facts.epochs; ++e) job.lines.push_back(EpochLine(e, spec.ranks));
  job.lines.push_back(RunEndLine());
  job.result.exit_code = 0;
  return job;
}

// 64 ranks, one of them a worker (the calibration split's), so that each
// epoch event is large.
std::string LargeRunMatrix(int epochs) {
  return MatrixText("architecture = [\"ps\"]\nworkers = [1]\nservers = [63]\n", 60, 1,
                    "epochs = " + std::to_string(epochs) + "\n");
}

TEST_F(RunnerTest, FullDiskIsAClearErrorAndNoRunCompletes) {
  TmpfsMount disk(dir_, "1m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  FakeLauncher launcher([](const LaunchSpec& spec, int) { return LargeEventsJob(spec); });
  const Experiment experiment = Load(LargeRunMatrix(400));
  {
    const RunLock lock(db);
    Store store(db);
    try {
      Runner(store, launcher, RunnerOptions{}).Run(experiment, lock, no_cancel_);
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

// A disk full for a moment mid-attempt still stops the sweep, but the
// attempt keeps why: interrupted, with the disk full as its reason, which
// the next sweep leaves as it is (not "the orchestrator stopped during this
// attempt") before it completes the run.
TEST_F(RunnerTest, AnAttemptStoppedByAFullDiskKeepsTheReason) {
  TmpfsMount disk(dir_, "1m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  const std::string filler = disk.path() + "/filler";
  std::thread freeing;
  // The first job fills the disk as it starts and frees it a second later;
  // its epochs cannot be stored meanwhile.
  FakeLauncher launcher([&](const LaunchSpec& spec, int launch) {
    if (launch > 1) return GoodJob(spec);
    {
      std::ofstream fill(filler, std::ios::binary);
      const std::string block(4096, 'x');
      while (fill.write(block.data(), block.size()) && fill.flush()) {
      }
    }
    freeing = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::filesystem::remove(filler);
    });
    return LargeEventsJob(spec);
  });
  const Experiment experiment = Load(LargeRunMatrix(50));
  const std::string reason = "the orchestrator stopped: " + db + ": database or disk is full";
  {
    const RunLock lock(db);
    Store store(db);
    EXPECT_THROW(Runner(store, launcher, RunnerOptions{}).Run(experiment, lock, no_cancel_), StoreError);
    freeing.join();
    EXPECT_EQ(Text(store, "SELECT status || ': ' || reason FROM attempts"), "interrupted: " + reason);
    EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
  }
  const RunLock lock(db);
  Store store(db);
  const SweepReport report = Runner(store, launcher, RunnerOptions{}).Run(experiment, lock, no_cancel_);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.recovered, 0);
  EXPECT_EQ(Text(store, "SELECT group_concat(status || ': ' || coalesce(reason, ''), ' | ') FROM "
                        "(SELECT * FROM attempts ORDER BY number)"),
            "interrupted: " + reason + " | ok: ");
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

// [execution] max_repetitions: a point whose epoch times scatter gets
// repetitions up to the most, one that does not gets none, and a sweep
// again runs none of them twice.
TEST_F(RunnerTest, APointWhoseIntervalIsWideGetsMoreRepetitionsUpToTheMost) {
  // ring: every epoch 0.5 s; mpi: 0.5 or 0.6 s by the seed's parity.
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    const bool mpi = TrainerArg(spec, "--architecture") == "mpi";
    const double wall = mpi && std::stoll(TrainerArg(spec, "--seed")) % 2 ? 0.6 : 0.5;
    FakeJob job = GoodJob(spec);
    job.lines = {RunStartLine(FactsOf(spec)), EpochLine(1, 1, wall), EpochLine(2, 1, wall), RunEndLine()};
    return job;
  });
  const std::string text = MatrixText("architecture = [\"ring\", \"mpi\"]\n", 60, 2, "epochs = 2\n",
                                      "repetitions = 6\nmax_repetitions = 9\ninterval_within = 0.05\n");
  const Experiment experiment = Load(text);
  Store store(db_);
  SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 15);
  EXPECT_EQ(report.planned, 15);
  EXPECT_EQ(report.more_repetitions, 3);
  ASSERT_EQ(report.still_loose.size(), 1u);
  EXPECT_EQ(report.still_loose[0], "mpi w=1 b=100: 0.6 s [0.5, 0.6] over 9 runs");
  EXPECT_EQ(launcher.specs().size(), 15u);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE architecture = 'ring'"), 6);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE architecture = 'mpi' AND seed = 1 + repetition"), 9);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiment_runs"), 15);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiments"), 1);
  // Each added run has its place in the sweep's order after the planned ones.
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT sweep_position) FROM attempts"), 15);

  report = Sweep(store, launcher, experiment);
  EXPECT_EQ(launcher.specs().size(), 15u);
  EXPECT_EQ(report.complete, 15);
  EXPECT_EQ(report.more_repetitions, 3);
  EXPECT_EQ(report.still_loose.size(), 1u);

  // --only: the points it leaves out get no repetitions.
  const Experiment more = Load(text);
  TempDir other;
  Store fresh(other / "results.db");
  RunLock fresh_lock(other / "results.db");
  RunnerOptions options;
  options.only = Filter::Parse("architecture=ring", "--only");
  options.progress = &progress_;
  report = Runner(fresh, launcher, options).Run(more, fresh_lock, no_cancel_);
  EXPECT_EQ(report.complete, 6);
  EXPECT_EQ(report.more_repetitions, 0);
  EXPECT_EQ(Int(fresh, "SELECT count(*) FROM runs WHERE architecture = 'mpi' AND status = 'complete'"), 0);
}

// Concurrent jobs follow. A launcher with hosts runs as many jobs at once
// as they hold, each on hosts of its own; the attempts are stored as by
// one job at a time.
TEST_F(RunnerTest, JobsRunAtOnceOnDisjointHostsAndEachRunIsStoredOnce) {
  FakeLauncher launcher([](const LaunchSpec& spec, int) {
    FakeJob job = GoodJob(spec);
    job.hold_s = 0.3;
    return job;
  });
  launcher.SetPool({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}, 3);
  const Experiment experiment =
      Load(MatrixText("workers = [1, 2]\nbatch_size = [10, 20, 30]\n", 60, 2, "epochs = 2\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 6);
  EXPECT_GE(launcher.most_in_flight(), 2);
  EXPECT_LE(launcher.most_in_flight(), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok'"), 6);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 12);
  for (const LaunchSpec& spec : launcher.specs()) EXPECT_EQ(static_cast<int>(spec.hosts.size()), spec.ranks);
  // Attempts that overlapped in time held no host in common.
  EXPECT_GT(Int(store, "SELECT count(*) FROM attempts a JOIN attempts b ON a.attempt_id < b.attempt_id "
                       "AND a.start_unix_s < b.end_unix_s AND b.start_unix_s < a.end_unix_s"),
            0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts a JOIN attempts b ON a.attempt_id < b.attempt_id "
                       "AND a.start_unix_s < b.end_unix_s AND b.start_unix_s < a.end_unix_s "
                       "JOIN attempt_hosts x ON x.attempt_id = a.attempt_id "
                       "JOIN attempt_hosts y ON y.attempt_id = b.attempt_id AND x.host_id = y.host_id"),
            0);
  EXPECT_GT(report.time.utilisation(), 0);
  EXPECT_EQ(report.time.slots, 4);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM attempt_phases"), 6);
}

TEST_F(RunnerTest, CancelInterruptsEveryJobInFlightAndTheNextSweepRedoesEachOnce) {
  std::atomic<bool> cancel{false};
  std::atomic<bool> first_sweep{true};
  FakeLauncher launcher([&](const LaunchSpec& spec, int) {
    if (!first_sweep) return GoodJob(spec);
    FakeJob slow;
    slow.lines = {RunStartLine(FactsOf(spec))};
    slow.runs_until_cancelled = true;
    return slow;
  });
  launcher.SetPool({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}, 4);
  const Experiment experiment = Load(MatrixText("workers = [1]\nbatch_size = [10, 20, 30, 40, 50, 60]\n"));
  Store store(db_);
  std::thread interrupt([&] {
    while (launcher.in_flight() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel = true;  // Ctrl-C with four jobs in flight
  });
  SweepReport report = Sweep(store, launcher, experiment, cancel);
  interrupt.join();
  EXPECT_TRUE(report.cancelled);
  EXPECT_EQ(report.interrupted, 4);
  EXPECT_EQ(report.pending, 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'interrupted'"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'running'"), 0);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT hosts) FROM attempts"), 4);
  EXPECT_EQ(Text(store, "PRAGMA integrity_check"), "ok");

  first_sweep = false;
  report = Sweep(store, launcher, experiment);
  EXPECT_EQ(report.complete, 6);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok'"), 6);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM (SELECT run_id FROM attempts WHERE status = 'ok' GROUP BY run_id "
                       "HAVING count(*) = 1)"),
            6);
}

// A job of several runs and jobs of one go through one path: runs of one
// shape share jobs, a failure mid-job hands the runs after it back, each
// tried in a job of its own, and every attempt is stored alike.
TEST_F(RunnerTest, AJobOfSeveralRunsStoresEachAsItEndsAndHandsBackTheRest) {
  FakeLauncher launcher([](const LaunchSpec& spec, int launch) {
    FakeJob job;
    // Each run's own options follow --run= (RunOptions): the facts of the first.
    LaunchSpec first = spec;
    if (spec.runs > 1) {
      std::istringstream words(spec.trainer_args.back().substr(6));
      first.trainer_args.clear();
      for (std::string word; words >> word;) first.trainer_args.push_back(word);
    }
    const testing::RunFacts facts = FactsOf(first);
    // The first job: three runs, the second crashes after its run_start.
    const int runs = launch == 1 ? 2 : spec.runs;
    for (int run = 0; run < runs; ++run) {
      job.lines.push_back(RunStartLine(facts));
      if (launch == 1 && run == 1) break;
      for (int e = 1; e <= facts.epochs; ++e) job.lines.push_back(EpochLine(e));
      job.lines.push_back(RunEndLine());
    }
    job.result.exit_code = launch == 1 ? 1 : 0;
    if (launch == 1) job.result.failure_reason = "mpirun exited with status 1";
    return job;
  });
  // Three configurations of one shape: ranks, dataset and network alike.
  const Experiment three = Load(MatrixText("workers = [1]\nlearning_rate = [0.01, 0.02, 0.03]\n", 60, 2,
                                           "epochs = 2\n", "runs_per_job = 3\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, launcher, three);
  EXPECT_EQ(report.complete, 3);
  ASSERT_GE(launcher.specs().size(), 3u);
  EXPECT_EQ(launcher.specs()[0].runs, 3);
  EXPECT_EQ(launcher.specs()[1].runs, 1);  // the run that failed, tried again alone
  EXPECT_EQ(launcher.specs()[2].runs, 1);  // the run the job did not reach, alone
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM attempts ORDER BY attempt_id)"),
            "ok,failed,ok,ok");
  // The run stored before the job ended has the job's exit code and logs too.
  EXPECT_EQ(Int(store, "SELECT exit_code FROM attempts WHERE attempt_id = 1"), 1);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM attempt_phases"), 4);
}

}  // namespace
}  // namespace dmlbench
