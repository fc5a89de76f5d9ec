// A results database someone else wrote (mailed, committed, opened from a
// colleague's home): text read from it never names a path outside the
// tool's own files, and a malformed column fails with the database, the row
// and the column named. Each database is made by a real sweep, then changed
// with the sqlite3 shell as a hostile hand would.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/core/subprocess.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::Dmlbench;

// Runs `sql` on database `db` with the sqlite3 shell.
void SqlOn(const std::string& db, const std::string& sql) {
  const CommandOutput done = RunCommand({"sqlite3", db, sql}, 30);
  ASSERT_EQ(done.exit_code, 0) << done.err;
}

// The first line `sql` gives on database `db`.
std::string Value(const std::string& db, const std::string& sql) {
  const CommandOutput done = RunCommand({"sqlite3", db, sql}, 30);
  return done.out.substr(0, done.out.find('\n'));
}

class HostileDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "d");
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"hostile\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\n"
                       "workers = [1]\n[execution]\ntimeout_s = 60\n");
    const CommandOutput run =
        Dmlbench({"--db", db_, "run", dir_ / "matrix.toml", "--trainer",
                  testing::WriteScript(dir_ / "trainer", testing::GoodTrainerBody())});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    // What the hostile hand aims at: a directory beside the database.
    fs::create_directories(dir_ / "d/victim");
    testing::WriteFile(dir_ / "d/victim/keep", "x");
  }

  void Sql(const std::string& sql) { SqlOn(db_, sql); }

  testing::TempDir dir_;
  std::string db_ = dir_ / "d/results.db";
};

// results.db.logs/ + 55 slashes + ../victim is d/victim: 64 characters.
const std::string kTraversingKey = std::string(55, '/') + "../victim";

TEST_F(HostileDatabaseTest, ForgetRefusesARunKeyThatIsNotOneAndDeletesNothing) {
  ASSERT_EQ(kTraversingKey.size(), 64u);
  Sql("UPDATE runs SET run_key = '" + kTraversingKey + "'");
  const CommandOutput forget = Dmlbench({"--db", db_, "forget", "workers=1", "--yes"});
  EXPECT_NE(forget.exit_code, 0);
  EXPECT_EQ(forget.err, "dmlbench: error: " + db_ + ": run 1: runs.run_key is not 64 lowercase hex digits, got \"" +
                            kTraversingKey + "\"\n");
  EXPECT_TRUE(fs::exists(dir_ / "d/victim/keep"));
}

TEST_F(HostileDatabaseTest, LogsRefusesALogFileOutsideTheLogs) {
  Sql("UPDATE attempt_logs SET file = '../victim/keep'");
  const CommandOutput logs = Dmlbench({"--db", db_, "logs", "workers=1"});
  EXPECT_NE(logs.exit_code, 0);
  EXPECT_EQ(logs.err, "dmlbench: error: " + db_ + ": attempt_logs.file of attempt 1 is not a path inside " + db_ +
                          ".logs, got \"../victim/keep\"\n");
}

TEST_F(HostileDatabaseTest, ExportWritesNothingOutsideItsDirectoryAndCountsWhatItWrote) {
  Sql("CREATE VIEW \"../../x\" AS SELECT 1 AS one");
  const std::string out = dir_ / "d/out";
  const CommandOutput exported = Dmlbench({"--db", db_, "export", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));
  EXPECT_EQ(exported.err, "dmlbench: export: left out the table or view \"../../x\": not a plain name (a letter or "
                          "'_', then letters, digits or '_')\n");
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) files += entry.is_regular_file();
  EXPECT_EQ(exported.out, "wrote " + std::to_string(files) + " CSV files to " + out + "\n");
}

TEST_F(HostileDatabaseTest, AMalformedLayerListFailsEveryCommandNamingTheRunAndTheColumn) {
  for (const char* hidden : {"x", "128,,32", "12345678901234567890", "", "-5", "0"}) {
    Sql("UPDATE runs SET hidden = '" + std::string(hidden) + "'");
    const std::string expected = "dmlbench: error: " + db_ + ": run 1: runs.hidden is not a list of 1 to 16 layer "
                                 "widths (integers 1..65536 separated by commas, e.g. \"128,32\"), got \"" +
                                 std::string(hidden) + "\"\n";
    for (const std::vector<std::string>& command :
         std::vector<std::vector<std::string>>{{"logs", "workers=1"},
                                               {"forget", "workers=1", "--yes"},
                                               {"compare", "experiment=hostile", "experiment=hostile"},
                                               {"model", "fit", "--model", "linear"}}) {
      std::vector<std::string> args = {"--db", db_};
      args.insert(args.end(), command.begin(), command.end());
      const CommandOutput output = Dmlbench(args);
      EXPECT_NE(output.exit_code, 0) << command[0] << " " << hidden;
      EXPECT_NE(output.err.find(expected), std::string::npos) << command[0] << " " << hidden << ": " << output.err;
    }
  }
}

// Every column the store parses into a number, a state or JSON is checked
// where it is read, by each command that reads it.
TEST_F(HostileDatabaseTest, AMalformedColumnFailsEveryCommandThatReadsItNamingTheRowAndTheColumn) {
  const std::vector<std::string> logs = {"logs", "workers=1"}, forget = {"forget", "workers=1", "--yes"},
                                 compare = {"compare", "experiment=hostile", "experiment=hostile"},
                                 fit = {"model", "fit", "--model", "linear"};
  // Writes a CHECK of the schema would refuse, as another program could.
  const std::string unchecked = "PRAGMA ignore_check_constraints = ON; ";
  struct Case {
    std::string sql;
    std::string message;  // after "<db>: "
    std::vector<std::vector<std::string>> commands;
  };
  const std::vector<Case> cases = {
      {"UPDATE runs SET workers = 'x'", "run 1: runs.workers is not an integer from 1 to 64, got \"x\"",
       {logs, forget, compare, fit}},
      {"UPDATE runs SET workers = 1000", "run 1: runs.workers is not an integer from 1 to 64, got 1000",
       {logs, forget, compare, fit}},
      {"UPDATE runs SET learning_rate = 'fast'",
       "run 1: runs.learning_rate is not a finite number above 0, got \"fast\"", {logs, forget, compare, fit}},
      {unchecked + "UPDATE runs SET status = 'done'",
       "run 1: runs.status is not one of pending, running, complete, failed or interrupted, got \"done\"",
       {logs, forget, compare}},
      {"DROP TRIGGER runs_split_never_changes; " + unchecked + "UPDATE runs SET split = 'both'",
       "run 1: runs.split is not one of calibration or validation, got \"both\"", {logs, forget, compare, fit}},
      {"UPDATE runs SET canonical_params = '{'", "run 1: runs.canonical_params is not a JSON object, got \"{\"",
       {logs, forget, compare, fit}},
      {"UPDATE runs SET canonical_params = json_set(canonical_params, '$.warmup_iterations', 'x')",
       "run 1: runs.canonical_params warmup_iterations is not an integer from 0 to 9223372036854775807, got \"x\"",
       {logs, forget, compare, fit}},
      {unchecked + "UPDATE attempts SET status = 'weird'",
       "attempt 1: attempts.status is not one of running, ok, failed, timed_out or interrupted, got \"weird\"",
       {logs}},
      {"UPDATE attempt_logs SET bytes = 'many'",
       "attempt 1: attempt_logs.bytes is not an integer from 0 to 9223372036854775807, got \"many\"", {logs}},
      {"UPDATE attempts SET parameters = 'x'",
       "attempt 1: attempts.parameters is not an integer from 1 to 9223372036854775807, got \"x\"", {fit}},
      {unchecked + "UPDATE hosts SET tags_json = '{'", "host 1: hosts.tags_json is not a JSON object, got \"{\"",
       {fit}},
      {"UPDATE hosts SET tags_json = '{\"cpu_cores\": \"lots\"}'",
       "host 1: hosts.tags_json cpu_cores is not a decimal number from 0 to 4096, got \"lots\"", {fit}},
  };
  const std::string pristine = dir_ / "pristine.db";
  fs::copy_file(db_, pristine);
  for (const Case& c : cases) {
    fs::copy_file(pristine, db_, fs::copy_options::overwrite_existing);
    Sql(c.sql);
    for (const std::vector<std::string>& command : c.commands) {
      std::vector<std::string> args = {"--db", db_};
      args.insert(args.end(), command.begin(), command.end());
      const CommandOutput output = Dmlbench(args);
      EXPECT_NE(output.exit_code, 0) << command[0] << ": " << c.sql;
      EXPECT_NE(output.err.find("dmlbench: error: " + db_ + ": " + c.message + "\n"), std::string::npos)
          << command[0] << ": " << c.sql << ": " << output.err;
    }
    EXPECT_EQ(Value(db_, "SELECT count(*) FROM runs"), "1") << c.sql;
  }
}

}  // namespace
}  // namespace dmlbench
