// The dmlbench program as users run it: --help everywhere, plan / run /
// status / query / export on a real database, and the reliability cases of
// a whole process: SIGKILL in the middle of a sweep then `run` again, and
// Ctrl-C (SIGINT). Trainers are shell scripts so that runs take a known time.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "orchestrator/core/build_info.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"
#include "tests/orchestrator/support/tmpfs_mount.h"

extern char** environ;

namespace dmlbench {
namespace {

using testing::Int;
using testing::Text;

using testing::Echo;
using testing::EpochLine;
using testing::RunEndLine;
using testing::RunStartLine;
using testing::TempDir;
using testing::TmpfsMount;
using testing::WriteScript;

// The build tree holds trainer/dmlbench-trainer and orchestrator/dmlbench.
std::string DmlbenchProgram() {
  return (std::filesystem::path(DMLBENCH_TRAINER).parent_path().parent_path() / "orchestrator" / "dmlbench")
      .string();
}

CommandOutput Dmlbench(std::vector<std::string> args) {
  args.insert(args.begin(), DmlbenchProgram());
  return RunCommand(args, 120);
}

// Starts dmlbench in the background with stdout/stderr to files.
pid_t StartDmlbench(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<std::string> argv = {DmlbenchProgram()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Polls the database (read-only, as another process writes it) until the
// SQL's first cell is non-zero.
bool WaitFor(const std::string& db, const std::string& sql, double timeout_s = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(db)) {
      try {
        Store store(db, Store::Mode::kReadOnly);
        if (Int(store, sql) != 0) return true;
      } catch (const StoreError&) {
        // Not created or not migrated yet.
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

bool Running(pid_t pid) {
  const std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

class CliTest : public ::testing::Test {
 protected:
  std::string WriteMatrix(const std::string& matrix, int attempts = 2) {
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"cli-test\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\n" + matrix +
                           "[execution]\norder = \"matrix\"\ntimeout_s = 60\nattempts = " + std::to_string(attempts) + "\n");
    return dir_ / "matrix.toml";
  }

  // A trainer taking about `seconds` per run, writing its pid next to the
  // database so that tests can check it is gone.
  std::string SlowTrainer(const std::string& seconds) {
    return WriteScript(dir_ / "trainer", "echo $$ >> " + (dir_ / "pids") + "\n" + Echo(RunStartLine()) +
                                             "sleep " + seconds + "\n" + Echo(EpochLine(1)) + Echo(RunEndLine()));
  }

  // Runs the matrix `workers = [1]` to completion into `db`.
  void RunOnce(const std::string& db) {
    const CommandOutput run =
        Dmlbench({"--db", db, "run", WriteMatrix("workers = [1]\n"), "--trainer",
                  WriteScript(dir_ / "good-trainer", testing::GoodTrainerBody())});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
};

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"plan", "--help"}, {"run", "--help"}, {"status", "--help"}, {"query", "--help"},
           {"export", "--help"}}) {
    const CommandOutput output = Dmlbench(args);
    EXPECT_EQ(output.exit_code, 0) << args[0];
    EXPECT_NE(output.out.find("Usage:"), std::string::npos) << args[0];
  }
}

TEST_F(CliTest, PlanRunStatusQueryAndExport) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());

  CommandOutput plan = Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("cli-test: 2 runs: 0 complete, 2 pending, 0 failed, 0 interrupted\n"), std::string::npos)
      << plan.out;
  EXPECT_FALSE(std::filesystem::exists(db_)) << "plan wrote a database";

  const CommandOutput run = Dmlbench({"run", matrix, "--db", db_, "--trainer", trainer});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("cli-test: 2 runs: 2 complete (2 just now), 0 failed, 0 interrupted, 0 pending\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.err.find("[2/2] mpi w=1 b=100 rep=0: complete"), std::string::npos) << run.err;

  plan = Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer});
  EXPECT_NE(plan.out.find("cli-test: 2 runs: 2 complete, 0 pending, 0 failed, 0 interrupted\n"), std::string::npos);

  const CommandOutput status = Dmlbench({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(status.out.rfind(db_ + ": schema version " + std::to_string(Store::KnownSchemaVersion()) + "\n", 0),
            0u)
      << status.out;
  EXPECT_NE(status.out.find("cli-test       2         2       0            0                   0"),
            std::string::npos)
      << status.out;

  const std::string sql = "SELECT architecture, workers, 0.5 AS x, NULL AS n FROM runs ORDER BY architecture";
  EXPECT_EQ(Dmlbench({"--db", db_, "query", sql}).out,
            "architecture  workers    x  n\n"
            "------------  -------  ---  -\n"
            "mpi                 1  0.5  \n"
            "ring                1  0.5  \n"
            "(2 rows)\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv", sql}).out, "architecture,workers,x,n\nmpi,1,0.5,\nring,1,0.5,\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--json", sql}).out,
            "[\n  {\n    \"architecture\": \"mpi\",\n    \"workers\": 1,\n    \"x\": 0.5,\n    \"n\": null\n  },\n"
            "  {\n    \"architecture\": \"ring\",\n    \"workers\": 1,\n    \"x\": 0.5,\n    \"n\": null\n  }\n]\n");

  const CommandOutput exported = Dmlbench({"--db", db_, "export", dir_ / "csv"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  for (const char* name : {"runs", "attempts", "epochs", "rank_phases", "hosts", "experiments", "run_summary",
                           "failures"}) {
    EXPECT_TRUE(std::filesystem::exists(dir_ / "csv/" + std::string(name) + ".csv")) << name;
  }
  EXPECT_EQ(testing::ReadFile(dir_ / "csv/runs.csv").rfind("run_id,run_key,experiment_id,architecture,", 0), 0u);
}

TEST_F(CliTest, FailedRunMakesTheExitStatusNonZero) {
  const std::string matrix = WriteMatrix("workers = [1]\n", 1);
  const std::string trainer = WriteScript(dir_ / "trainer", "echo 'dmlbench-trainer: error: no' >&2\nexit 1\n");
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("mpirun exited with status 1: dmlbench-trainer: error: no"), std::string::npos) << run.out;
}

// ---- error paths of main.cc follow ---------------------------------------

TEST_F(CliTest, QueryCannotWrite) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", WriteScript(dir_ / "t", testing::GoodTrainerBody())})
                .exit_code,
            0);
  const CommandOutput query = Dmlbench({"--db", db_, "query", "DELETE FROM runs"});
  EXPECT_EQ(query.exit_code, 1);
  EXPECT_EQ(query.err, "dmlbench: error: " + db_ + ": attempt to write a readonly database\n");
}

TEST_F(CliTest, QueryOfAMissingDatabase) {
  const CommandOutput query = Dmlbench({"--db", dir_ / "none.db", "query", "SELECT 1"});
  EXPECT_EQ(query.exit_code, 1);
  EXPECT_EQ(query.err,
            "dmlbench: error: " + (dir_ / "none.db") + ": no such database (it is created by `dmlbench run MATRIX`)\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "none.db"));
}

TEST_F(CliTest, PlanWithAMissingTrainer) {
  const CommandOutput plan = Dmlbench({"plan", WriteMatrix("workers = [1]\n"), "--trainer", dir_ / "none"});
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_EQ(plan.err, "dmlbench: error: local: cannot read " + (dir_ / "none") + ": No such file or directory\n");
}

TEST_F(CliTest, MatrixErrorShowsTheSourceLineAndACaret) {
  const CommandOutput plan = Dmlbench({"plan", WriteMatrix("workers = [1, 0]\n")});
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_EQ(plan.err, "dmlbench: error: " + (dir_ / "matrix.toml") +
                          ":6:15: workers must be between 1 and 64, got 0\n"
                          "workers = [1, 0]\n"
                          "              ^\n");
}

// ---- reliability of a whole process ----------------------------------------

TEST_F(CliTest, SigkillMidSweepThenRunAgain) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\n");
  const std::string trainer = SlowTrainer("1");
  const pid_t pid = StartDmlbench({"--db", db_, "run", matrix, "--trainer", trainer}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM runs WHERE status = 'complete'"));
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM runs WHERE status = 'running'"));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);

  const std::string snapshot_sql =
      "SELECT group_concat(run_key || complete_attempt_id || parameter_checksum || end_unix_s, ';') "
      "FROM (SELECT * FROM runs WHERE status = 'complete' ORDER BY run_id)";
  std::string before;
  std::int64_t complete_before = 0;
  {
    Store store(db_, Store::Mode::kReadOnly);
    before = std::get<std::string>(store.Query(snapshot_sql).rows[0][0]);
    complete_before = Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'");
  }
  // mpirun got SIGTERM when the orchestrator died and stopped its ranks.
  for (const std::string& line : {testing::ReadFile(dir_ / "pids")}) {
    std::istringstream pids(line);
    for (pid_t trainer_pid; pids >> trainer_pid;) {
      for (int i = 0; i < 100 && Running(trainer_pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      EXPECT_FALSE(Running(trainer_pid)) << "trainer " << trainer_pid << " outlived the orchestrator";
    }
  }

  const CommandOutput again = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("1 run was left running by an orchestrator that stopped; redone\n"), std::string::npos)
      << again.out;
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(std::get<std::string>(store.Query("PRAGMA integrity_check").rows[0][0]), "ok");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 3);
  // Every run that was complete is unchanged.
  const std::string after = std::get<std::string>(store.Query(snapshot_sql).rows[0][0]);
  EXPECT_EQ(after.substr(0, before.size()), before);
  EXPECT_GE(complete_before, 1);
  // Nothing duplicated: one epoch per run, from its completing attempt only.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM complete_epochs"), 3);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 3);
  // The interrupted run was redone.
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts WHERE status = 'interrupted' "
                       "AND reason = 'the orchestrator stopped during this attempt'"),
            1);
}

TEST_F(CliTest, SigintInterruptsTheCurrentRun) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n");
  const std::string trainer = SlowTrainer("60");
  const pid_t pid = StartDmlbench({"--db", db_, "run", matrix, "--trainer", trainer}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(testing::ReadFile(dir_ / "err").find("dmlbench: interrupted; `dmlbench run " + matrix + "` resumes\n"),
            std::string::npos);
  EXPECT_NE(testing::ReadFile(dir_ / "out").find("0 complete (0 just now), 0 failed, 1 interrupted, 1 pending"),
            std::string::npos);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(std::get<std::string>(store.Query("PRAGMA integrity_check").rows[0][0]), "ok");
  EXPECT_EQ(std::get<std::string>(store.Query("SELECT status FROM runs").rows[0][0]), "interrupted");
  EXPECT_EQ(std::get<std::string>(store.Query("SELECT status FROM attempts").rows[0][0]), "interrupted");
  // Both runs were recorded when the sweep started; the second is still pending.
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY run_id)"),
            "interrupted,pending");
}

TEST_F(CliTest, SigtermInterruptsTheCurrentRunWithStatus143) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  const pid_t pid =
      StartDmlbench({"--db", db_, "run", matrix, "--trainer", SlowTrainer("60")}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"));
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
}

// ---- what `query` shows --------------------------------------------------

TEST_F(CliTest, QueryTableShowsEveryLineOfEveryValue) {
  RunOnce(db_);
  const std::string long_value(100, 'a');
  EXPECT_EQ(Dmlbench({"--db", db_, "query",
                      "SELECT 'first' || char(10) || 'second line' AS text, 7 AS n, '" + long_value + "' AS long"})
                .out,
            "text         n  long\n"
            "-----------  -  " + std::string(100, '-') + "\n"
            "first        7  " + long_value + "\n"
            "second line     \n"
            "(1 row)\n");
}

TEST_F(CliTest, QueryJsonKeepsEveryColumnOfTheSameName) {
  RunOnce(db_);
  // A repeated name gets ":N", the first N no column of the result has.
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--json", "SELECT 1 AS x, 2 AS x, 3 AS \"x:1\", 4 AS x"}).out,
            "[\n  {\n    \"x\": 1,\n    \"x:2\": 2,\n    \"x:1\": 3,\n    \"x:3\": 4\n  }\n]\n");
  // CSV and the table keep the names as they are.
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv", "SELECT 1 AS x, 2 AS x"}).out, "x,x\n1,2\n");
}

TEST_F(CliTest, QueryRefusesASecondStatement) {
  RunOnce(db_);
  const CommandOutput query = Dmlbench({"--db", db_, "query", "SELECT 1; SELECT count(*) FROM runs"});
  EXPECT_EQ(query.exit_code, 1);
  EXPECT_EQ(query.out, "");
  EXPECT_EQ(query.err, "dmlbench: error: " + db_ +
                           ": one SQL statement at a time, got more after the first: SELECT count(*) FROM runs\n");
  // A final semicolon, white space and comments are no statement.
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv", "SELECT 1 AS one;  -- the end\n"}).out, "one\n1\n");
}

// ---- experiments and their runs -------------------------------------------

TEST_F(CliTest, AnEditedCopyOfAMatrixCountsTheRunsItShares) {
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n");
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer}).exit_code, 0);
  // The copy: another text, the same two runs and one more.
  std::string text = testing::ReadFile(matrix);
  text.replace(text.find("\"mpi\"]"), 6, "\"mpi\", \"p2p\"]");
  testing::WriteFile(dir_ / "copy.toml", "# an edited copy\n" + text);
  const CommandOutput run = Dmlbench({"--db", db_, "run", dir_ / "copy.toml", "--trainer", trainer});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("cli-test: 3 runs: 3 complete (1 just now)"), std::string::npos) << run.out;
  const CommandOutput status = Dmlbench({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0);
  const size_t original = status.out.find("cli-test       2         2       0            0                   0");
  const size_t copy = status.out.find("cli-test       3         3       0            0                   0");
  EXPECT_NE(original, std::string::npos) << status.out;
  EXPECT_NE(copy, std::string::npos) << status.out;
  EXPECT_LT(original, copy);
}

TEST_F(CliTest, ARunThatCannotStartLeavesNoExperimentBehind) {
  const std::string matrix = WriteMatrix("workers = [1]\ndataset = [\"fashion-mnist\"]\n");
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--dataset-dir", dir_ / "none", "--trainer",
                                      WriteScript(dir_ / "trainer", testing::GoodTrainerBody())});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("dmlbench: error: ", 0), 0u) << run.err;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv", "SELECT count(*) AS n FROM experiments"}).out, "n\n0\n");
}

// ---- errors every attempt would meet ---------------------------------------

TEST_F(CliTest, ATrainerThatRefusesItsInputStopsTheSweepOnce) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\n");
  const std::string trainer = WriteScript(
      dir_ / "trainer", "echo 'dmlbench-trainer: error: /data/train-images-idx3-ubyte.gz: truncated' >&2\nexit 1\n");
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("dmlbench: error: stopped the sweep after ring w=1 b=100 rep=0 failed with an error that "
                         "every attempt would meet: mpirun exited with status 1: dmlbench-trainer: error: "
                         "/data/train-images-idx3-ubyte.gz: truncated\n"),
            std::string::npos)
      << run.err;
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 1);
  EXPECT_EQ(Text(store, "SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY run_id)"),
            "failed,pending,pending");
}

TEST_F(CliTest, PlanRefusesRunsThatNeedMoreRanksThanTheInventoryHasSlots) {
  // Two hosts of one slot that plan never contacts.
  testing::WriteFile(dir_ / "hosts.toml",
                     "format_version = 1\n[[host]]\nname = \"a\"\naddress = \"127.0.0.2\"\n"
                     "[[host]]\nname = \"b\"\naddress = \"127.0.0.3\"\n");
  testing::WriteFile(dir_ / "matrix.toml",
                     "[experiment]\nname = \"cli-test\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\n"
                     "architecture = [\"ring\", \"ps\"]\nworkers = [1, 2]\n"
                     "[execution]\nprovider = \"ssh\"\ninventory = \"hosts.toml\"\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  for (const char* command : {"plan", "run"}) {
    const CommandOutput output = Dmlbench({"--db", db_, command, dir_ / "matrix.toml", "--trainer", trainer});
    EXPECT_EQ(output.exit_code, 1) << command;
    EXPECT_EQ(output.err, "dmlbench: error: " + (dir_ / "hosts.toml") +
                              " has 2 slots, but 1 run needs more ranks: ps k=1 w=2 b=100 rep=0 (3 ranks); "
                              "remove such runs with [[exclude]] or add hosts\n")
        << command;
  }
}

// ---- the run lock: one sweep per database file, whatever its path ------------

TEST_F(CliTest, ASecondRunThroughAnotherPathToTheDatabaseIsRefused) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  // The first launch waits until it is stopped; any later one would finish at once.
  const std::string trainer =
      WriteScript(dir_ / "trainer", "if mkdir " + (dir_ / "first") + " 2>/dev/null; then\n" + Echo(RunStartLine()) +
                                        "sleep 60\nexit 1\nfi\n" + testing::GoodTrainerBody());
  const pid_t pid = StartDmlbench({"--db", db_, "run", matrix, "--trainer", trainer}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"));
  std::filesystem::create_symlink(db_, dir_ / "symlink.db");
  std::filesystem::create_hard_link(db_, dir_ / "hardlink.db");
  std::filesystem::create_directories(dir_ / "sub");
  for (const std::string& other :
       {dir_ / "symlink.db", dir_ / "hardlink.db", dir_ / "./results.db", dir_ / "sub/../results.db"}) {
    const CommandOutput second = Dmlbench({"--db", other, "run", matrix, "--trainer", trainer});
    EXPECT_EQ(second.exit_code, 1) << other << "\n" << second.out << second.err;
    EXPECT_EQ(second.err, "dmlbench: error: " + other + ": another `dmlbench run` is using this database\n");
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 1);
}

// ---- a database on a read-only file system, and other files --------------------

TEST_F(CliTest, StatusQueryAndPlanReadADatabaseOnAReadOnlyFileSystem) {
  TmpfsMount disk(dir_, "8m");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string db = disk.path() + "/results.db";
  RunOnce(db);
  ASSERT_TRUE(disk.RemountReadOnly());
  const CommandOutput status = Dmlbench({"--db", db, "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("cli-test       1         1       0            0                   0"), std::string::npos)
      << status.out;
  const CommandOutput query = Dmlbench({"--db", db, "query", "--csv", "SELECT count(*) AS n FROM runs"});
  EXPECT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(query.out, "n\n1\n");
  const CommandOutput plan =
      Dmlbench({"--db", db, "plan", dir_ / "matrix.toml", "--trainer", dir_ / "good-trainer"});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("cli-test: 1 run: 1 complete, 0 pending"), std::string::npos) << plan.out;
  const CommandOutput exported = Dmlbench({"--db", db, "export", dir_ / "csv"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "csv/runs.csv"));
  const CommandOutput run = Dmlbench({"--db", db, "run", dir_ / "matrix.toml", "--trainer", dir_ / "good-trainer"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "dmlbench: error: " + db + ": database is not writable: Read-only file system\n");
}

// ---- the program itself --------------------------------------------------

TEST_F(CliTest, VersionNamesTheCommitAndTheBuild) {
  const CommandOutput version = Dmlbench({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("dmlbench 0.", 0), 0u) << version.out;
  EXPECT_NE(version.out.find("\ncommit " + std::string(BuildCommit()) + "\n"), std::string::npos) << version.out;
  EXPECT_NE(version.out.find("\nbuilt with "), std::string::npos) << version.out;
}

}  // namespace
}  // namespace dmlbench
