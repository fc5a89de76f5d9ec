// The slurm provider: how srun's standard error is read (no Slurm needed),
// then sweeps through the real `dmlbench run` on a private Slurm
// (SlurmFixture; skipped unless root with the Slurm packages installed).
#include "orchestrator/launch/slurm/slurm_launcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "orchestrator/core/toml_reader.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/slurm_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

// What srun printed (22.05), kept from real runs.
constexpr char kLaunched[] =
    "srun: defined options\n"
    "srun: jobid 1: nodes(1):`n1', cpu counts: 1(x1)\n"
    "srun: launching StepId=1.3 on host n1, 1 tasks: 0\n"
    "srun: launch/slurm: _task_start: Node n1, 1 tasks started\n";

TEST(StepReportTest, ReadsTheStepAndItsNodes) {
  const StepReport report = ReadStepReport(std::string(kLaunched) +
                                           "srun: launching StepId=1.3 on host n2, 1 tasks: 1\n");
  EXPECT_EQ(report.step_id, "1.3");
  EXPECT_EQ(report.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(report.state, "");
}

TEST(StepReportTest, TimeLimit) {
  EXPECT_EQ(ReadStepReport(std::string(kLaunched) +
                           "slurmstepd-n1: error: *** STEP 1.3 ON n1 CANCELLED AT 2026-12-05T07:36:40 DUE TO "
                           "TIME LIMIT ***\nsrun: Force Terminated StepId=1.3\n")
                .state,
            "TIMEOUT");
  EXPECT_EQ(ReadStepReport("slurmstepd-n1: error: *** JOB 7 ON n1 CANCELLED AT 2026-12-05T07:36:40 DUE TO TIME "
                           "LIMIT ***\n")
                .state,
            "TIMEOUT");
}

TEST(StepReportTest, CancelledNodeFailurePreemption) {
  EXPECT_EQ(ReadStepReport("slurmstepd-n1: error: *** STEP 1.4 ON n1 CANCELLED AT 2026-12-05T07:37:57 ***\n"
                           "srun: error: n1: task 0: Killed\n")
                .state,
            "CANCELLED");
  EXPECT_EQ(ReadStepReport("srun: error: *** STEP 1.4 ON n1 CANCELLED AT 2026-12-05T07:37:57 DUE TO NODE "
                           "FAILURE ***\n")
                .state,
            "NODE_FAIL");
  EXPECT_EQ(ReadStepReport("slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-12-05T07:37:57 DUE TO "
                           "PREEMPTION ***\n")
                .state,
            "PREEMPTED");
}

TEST(StepReportTest, NothingLaunched) {
  const StepReport report =
      ReadStepReport("srun: error: Unable to create step for job 5: Job/step already completing or completed\n");
  EXPECT_EQ(report.step_id, "");
  EXPECT_TRUE(report.nodes.empty());
  EXPECT_EQ(report.state, "");
}

TEST(StepReportTest, ProgressLinesAreLeftOutErrorsKept) {
  EXPECT_TRUE(IsSrunProgressLine("srun: launching StepId=1.3 on host n1, 1 tasks: 0"));
  EXPECT_TRUE(IsSrunProgressLine("srun: jobid 1: nodes(1):`n1', cpu counts: 1(x1)"));
  EXPECT_FALSE(IsSrunProgressLine("srun: error: n1: task 0: Exited with exit code 3"));
  EXPECT_FALSE(IsSrunProgressLine("srun: Job step aborted: Waiting up to 32 seconds for job step to finish."));
  EXPECT_FALSE(IsSrunProgressLine("slurmstepd-n1: error: *** STEP 1.4 ON n1 CANCELLED AT x ***"));
  EXPECT_FALSE(IsSrunProgressLine("trainer: bad option"));
}

// Sweeps on a private Slurm, through the real program.
class SlurmSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = testing::SlurmFixture::Unavailable();
    if (!why.empty()) GTEST_SKIP() << "no private Slurm here: " << why;
    slurm_ = std::make_unique<testing::SlurmFixture>();
  }

  std::string WriteMatrix(const std::string& body) {
    testing::WriteFile(dir_ / "matrix.toml", "[experiment]\nname = \"slurm-test\"\n" + body);
    return dir_ / "matrix.toml";
  }

  // A matrix of one run of one rank, for the shell-script trainers below.
  std::string WriteOneRunMatrix(const std::string& execution) {
    testing::WriteFile(dir_ / "matrix.toml", "[experiment]\nname = \"slurm-test\"\n[defaults]\ndataset = \"synthetic\"\n"
                                             "[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\nattempts = 1\n" +
                                                 execution);
    return dir_ / "matrix.toml";
  }

  CommandOutput Run(const std::string& matrix, const std::string& trainer = DMLBENCH_TRAINER) {
    return testing::Dmlbench({"run", matrix, "--db", db(), "--trainer", trainer}, 300);
  }

  std::string db() const { return dir_ / "results.db"; }

  // Whether Slurm's queue is empty within 5 s (a cancelled job leaves it
  // once its node confirmed).
  static bool QueueEmpties() {
    for (int i = 0; i < 50; ++i) {
      if (RunCommand({"squeue", "--noheader"}, 30).out.empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // A trainer of one rank that starts its run and then sleeps.
  std::string SleepingTrainer() {
    return testing::WriteScript(dir_ / "trainer", testing::EchoRunStart() + "exec sleep 300\n");
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::SlurmFixture> slurm_;
};

TEST_F(SlurmSweepTest, QuickstartLikeSweepCompletesAsStepsOfOneAllocation) {
  const std::string matrix = WriteMatrix(
      "[defaults]\nepochs = 1\nbatch_size = 50\nhidden = [16]\nmax_iterations_per_epoch = 5\n"
      "dataset = \"synthetic\"\n"
      "[matrix]\narchitecture = [\"ring\", \"mpi\", \"ps\", \"p2p\"]\nworkers = [1, 2]\nservers = [1]\n"
      "[execution]\nprovider = \"slurm\"\ntimeout_s = 120\nattempts = 1\n"
      "[slurm]\npartition = \"debug\"\n");
  const CommandOutput run = Run(matrix);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out << slurm_->logs();
  EXPECT_NE(run.out.find("8 complete"), std::string::npos) << run.out;

  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 8);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts = 'n1'"), 8);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM epochs"), 8);
  // One allocation for the sweep: every step's command names the same job.
  EXPECT_EQ(testing::Int(store, "SELECT count(DISTINCT substr(command_line, instr(command_line, '--jobid='), 12)) "
                                "FROM attempts"),
            1);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE command_line LIKE '%# slurm job %, step %'"), 8);
  EXPECT_EQ(testing::Text(store, "SELECT provider FROM hosts WHERE name = 'n1'"), "slurm");
  EXPECT_TRUE(QueueEmpties()) << "the allocation was not released at the end of the sweep";
}

TEST_F(SlurmSweepTest, StepBeyondItsTimeLimitIsRecordedAsTimeout) {
  // Slurm counts time limits in minutes and checks them about every 30 s:
  // this test takes 60 to 95 s.
  const std::string matrix =
      WriteOneRunMatrix("timeout_s = 200\n[slurm]\ntime_limit_min = 1\nallocation = \"per-run\"\n");
  const CommandOutput run = Run(matrix, SleepingTrainer());
  EXPECT_NE(run.exit_code, 0);
  Store store(db());
  EXPECT_EQ(testing::Text(store, "SELECT status FROM attempts"), "timed_out");
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts");
  EXPECT_NE(reason.find("ended TIMEOUT (time_limit_min 1)"), std::string::npos) << reason;
  EXPECT_TRUE(QueueEmpties());
}

TEST_F(SlurmSweepTest, StepCancelledFromOutsideIsRecordedAsCancelled) {
  const std::string matrix = WriteOneRunMatrix("timeout_s = 120\n");
  std::atomic<bool> finished = false;
  std::thread outside([&finished] {
    // The run's step, once it runs: "<job>.<step>".
    while (!finished.load()) {
      const std::string steps = RunCommand({"squeue", "--steps", "--noheader", "--format=%i"}, 30).out;
      const size_t dot = steps.find('.');
      if (dot != std::string::npos && std::isdigit(static_cast<unsigned char>(steps[dot + 1]))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        RunCommand({"scancel", steps.substr(0, steps.find('\n'))}, 30);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const CommandOutput run = Run(matrix, SleepingTrainer());
  finished = true;
  outside.join();
  EXPECT_NE(run.exit_code, 0);
  Store store(db());
  EXPECT_EQ(testing::Text(store, "SELECT status FROM attempts"), "failed");
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts");
  EXPECT_NE(reason.find("ended CANCELLED"), std::string::npos) << reason;
}

TEST_F(SlurmSweepTest, HostileStringsReachSlurmLiterally) {
  const std::string witness = dir_ / "witness";
  const std::string hostile = "x; touch " + witness + " $(touch " + witness + ") `touch " + witness + "` '\" *";
  // A comment is stored by Slurm as given; a partition of that name does not exist.
  std::string matrix = WriteOneRunMatrix("timeout_s = 60\n[slurm]\nsalloc_args = [\"--comment=" +
                                         Quoted(hostile).substr(1) + "]\nsrun_args = [\"--comment=" +
                                         Quoted(hostile).substr(1) + "]\n");
  CommandOutput run = Run(matrix, testing::WriteScript(dir_ / "trainer", testing::GoodTrainerBody()));
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  const std::string jobs = RunCommand({"scontrol", "show", "job"}, 30).out;
  EXPECT_NE(jobs.find("Comment=" + hostile), std::string::npos) << jobs;

  matrix = WriteOneRunMatrix("timeout_s = 60\n[slurm]\npartition = " + Quoted(hostile) + "\n");
  run = Run(matrix, testing::WriteScript(dir_ / "trainer", testing::GoodTrainerBody()));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("slurm: `sinfo "), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(witness)) << "a shell ran a [slurm] string";
}

}  // namespace
}  // namespace dmlbench
