// The run loop end to end through the real mpirun on a real SQLite file:
// the real trainer, and a hanging trainer (a shell script) stopped by its
// timeout. The run loop's own logic is tested without processes in
// runner_test.cc.
#include "orchestrator/run/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/store/gzip.h"
#include "tests/orchestrator/run/runner_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

using testing::Int;
using testing::Text;
using testing::MatrixText;

using testing::Echo;
using testing::RunStartLine;
using testing::TempDir;
using testing::WriteScript;

class RunnerMpirunTest : public ::testing::Test {
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
    return Runner(store, launcher, options).Run(experiment, lock_, cancel);
  }

  SweepReport Sweep(Store& store, const std::string& trainer, const Experiment& experiment) {
    return Sweep(store, trainer, experiment, no_cancel_);
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
  RunLock lock_{db_};  // before any Store of the test, released after them
  std::ostringstream warnings_;
  std::ostringstream progress_;
  std::atomic<bool> no_cancel_{false};
};

TEST_F(RunnerMpirunTest, HangingTrainerTimesOutAndTheSweepGoesOn) {
  const std::string trainer = WriteScript(dir_ / "trainer",
                                          "case \" $* \" in *\" --architecture mpi \"*)\n" + testing::EchoRunStart() +
                                              "  exec sleep 60;;\nesac\n" + testing::GoodTrainerBody());
  // 3 s: long enough for the good run's mpirun to start on a loaded machine.
  const Experiment experiment = Load(MatrixText("architecture = [\"mpi\", \"ring\"]\nworkers = [1]\n", 3, 1));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, experiment);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.failure_reason, "timed out after 3 s");
  EXPECT_EQ(report.runs[1].item.state, RunState::kComplete);
  EXPECT_EQ(Text(store, "SELECT status FROM attempts WHERE number = 1 AND run_id = "
                        "(SELECT run_id FROM runs WHERE architecture = 'mpi')"),
            "timed_out");
}

TEST_F(RunnerMpirunTest, RealTrainerThroughRealMpirun) {
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\"]\nworkers = [1, 2]\n", 120, 1, "epochs = 2\nbatch_size = 10\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, DMLBENCH_TRAINER, experiment);
  ASSERT_EQ(report.complete, 2) << report.runs[0].item.failure_reason << report.runs[1].item.failure_reason;
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM rank_phases"), 2 * 1 + 2 * 2);
  // Every epoch has one time per iteration (3, the cap), numbered from 1,
  // and together they fit in the epoch's wall time.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM iterations"), 4 * 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs e WHERE e.iterations = (SELECT count(*) FROM iterations i "
                       "WHERE i.attempt_id = e.attempt_id AND i.epoch = e.epoch AND i.iteration BETWEEN 1 AND "
                       "e.iterations AND i.wall_s >= 0) AND e.wall_s + 1e-5 * e.iterations >= "
                       "(SELECT sum(wall_s) FROM iterations i WHERE i.attempt_id = e.attempt_id AND i.epoch = e.epoch)"),
            4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE length(parameter_checksum) = 64"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE mpi_library_version LIKE 'Open MPI%'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE command_line LIKE '%--synthetic 10000%'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE trainer_dataset_sha256 = "
                       "(SELECT dataset_sha256 FROM runs WHERE runs.run_id = attempts.run_id)"),
            2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM run_summary"), 2);
}

// [execution] max_repetitions through the real trainer: 2 runs of a point
// cannot give a 95% interval (that takes 6), so each point gets its one more
// repetition, measured and stored like the planned ones, and members of the
// experiment; a sweep again adds nothing.
TEST_F(RunnerMpirunTest, RepetitionsBeyondThePlannedOnesAreRealRuns) {
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\"]\nworkers = [1, 2]\n", 120, 2, "epochs = 2\nbatch_size = 10\n",
                      "repetitions = 2\nmax_repetitions = 3\ninterval_within = 0.5\n"));
  Store store(db_);
  SweepReport report = Sweep(store, DMLBENCH_TRAINER, experiment);
  ASSERT_EQ(report.complete, 6) << progress_.str();
  EXPECT_EQ(report.more_repetitions, 2);
  EXPECT_EQ(report.still_loose.size(), 2u);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE repetition = 2 AND status = 'complete' AND seed = 3"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE repetition = 2 AND split = 'calibration'"), 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM steady_epochs s JOIN runs r USING (run_id) WHERE r.repetition = 2"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiment_runs"), 6);

  report = Sweep(store, DMLBENCH_TRAINER, experiment);
  EXPECT_EQ(report.complete, 6);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 6);
}

// ---- several runs in one job ([execution] runs_per_job) ----------------------

// 8 runs: 2 configurations of 1 rank and 2 of 2, 2 repetitions each, at
// most 3 a job. A job never holds two repetitions of one configuration, so
// 4 jobs of 2 runs, each run stored as its own complete attempt with the
// job's command line, hosts, exit status and output; MPI is initialised
// once a job.
TEST_F(RunnerMpirunTest, RunsSharingAJobAreEachStoredAsARunOfTheirOwn) {
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1, 2]\n", 120, 1, "epochs = 2\nbatch_size = 10\n",
                      "repetitions = 2\nruns_per_job = 3\n"));
  Store store(db_);
  const SweepReport report = Sweep(store, DMLBENCH_TRAINER, experiment);
  ASSERT_EQ(report.complete, 8) << progress_.str();
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND exit_code = 0"), 8);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT command_line) FROM attempts"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE command_line LIKE '%--run=--architecture%'"), 8);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM (SELECT 1 FROM attempts JOIN runs USING (run_id) "
                       "GROUP BY attempts.command_line, architecture, workers HAVING count(*) > 1)"),
            0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE hosts <> ''"), 8);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT attempt_id) FROM attempt_hosts"), 8);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE log_dir IS NOT NULL"), 8);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases WHERE phase = 'mpi_init' AND seconds > 0"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_phases WHERE phase = 'steady_epochs' AND seconds > 0"), 8);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 16);
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT sweep_position) FROM attempts"), 8);
  // Each run computes what it computes alone.
  const std::string shared = Text(store, "SELECT group_concat(parameter_checksum, ' ') FROM "
                                         "(SELECT parameter_checksum FROM runs ORDER BY run_key)");
  Store alone_store(dir_ / "alone.db");
  RunLock alone_lock(dir_ / "alone.db");
  LocalLauncher launcher = MakeLauncher(DMLBENCH_TRAINER);
  Experiment one_a_job = experiment;
  one_a_job.execution.runs_per_job = 1;
  ASSERT_EQ(Runner(alone_store, launcher, RunnerOptions{}).Run(one_a_job, alone_lock, no_cancel_).complete, 8);
  EXPECT_EQ(Text(alone_store, "SELECT group_concat(parameter_checksum, ' ') FROM "
                              "(SELECT parameter_checksum FROM runs ORDER BY run_key)"),
            shared);
  EXPECT_EQ(Int(alone_store, "SELECT count(DISTINCT command_line) FROM attempts"), 8);
}

// A run of one epoch measures its start too: it never shares a job.
TEST_F(RunnerMpirunTest, ARunOfOneEpochHasAJobOfItsOwn) {
  const Experiment experiment = Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 120, 1,
                                                "epochs = 1\n", "runs_per_job = 3\n"));
  Store store(db_);
  ASSERT_EQ(Sweep(store, DMLBENCH_TRAINER, experiment).complete, 2) << progress_.str();
  EXPECT_EQ(Int(store, "SELECT count(DISTINCT command_line) FROM attempts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE command_line LIKE '%--run=%'"), 0);
}

// Launches through the local launcher and raises `cancel` once the job's
// first run_end went by: the orchestrator stopped in the middle of a job.
// The lines after it are not passed on and the job ends interrupted, as
// when the stop comes before the next run ends (a run here takes less
// time than the launcher takes to see the stop).
class CancelAfterFirstRun : public Launcher {
 public:
  CancelAfterFirstRun(Launcher& inner, std::atomic<bool>& cancel) : inner_(inner), cancel_(cancel) {}
  std::vector<HostFacts> Prepare() override { return inner_.Prepare(); }
  std::string TrainerSha256() const override { return inner_.TrainerSha256(); }
  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override {
    LaunchResult result = inner_.Launch(
        spec,
        [&](std::string_view line) {
          if (cancel_) return;
          on_line(line);
          if (line.find("\"run_end\"") != std::string_view::npos) cancel_ = true;
        },
        cancel);
    result.interrupted = true;
    result.failure_reason = "interrupted";
    return result;
  }

 private:
  Launcher& inner_;
  std::atomic<bool>& cancel_;
};

// Stopped in the middle of a job of 3 runs: the run that ended is kept, the
// one under way is interrupted, the last was never begun; the next sweep
// runs the two left and nothing twice.
TEST_F(RunnerMpirunTest, AJobStoppedHalfwayKeepsItsFinishedRunAndTheNextSweepRunsTheRest) {
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\"]\nworkers = [1]\nbatch_size = [10, 20, 30]\n", 120, 2,
                      "epochs = 3\n", "runs_per_job = 3\n"));
  Store store(db_);
  std::atomic<bool> cancel{false};
  LocalLauncher local = MakeLauncher(DMLBENCH_TRAINER);
  CancelAfterFirstRun stopping(local, cancel);
  SweepReport report = Runner(store, stopping, RunnerOptions{}).Run(experiment, lock_, cancel);
  EXPECT_TRUE(report.cancelled);
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.interrupted, 1);
  EXPECT_EQ(report.pending, 1);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'interrupted'"), 1);
  // The finished run has the job's hosts and output though the job was stopped.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts <> '' AND log_dir IS NOT NULL"),
            1);

  report = Sweep(store, DMLBENCH_TRAINER, experiment);
  EXPECT_EQ(report.complete, 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok'"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 4);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 9);
}

// ---- errors that no retry can fix, through the real mpirun and trainer -----

TEST_F(RunnerMpirunTest, MoreRanksThanSlotsFailOnceAndStopTheSweep) {
  // One slot: Open MPI refuses a job of two ranks before it starts.
  LocalLauncherOptions options;
  options.mpirun = DMLBENCH_MPIRUN;
  options.mpirun_args = {"--host", "localhost:1"};
  options.ranks_on_this_machine = false;
  options.trainer = DMLBENCH_TRAINER;
  LocalLauncher launcher(options);
  const Experiment experiment = Load(MatrixText("workers = [2, 1]\n", 120, 2));
  Store store(db_);
  RunnerOptions runner_options;
  runner_options.progress = &progress_;
  const SweepReport report = Runner(store, launcher, runner_options).Run(experiment, lock_, no_cancel_);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[1].item.state, RunState::kPending);
  EXPECT_EQ(report.runs[0].item.failure_reason,
            "mpirun exited with status 1: Open MPI has fewer slots than the job has ranks");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 1);
}

TEST_F(RunnerMpirunTest, ADatasetTheTrainerCannotReadFailsOnceAndStopsTheSweep) {
  // Files with the right names and the wrong content: their checksum plans, the trainer refuses them.
  const std::string dataset = dir_ / "dataset";
  std::filesystem::create_directories(dataset);
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    testing::WriteFile(dataset + "/" + name, "not an IDX file");
  }
  const Experiment experiment =
      Load(MatrixText("architecture = [\"ring\", \"mpi\"]\ndataset = [\"fashion-mnist\"]\n", 120, 2));
  Store store(db_);
  LocalLauncher launcher = MakeLauncher(DMLBENCH_TRAINER);
  RunnerOptions options;
  options.trainer = DMLBENCH_TRAINER;
  options.dataset_dir = dataset;
  options.progress = &progress_;
  const SweepReport report = Runner(store, launcher, options).Run(experiment, lock_, no_cancel_);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[1].item.state, RunState::kPending);
  EXPECT_NE(report.runs[0].item.failure_reason.find("dmlbench-trainer: error: " + dataset), std::string::npos)
      << report.runs[0].item.failure_reason;
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 1);
}

TEST_F(RunnerMpirunTest, EveryAttemptKeepsWhatItsRanksPrinted) {
  // The mpi run fails on rank 1 in its first attempt and succeeds in its second.
  const std::string trainer = WriteScript(
      dir_ / "trainer", "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && [ ! -e " + (dir_ / "failed-once") + " ]; then\n"
                        "  touch " + (dir_ / "failed-once") + "; echo 'rank 1 gives up' >&2; exit 4\n"
                        "fi\n"
                        "[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] || exit 0\n" + testing::GoodTrainerBody());
  const Experiment experiment = Load(
      "[experiment]\nname = \"logs\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\narchitecture = [\"mpi\"]\n"
      "workers = [2]\n[execution]\ntimeout_s = 60\nattempts = 2\n");
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, experiment);
  ASSERT_EQ(report.complete, 1) << report.runs[0].item.failure_reason;
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE log_dir IS NOT NULL"), 2);
  // Two ranks' stdout and stderr and mpirun's stderr, for each attempt.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_logs"), 10);
  const std::int64_t run_id = Int(store, "SELECT run_id FROM runs");
  const std::vector<AttemptRecord> attempts = store.Attempts(run_id);
  ASSERT_EQ(attempts.size(), 2u);
  const std::vector<AttemptLog> first = store.AttemptLogs(attempts[0].attempt_id);
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + first[3].file), "rank 1 gives up\n");
  const std::vector<AttemptLog> second = store.AttemptLogs(attempts[1].attempt_id);
  ASSERT_EQ(second.size(), 5u);
  testing::RunFacts launched;
  launched.architecture = "mpi";
  launched.workers = 2;
  EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + second[0].file),
            RunStartLine(launched) + "\n" + testing::EpochLine(1) + "\n" + testing::RunEndLine() + "\n");
  EXPECT_EQ(GunzipFile(store.logs_dir() + "/" + second[3].file), "");
}

// ---- the trust boundary: what a trainer prints is checked, not believed ----
// Each run below would be stored complete if its output were taken on
// trust; it fails as malformed output instead, keeps its logs, counts its
// attempts, and the sweep goes on with the next run.

// A trainer printing a run of another dataset than the run key names, for
// the ring run only.
TEST_F(RunnerMpirunTest, TrustRunStartThatContradictsTheLaunchFailsThatRunAsMalformed) {
  testing::RunFacts other_data;
  other_data.dataset_sha256 = "synthetic:1:1000";
  const std::string trainer = WriteScript(
      dir_ / "trainer", "case \" $* \" in *\" --architecture ring \"*)\n" + Echo(RunStartLine(other_data)) +
                            Echo(testing::EpochLine(1)) + Echo(testing::RunEndLine()) + "  exit 0;;\nesac\n" +
                            testing::GoodTrainerBody());
  Store store(db_);
  const SweepReport report =
      Sweep(store, trainer, Load(MatrixText("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n")));
  EXPECT_EQ(report.complete, 1);
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.failure_reason,
            "malformed trainer output: event line 1: run_start: field 'dataset_sha256' is \"synthetic:1:1000\", but "
            "the run was launched with \"synthetic:1:10000\"");
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'ring'"), 2);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts a JOIN runs r USING (run_id) "
                       "WHERE r.architecture = 'ring' AND a.status = 'failed' AND a.log_dir IS NOT NULL"),
            2);
  EXPECT_EQ(report.runs[1].item.state, RunState::kComplete);
}

TEST_F(RunnerMpirunTest, TrustRunEndOkBeforeEveryEpochFailsTheRunAsMalformed) {
  const std::string trainer = WriteScript(
      dir_ / "trainer", testing::EchoRunStart() + Echo(testing::EpochLine(1)) + Echo(testing::RunEndLine()));
  Store store(db_);
  const SweepReport report = Sweep(store, trainer, Load(MatrixText("workers = [1]\n", 60, 1, "epochs = 3\n")));
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.failure_reason,
            "malformed trainer output: event line 3: run_end: status ok after 1 of the 3 epochs launched");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 0);
}

// The merged stream reads as a valid run; rank 1 printed it.
TEST_F(RunnerMpirunTest, TrustEventsFromARankOtherThanZeroFailTheRunAsMalformed) {
  const std::string trainer =
      WriteScript(dir_ / "trainer", "[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] || exit 0\n" + testing::GoodTrainerBody());
  Store store(db_);
  const SweepReport report = Sweep(
      store, trainer,
      Load("[experiment]\nname = \"ranks\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\nworkers = [2]\n"
           "[execution]\ntimeout_s = 60\nattempts = 1\n"));
  EXPECT_EQ(report.runs[0].item.state, RunState::kFailed);
  EXPECT_EQ(report.runs[0].item.failure_reason,
            "malformed trainer output: rank 1 printed a \"run_start\" event on its standard output; events come "
            "from rank 0 only");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempt_logs WHERE rank = 1 AND stream = 'stdout'"), 1);
}

}  // namespace
}  // namespace dmlbench
