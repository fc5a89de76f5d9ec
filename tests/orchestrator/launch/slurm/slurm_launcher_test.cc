// The slurm provider: how srun's standard error is read and `dmlbench plan`
// (no Slurm needed), then sweeps through the real `dmlbench run` on a
// private Slurm (SlurmFixture; skipped unless root with the Slurm packages
// installed).
#include "orchestrator/launch/slurm/slurm_launcher.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "orchestrator/core/toml_reader.h"
#include "orchestrator/launch/slurm/slurm_queries.h"
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

TEST(StepReportTest, NodeFailureSaidOnlyBySrun) {
  const StepReport report = ReadStepReport(std::string(kLaunched) + "srun: error: Node failure on n1\n"
                                                                    "srun: Complete StepId=1.3+0 received\n");
  EXPECT_EQ(report.state, "NODE_FAIL");
  EXPECT_EQ(report.failed_nodes, (std::vector<std::string>{"n1"}));
}

// A node that cannot start the program: slurmstepd's execve() error names
// the path and the cause, srun the node.
TEST(StepReportTest, AProgramANodeCannotExecuteIsNamedWithItsNode) {
  const StepReport report = ReadStepReport(
      std::string(kLaunched) +
      "slurmstepd: error: execve(): /tmp/x/build/trainer/dmlbench-trainer: No such file or directory\n"
      "srun: error: n1: task 0: Exited with exit code 2\n");
  EXPECT_EQ(report.cannot_execute, "/tmp/x/build/trainer/dmlbench-trainer: No such file or directory");
  EXPECT_EQ(report.exited_node, "n1");
  EXPECT_EQ(ReadStepReport(kLaunched).cannot_execute, "");
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

// Planning a Slurm sweep asks the controller nothing: with no controller to
// reach, and every Slurm client on PATH one that leaves a witness, `plan`
// prints the runs.
TEST(SlurmPlanTest, PlansWithoutAReachableController) {
  testing::TempDir dir;
  const std::string witness = dir / "asked";
  std::filesystem::create_directory(dir / "bin");
  for (const char* client : {"sinfo", "squeue", "scontrol", "salloc", "srun", "sbatch", "scancel", "sacct"}) {
    testing::WriteScript(dir / ("bin/" + std::string(client)), "echo \"$0 $*\" >> " + ShellQuote(witness) + "\nexit 1\n");
  }
  // A controller on a port nobody listens on, should a client be found elsewhere.
  testing::WriteFile(dir / "slurm.conf", "ClusterName=nowhere\nSlurmctldHost=localhost\nSlurmctldPort=9\n"
                                         "NodeName=n1 CPUs=1 State=UNKNOWN\nPartitionName=debug Nodes=n1 Default=YES\n");
  testing::WriteFile(dir / "matrix.toml", "[experiment]\nname = \"slurm-plan\"\n[defaults]\ndataset = \"synthetic\"\n"
                                          "[matrix]\nworkers = [1, 2]\n[execution]\nrepetitions = 2\n"
                                          "provider = \"slurm\"\n[slurm]\npartition = \"debug\"\n");
  // Through env(1): ChildOptions::extra_env adds to the environment, it does not replace PATH.
  const CommandOutput plan =
      RunCommand({"env", "SLURM_CONF=" + dir / "slurm.conf", "PATH=" + dir / "bin" + ":" + std::getenv("PATH"),
                  testing::DmlbenchProgram(), "plan", dir / "matrix.toml", "--db", dir / "results.db", "--trainer",
                  DMLBENCH_TRAINER},
                 60);
  ASSERT_EQ(plan.exit_code, 0) << plan.err << plan.out;
  EXPECT_NE(plan.out.find("slurm-plan: 4 runs: 0 complete, 4 pending"), std::string::npos) << plan.out;
  EXPECT_FALSE(std::filesystem::exists(witness)) << testing::ReadFile(witness);
  EXPECT_FALSE(std::filesystem::exists(dir / "results.db")) << "planning wrote a database";
}

// Sweeps on a private Slurm, through the real program.
class SlurmSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = testing::SlurmFixture::Unavailable();
    if (!why.empty()) GTEST_SKIP() << "no private Slurm here: " << why;
    slurm_ = std::make_unique<testing::SlurmFixture>(nodes_, cpus_per_node_);
  }

  std::string WriteMatrix(const std::string& body) {
    testing::WriteFile(dir_ / "matrix.toml", "[experiment]\nname = \"slurm-test\"\n" + body);
    return dir_ / "matrix.toml";
  }

  // A matrix of tiny runs of the real trainer: its [matrix] and [slurm] lines.
  std::string WriteTinyRunsMatrix(const std::string& axes, const std::string& slurm) {
    return WriteMatrix("[defaults]\nepochs = 1\nbatch_size = 50\nhidden = [16]\nmax_iterations_per_epoch = 5\n"
                       "dataset = \"synthetic\"\n[matrix]\n" + axes +
                       "[execution]\nprovider = \"slurm\"\ntimeout_s = 120\nattempts = 1\n[slurm]\n" + slurm);
  }

  // A matrix of one run of one rank (or `workers`), for the shell-script trainers below.
  std::string WriteOneRunMatrix(const std::string& execution, int workers = 1, int attempts = 1) {
    testing::WriteFile(dir_ / "matrix.toml", "[experiment]\nname = \"slurm-test\"\n[defaults]\ndataset = \"synthetic\"\n"
                                             "[matrix]\nworkers = [" + std::to_string(workers) +
                                                 "]\n[execution]\nprovider = \"slurm\"\nattempts = " +
                                                 std::to_string(attempts) + "\n" + execution);
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

  // A trainer of `ranks` ranks whose rank 0 starts its run, waits `seconds`
  // and ends it well; the other ranks wait as long.
  std::string SlowTrainer(double seconds, int ranks = 1) {
    std::string body = "if [ \"${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-0}}\" != 0 ]; then exec sleep " +
                       std::to_string(seconds) + "; fi\n";
    body += testing::EchoRunStart() + "sleep " + std::to_string(seconds) + "\n";
    body += testing::Echo(testing::EpochLine(1, ranks)) + testing::Echo(testing::RunEndLine());
    return testing::WriteScript(dir_ / "trainer", body);
  }

  // The step id and node list of a job step of the sweep's trainer running
  // now ("" and "" when there is none): not a step that stages the trainer
  // on the nodes (a shell) or removes it.
  static std::pair<std::string, std::string> TrainerStep() {
    std::istringstream steps(RunCommand({"squeue", "--steps", "--noheader", "--format=%i|%N|%j"}, 30).out);
    for (std::string line; std::getline(steps, line);) {
      const size_t dot = line.find('.');
      const size_t bar = line.find('|');
      const size_t name = line.rfind('|');
      if (dot == std::string::npos || bar == std::string::npos || dot > bar ||
          !std::isdigit(static_cast<unsigned char>(line[dot + 1]))) {
        continue;
      }
      const std::string program = line.substr(name + 1);
      if (program == "sh" || program == "rm") continue;
      return {line.substr(0, bar), line.substr(bar + 1, name - bar - 1)};
    }
    return {"", ""};
  }

  // TrainerStep() once there is one (waits up to 60 s).
  static std::pair<std::string, std::string> RunningStep() {
    for (int i = 0; i < 600; ++i) {
      const auto step = TrainerStep();
      if (!step.first.empty()) return step;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return {"", ""};
  }

  // Starts `dmlbench run` of `matrix` as `orchestrator`, for the test to signal.
  void StartRun(Child& orchestrator, const std::string& matrix, const std::string& trainer) {
    std::string error;
    ASSERT_TRUE(orchestrator.Start({testing::DmlbenchProgram(), "run", matrix, "--db", db(), "--trainer", trainer},
                                   {}, &error))
        << error;
  }

  // The database holds `runs` runs, each complete by exactly one ok attempt,
  // besides the one attempt interrupted; the queue empties.
  void ExpectEachRunCompleteOnceAfterOneInterruption(int runs) {
    Store store(db());
    EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs"), runs);
    EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), runs);
    EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok'"), runs);
    EXPECT_EQ(testing::Int(store, "SELECT count(DISTINCT run_id) FROM attempts WHERE status = 'ok'"), runs);
    EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'interrupted'"), 1);
    EXPECT_TRUE(QueueEmpties());
  }

  int nodes_ = 1;
  int cpus_per_node_ = 8;
  testing::TempDir dir_;
  std::unique_ptr<testing::SlurmFixture> slurm_;
};

TEST_F(SlurmSweepTest, QuickstartLikeSweepCompletesAsStepsOfOneAllocation) {
  const std::string matrix =
      WriteTinyRunsMatrix("architecture = [\"ring\", \"mpi\", \"ps\", \"p2p\"]\nworkers = [1, 2]\nservers = [1]\n",
                          "partition = \"debug\"\n");
  const CommandOutput run = Run(matrix);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out << slurm_->logs();
  EXPECT_NE(run.out.find("8 complete"), std::string::npos) << run.out;

  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 8);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts = 'n1'"), 8);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM epochs"), 8);
  // One allocation for the sweep: every step's command names the same job.
  EXPECT_EQ(testing::Int(store, "SELECT count(DISTINCT slurm_job_id) FROM attempts"), 1);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE command_line LIKE 'srun % --jobid=' || "
                                "slurm_job_id || ' %' AND slurm_step_id LIKE slurm_job_id || '._' AND "
                                "slurm_nodes = 'n1' AND slurm_state = 'COMPLETED' AND slurm_exit = 'srun exit 0'"),
            8)
      << testing::Text(store, "SELECT group_concat(slurm_job_id || ' ' || slurm_step_id || ' ' || slurm_state || ' ' "
                              "|| slurm_exit, ' | ') FROM attempts");
  // The node's facts as `scontrol show node` gives them.
  EXPECT_EQ(testing::Text(store, "SELECT provider FROM hosts WHERE name = 'n1'"), "slurm");
  EXPECT_EQ(testing::Int(store, "SELECT cores FROM hosts WHERE name = 'n1'"), 8);
  EXPECT_EQ(testing::Text(store, "SELECT tags_json FROM hosts WHERE name = 'n1'"), "{\"features\": \"fixture\"}");
  EXPECT_EQ(testing::Text(store, "SELECT substr(kernel, 1, 6) FROM hosts WHERE name = 'n1'"), "Linux ");
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempt_hosts"), 8);
  EXPECT_TRUE(QueueEmpties()) << "the allocation was not released at the end of the sweep";
}

// Runs of one shape in one job step ([execution] runs_per_job): each its
// own complete attempt, with the step's command line and node.
TEST_F(SlurmSweepTest, RunsOfOneShapeShareAJobStep) {
  const std::string matrix = WriteMatrix(
      "[defaults]\nepochs = 2\nbatch_size = 50\nhidden = [16]\nmax_iterations_per_epoch = 5\n"
      "dataset = \"synthetic\"\n[matrix]\narchitecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [2]\n"
      "[execution]\nprovider = \"slurm\"\ntimeout_s = 120\nattempts = 1\nruns_per_job = 3\n[slurm]\n"
      "partition = \"debug\"\n");
  const CommandOutput run = Run(matrix);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out << slurm_->logs();
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 3);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM epochs"), 6);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts = 'n1' AND "
                                "command_line LIKE '%--run=%--run=%--run=%' AND slurm_state = 'COMPLETED' AND "
                                "slurm_exit = 'srun exit 0'"),
            3)
      << testing::Text(store, "SELECT group_concat(command_line, ' | ') FROM attempts");
  EXPECT_EQ(testing::Int(store, "SELECT count(DISTINCT command_line) FROM attempts"), 1);
  EXPECT_TRUE(QueueEmpties());
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
      const std::string step = TrainerStep().first;
      if (!step.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        RunCommand({"scancel", step}, 30);
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

TEST_F(SlurmSweepTest, AllocationCancelledFromOutsideIsRecordedAndReplaced) {
  const std::string matrix = WriteOneRunMatrix("repetitions = 2\ntimeout_s = 60\n", 1, 2);
  std::thread outside([] {
    const std::string step = RunningStep().first;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    RunCommand({"scancel", step.substr(0, step.find('.'))}, 30);  // the whole allocation
  });
  const CommandOutput run = Run(matrix, SlowTrainer(1.5));
  outside.join();
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 2);
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts WHERE status = 'failed'");
  // Step 1.0 staged the trainer on the node.
  EXPECT_NE(reason.find("slurm step 1.1 ended CANCELLED"), std::string::npos) << reason;
  // The runs after it ran in a new allocation.
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND slurm_job_id = '2'"), 2)
      << testing::Text(store, "SELECT group_concat(command_line, ' | ') FROM attempts");
  EXPECT_TRUE(QueueEmpties());
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

TEST_F(SlurmSweepTest, MpirunInsideTheAllocation) {
  const std::string matrix =
      WriteTinyRunsMatrix("architecture = [\"ring\"]\nworkers = [1, 2]\n", "launch = \"mpirun\"\n");
  const CommandOutput run = Run(matrix);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out << slurm_->logs();
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 2);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts = 'n1' AND "
                                "command_line LIKE 'mpirun -np _ %' AND slurm_step_id IS NULL AND "
                                "slurm_state = 'COMPLETED' AND slurm_exit = 'mpirun exit 0'"),
            2)
      << testing::Text(store, "SELECT group_concat(command_line, ' | ') FROM attempts");
  EXPECT_TRUE(QueueEmpties());
}

// A run no allocation of the partition can hold is refused before anything
// is asked of Slurm, naming the run, what it needs and what the partition
// has; the sweep is not recorded.
TEST_F(SlurmSweepTest, ARunThePartitionCannotHoldIsRefusedBeforeAsking) {
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\"]\nworkers = [1, 9]\n", "partition = \"debug\"\n");
  const CommandOutput run = Run(matrix);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "dmlbench: error: slurm partition \"debug\" (1 node, 8 CPUs) has 8 slots, but 1 run needs more "
                     "ranks: ring w=9 b=50 rep=0 (9 ranks); remove such runs with [[exclude]] (or leave them out with "
                     "--only) or add hosts\n");
  EXPECT_EQ(testing::ReadFile(slurm_->jobcomp()), "") << "a job was submitted";
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM experiments"), 0);
}

// The allocation holds what the runs the sweep runs need: with --only
// choosing the one-rank runs, one CPU, not the largest run's nine.
TEST_F(SlurmSweepTest, TheAllocationIsSizedForTheRunsTheSweepRuns) {
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\"]\nworkers = [1, 9]\n", "");
  const CommandOutput run =
      testing::Dmlbench({"run", matrix, "--db", db(), "--trainer", DMLBENCH_TRAINER, "--only", "workers=1"}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const std::string jobs = testing::ReadFile(slurm_->jobcomp());
  EXPECT_NE(jobs.find(" Name=" + SlurmJobName(db()) + " "), std::string::npos) << jobs;
  EXPECT_NE(jobs.find(" ProcCnt=1 "), std::string::npos) << jobs;
}

// While Slurm keeps the request pending, the progress line says why, as
// squeue does; the sweep goes on once it is granted.
TEST_F(SlurmSweepTest, APendingRequestShowsSlurmsReason) {
  const CommandOutput blocker = RunCommand({"salloc", "--no-shell", "--ntasks=8", "--job-name=blocker"}, 30);
  ASSERT_EQ(blocker.exit_code, 0) << blocker.err;
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\"]\nworkers = [1]\n", "");
  Child orchestrator;
  ASSERT_NO_FATAL_FAILURE(StartRun(orchestrator, matrix, DMLBENCH_TRAINER));
  std::string out, err;
  bool released = false;
  Pump(
      orchestrator, [&out](std::string_view line) { out.append(line).append("\n"); },
      [&](std::string_view chunk) {
        err.append(chunk);
        if (!released && err.find(" pending: Resources") != std::string::npos) {
          released = true;
          RunCommand({"scancel", "--name=blocker"}, 30);
        }
      },
      [] { return false; }, 5);
  orchestrator.Reap(/*block=*/true);
  EXPECT_EQ(ExitCode(orchestrator.status()), 0) << err << out;
  EXPECT_TRUE(released) << err;
  EXPECT_NE(err.find("ring w=1 b=50 rep=0 epoch 0/1 | slurm job 2 pending: Resources | elapsed "), std::string::npos)
      << err;
  EXPECT_NE(out.find("1 complete"), std::string::npos) << out;
}

// A controller restarted under a sweep: srun retries a step Slurm does not
// create yet (for about two minutes here); the run is not charged for the
// wait, and the progress line says what it waits on.
TEST_F(SlurmSweepTest, AStepSlurmDoesNotCreateYetIsWaitedForWithoutChargingTheRun) {
  const std::string matrix = WriteOneRunMatrix("repetitions = 2\ntimeout_s = 5\n", 1, 1);
  Child orchestrator;
  ASSERT_NO_FATAL_FAILURE(StartRun(orchestrator, matrix, SlowTrainer(3)));
  std::string out, err;
  bool restarted = false;
  std::optional<std::chrono::steady_clock::time_point> waiting_since;
  Pump(
      orchestrator, [&out](std::string_view line) { out.append(line).append("\n"); },
      [&](std::string_view chunk) {
        err.append(chunk);
        // Under the first run's step: the next run's srun meets the restarted controller.
        if (!restarted && err.find(" epoch 0/1 ") != std::string::npos) {
          restarted = true;
          std::this_thread::sleep_for(std::chrono::seconds(1));
          slurm_->RestartController();
        }
        if (!waiting_since && (err.find("| slurm job 1: step creation temporarily disabled, srun retries (") !=
                                   std::string::npos ||
                               err.find("| slurm job 1: no step created yet, srun waits |") != std::string::npos)) {
          waiting_since = std::chrono::steady_clock::now();
        }
      },
      // Three times the run's timeout into the wait, the run still waits,
      // not timed out: stop the sweep.
      [&] {
        return waiting_since && std::chrono::steady_clock::now() - *waiting_since > std::chrono::seconds(15);
      },
      5);
  orchestrator.Reap(/*block=*/true);
  ASSERT_TRUE(waiting_since.has_value()) << err << out << slurm_->logs();
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status IN ('failed', 'timed_out')"), 0)
      << testing::Text(store, "SELECT group_concat(status || ' ' || coalesce(reason, ''), ' | ') FROM attempts");
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'interrupted'"), 1);
}

// The nodes run a copy of the trainer that the allocation put on their own
// disk ([slurm] stage_dir), gone once the allocation is given back.
TEST_F(SlurmSweepTest, TheTrainerIsCopiedOntoTheNodesAndRemovedAfterTheSweep) {
  const std::string stage = dir_ / "stage";
  std::filesystem::create_directories(stage);
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\"]\nworkers = [1, 2]\n",
                                                 "stage_dir = " + Quoted(stage) + "\n");
  const CommandOutput run = Run(matrix);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out << slurm_->logs();
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND command_line LIKE 'srun % " +
                                    stage + "/dmlbench-1-________/dmlbench-trainer %'"),
            2)
      << testing::Text(store, "SELECT group_concat(command_line, ' | ') FROM attempts");
  EXPECT_TRUE(QueueEmpties());
  EXPECT_TRUE(std::filesystem::is_empty(stage)) << "the trainer's copy was left on the node";
}

// What the nodes cannot do stops the sweep at its first run, naming it:
// a stage_dir they cannot make a directory in, a copy they cannot execute.
TEST_F(SlurmSweepTest, AStageDirTheNodesCannotUseStopsTheSweepNamingIt) {
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\", \"mpi\"]\n",
                                                 "stage_dir = " + Quoted(dir_ / "missing") + "\n");
  const CommandOutput run = Run(matrix);
  EXPECT_NE(run.exit_code, 0);
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts"), 1) << "a sweep went on that no run could finish";
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts");
  EXPECT_TRUE(std::regex_search(reason, std::regex("^cannot make " + (dir_ / "missing") +
                                                   "/dmlbench-1-[0-9a-f]{8} on the nodes of slurm job 1 "
                                                   "\\(\\[slurm\\] stage_dir\\): mkdir")))
      << reason;
  EXPECT_NE(reason.find("No such file or directory"), std::string::npos) << reason;
  EXPECT_TRUE(QueueEmpties());
}

TEST_F(SlurmSweepTest, ATrainerTheNodesCannotExecuteStopsTheSweepNamingIt) {
  const std::string noexec = dir_ / "noexec";
  std::filesystem::create_directories(noexec);
  if (::mount("tmpfs", noexec.c_str(), "tmpfs", MS_NOEXEC, "size=64m") != 0) GTEST_SKIP() << "cannot mount a tmpfs";
  const std::string matrix = WriteTinyRunsMatrix("architecture = [\"ring\", \"mpi\"]\n",
                                                 "stage_dir = " + Quoted(noexec) + "\n");
  const CommandOutput run = Run(matrix);
  ::umount2(noexec.c_str(), MNT_DETACH);
  EXPECT_NE(run.exit_code, 0);
  Store store(db());
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts"), 1) << "a sweep went on that no run could finish";
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts");
  EXPECT_TRUE(std::regex_match(reason, std::regex("the trainer cannot be executed on node n1: " + noexec +
                                                  "/dmlbench-1-[0-9a-f]{8}/dmlbench-trainer: Permission denied "
                                                  "\\(slurm step 1\\.1 ended FAILED\\)")))
      << reason;
  EXPECT_TRUE(QueueEmpties());
}

// The dataset cache goes with the dataset to the trainer on the node, in
// the step and under mpirun alike.
TEST_F(SlurmSweepTest, TheDatasetCacheGoesWithTheDatasetToTheNodes) {
  const std::string args = dir_ / "args";
  for (const bool mpirun : {false, true}) {
    SlurmLauncherOptions options;
    options.trainer = testing::WriteScript(dir_ / "trainer", "echo \"$@\" >> '" + args + "'\n");
    options.dataset_cache_dir = dir_ / "cache";
    options.slurm.launch_mpirun = mpirun;
    options.notes = &std::cerr;
    SlurmLauncher launcher(options);
    LaunchSpec spec;
    spec.trainer_args = {"--events", "-"};
    spec.dataset_dir = dir_ / "dataset";
    spec.timeout_s = 60;
    const std::atomic<bool> cancel{false};
    const LaunchResult result = launcher.Launch(spec, [](std::string_view) {}, cancel);
    EXPECT_EQ(result.exit_code, 0) << result.failure_reason << result.stderr_tail;
    EXPECT_NE(result.command_line.find(" --dataset " + spec.dataset_dir + " --dataset-cache " + options.dataset_cache_dir),
              std::string::npos)
        << result.command_line;
  }
  const std::string expected = "--events - --dataset " + std::string(dir_ / "dataset") + " --dataset-cache " +
                               std::string(dir_ / "cache") + "\n";
  EXPECT_EQ(testing::ReadFile(args), expected + expected);
}

TEST_F(SlurmSweepTest, ResumesAfterTheOrchestratorIsKilledWithoutRunningARunTwice) {
  const std::string trainer = SlowTrainer(1);
  const std::string matrix = WriteOneRunMatrix("repetitions = 3\ntimeout_s = 60\n");
  Child orchestrator;
  ASSERT_NO_FATAL_FAILURE(StartRun(orchestrator, matrix, trainer));
  // SIGKILL while a later run's step runs, once one run is complete.
  bool killed = false;
  for (int i = 0; i < 600 && !killed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!std::filesystem::exists(db()) || std::filesystem::file_size(db()) == 0) continue;  // not yet made
    bool one_complete_one_running = false;
    try {
      Store store(db(), Store::Mode::kReadOnly);
      one_complete_one_running =
          testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'") >= 1 &&
          testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'running'") == 1;
    } catch (const StoreError&) {
      continue;  // the file exists, its tables not yet committed
    }
    if (one_complete_one_running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(orchestrator.pid(), SIGKILL);
      killed = true;
    }
  }
  ASSERT_TRUE(killed);
  orchestrator.Reap(/*block=*/true);
  // Its allocation outlives it.
  const std::vector<std::string> left = JobsNamed(SlurmJobName(db()));
  ASSERT_EQ(left.size(), 1u);

  const CommandOutput again = Run(matrix, trainer);
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_NE(again.err.find("dmlbench: cancelled slurm job " + left[0] + " (" + SlurmJobName(db()) +
                           "), left by an earlier `dmlbench run` of this database that stopped"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.out.find("1 run was left running by an orchestrator that stopped; redone"), std::string::npos)
      << again.out;
  ExpectEachRunCompleteOnceAfterOneInterruption(3);
}

// SIGINT or SIGTERM of `dmlbench run` while a run's step executes.
class SlurmSignalTest : public SlurmSweepTest, public ::testing::WithParamInterface<int> {};

TEST_P(SlurmSignalTest, CancelsTheAllocationAndMarksTheAttemptInterrupted) {
  const int signal_number = GetParam();
  // Each run sleeps 300 s while `slow` exists, then ends well.
  const std::string slow = dir_ / "slow";
  testing::WriteFile(slow, "");
  const std::string trainer =
      testing::WriteScript(dir_ / "trainer", testing::EchoRunStart() + "if [ -e " + ShellQuote(slow) +
                                                 " ]; then sleep 300; fi\n" + testing::Echo(testing::EpochLine(1)) +
                                                 testing::Echo(testing::RunEndLine()));
  const std::string matrix = WriteOneRunMatrix("repetitions = 2\ntimeout_s = 600\n");
  Child orchestrator;
  ASSERT_NO_FATAL_FAILURE(StartRun(orchestrator, matrix, trainer));
  std::chrono::steady_clock::time_point signalled{};
  std::thread outside([&] {
    const std::string step = RunningStep().first;
    if (step.empty()) return;  // the orchestrator's own output says why
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    signalled = std::chrono::steady_clock::now();
    ::kill(orchestrator.pid(), signal_number);
  });
  std::string out, err;
  Pump(
      orchestrator, [&out](std::string_view line) { out.append(line).append("\n"); },
      [&err](std::string_view chunk) { err.append(chunk); }, [] { return false; }, 5);
  const auto exited = std::chrono::steady_clock::now();
  outside.join();
  orchestrator.Reap(/*block=*/true);
  ASSERT_NE(signalled, std::chrono::steady_clock::time_point{}) << "no step ran: " << err << out << slurm_->logs();
  EXPECT_EQ(ExitCode(orchestrator.status()), 128 + signal_number) << err << out;
  EXPECT_LT(std::chrono::duration<double>(exited - signalled).count(), 15) << "the orchestrator did not stop promptly";
  EXPECT_NE(err.find("dmlbench: interrupted; `" +
                     ShellJoin({testing::DmlbenchProgram(), "run", matrix, "--db", db(), "--trainer", trainer}) +
                     "` resumes\n"),
            std::string::npos)
      << err;
  // The allocation was cancelled, not left to its time limit.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = JobsNamed(SlurmJobName(db())).empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << RunCommand({"squeue", "--noheader", "--format=%i %j %T"}, 30).out;
  {
    Store store(db());
    EXPECT_EQ(testing::Text(store, "SELECT group_concat(status) FROM attempts"), "interrupted");
    EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 0);
  }

  std::filesystem::remove(slow);
  const CommandOutput again = Run(matrix, trainer);
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  ExpectEachRunCompleteOnceAfterOneInterruption(2);
}

INSTANTIATE_TEST_SUITE_P(Signals, SlurmSignalTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return std::string(param.param == SIGINT ? "SIGINT" : "SIGTERM");
                         });

// Sweeps on two Slurm nodes of one CPU each, one of which an administrator
// sets DOWN under a run.
class SlurmTwoNodeTest : public SlurmSweepTest {
 protected:
  SlurmTwoNodeTest() {
    nodes_ = 2;
    cpus_per_node_ = 1;
  }

  // Sets the last node of the first step that runs DOWN, half a second
  // after it started; returns that node.
  std::thread DownUnderARun(std::string* node) {
    return std::thread([node] {
      const auto [step, nodes] = RunningStep();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      *node = ExpandHostnames(nodes).back();
      RunCommand({"scontrol", "update", "nodename=" + *node, "state=down", "reason=fixture test"}, 30);
    });
  }
};

TEST_F(SlurmTwoNodeTest, NodeSetDownFailsItsRunAndTheSweepGoesOnOnTheOtherNode) {
  const std::string trainer = SlowTrainer(1.5);
  const std::string matrix = WriteOneRunMatrix("repetitions = 3\ntimeout_s = 60\n");
  std::string down;
  std::thread outside = DownUnderARun(&down);
  const CommandOutput run = Run(matrix, trainer);
  outside.join();
  Store store(db());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out
                              << testing::Text(store, "SELECT group_concat(command_line || ' => ' || "
                                                      "coalesce(reason, '') || ' :: ' || coalesce(stderr_tail, ''), "
                                                      "' ||| ') FROM attempts");
  const std::string other = down == "n1" ? "n2" : "n1";
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 3);
  // The lost node is not the run's failure: it was run again, attempts left untouched.
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'failed' AND host_failure = 1"), 1);
  const std::string reason = testing::Text(store, "SELECT reason FROM attempts WHERE host_failure = 1");
  EXPECT_NE(reason.find(" ended NODE_FAIL: " + down + " DOWN"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(fixture test"), std::string::npos) << reason;
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM attempts WHERE status = 'ok' AND hosts = '" + other + "'"), 3)
      << testing::Text(store, "SELECT group_concat(hosts || ' ' || status, ', ') FROM attempts");
  EXPECT_TRUE(QueueEmpties());
}

TEST_F(SlurmTwoNodeTest, NodeSetDownUnderARunOfBothNodesStopsTheSweepNamingIt) {
  const std::string trainer = SlowTrainer(3, 2);
  const std::string matrix = WriteOneRunMatrix("timeout_s = 60\n[slurm]\nranks = \"per-node\"\n", 2);
  std::string down;
  std::thread outside = DownUnderARun(&down);
  const CommandOutput run = Run(matrix, trainer);
  outside.join();
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(down, "n2");
  EXPECT_NE(run.err.find("stopped the sweep after ring w=2 b=100 rep=0 failed with an error that every attempt would "
                         "meet: slurm job 2 waits for nodes that are down: n2 DOWN (fixture test [root@"),
            std::string::npos)
      << run.err;
  Store store(db());
  // The step on the lost node, then the allocation that could not start: neither counts as the run's failure.
  EXPECT_EQ(testing::Text(store, "SELECT group_concat(host_failure || ' ' || substr(reason, 1, 34), ', ') "
                                 "FROM (SELECT * FROM attempts ORDER BY attempt_id)"),
            "1 slurm step 1.1 ended NODE_FAIL: n2, 1 slurm job 2 waits for nodes that a");
  EXPECT_EQ(testing::Text(store, "SELECT status FROM runs"), "failed");
  EXPECT_TRUE(QueueEmpties()) << "the pending allocation was not withdrawn";
}

}  // namespace
}  // namespace dmlbench
