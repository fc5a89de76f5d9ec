// A results database someone else wrote (mailed, committed, opened from a
// colleague's home): text read from it never names a path outside the
// tool's own files; a malformed column fails with the database, the row
// and the column named; a fit edited into nonsense is refused by every
// command that reads it; a database of another user is read though its
// folder cannot be written; every name of a database finds the same logs;
// and `query` writes nothing. Each database is made by a real sweep (or is
// a copy of the committed study), then changed with the sqlite3 shell as a
// hostile hand would.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

  // A second sweep into `db`: one run of batch 50, with its logs.
  CommandOutput SecondSweep(const std::string& db) {
    testing::WriteFile(dir_ / "second.toml",
                       "[experiment]\nname = \"second\"\n[defaults]\ndataset = \"synthetic\"\nbatch_size = 50\n"
                       "[matrix]\nworkers = [1]\n[execution]\ntimeout_s = 60\n");
    return Dmlbench({"--db", db, "run", dir_ / "second.toml", "--trainer", dir_ / "trainer"});
  }

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

// A symbolic link to the database is its real file: a sweep through the
// link keeps its logs beside the real file, `logs` finds them through the
// real path, and `forget` through the link removes them.
TEST_F(HostileDatabaseTest, EveryNameOfADatabaseThroughSymbolicLinksFindsTheSameLogs) {
  fs::create_directories(dir_ / "elsewhere");
  const std::string link = dir_ / "elsewhere/link.db";
  fs::create_symlink(db_, link);
  const CommandOutput run = SecondSweep(link);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string key = Value(db_, "SELECT run_key FROM runs WHERE batch_size = 50");
  EXPECT_TRUE(fs::is_directory(db_ + ".logs/" + key));
  EXPECT_FALSE(fs::exists(link + ".logs"));
  const CommandOutput logs = Dmlbench({"--db", db_, "logs", "batch_size=50"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  const CommandOutput through_link = Dmlbench({"--db", link, "logs", "batch_size=50"});
  EXPECT_EQ(through_link.exit_code, 0) << through_link.err;
  EXPECT_EQ(through_link.out, logs.out);
  const CommandOutput forget = Dmlbench({"--db", link, "forget", "batch_size=50", "--yes"});
  ASSERT_EQ(forget.exit_code, 0) << forget.err;
  EXPECT_FALSE(fs::exists(db_ + ".logs/" + key));
  EXPECT_FALSE(fs::exists(link + ".logs"));
}

// A hard link cannot be told from the file by its path: no logs are kept,
// shown or forgotten through a database file of two names, and it says so
// before anything is removed or run.
TEST_F(HostileDatabaseTest, ADatabaseOfTwoNamesKeepsShowsAndForgetsNoLogs) {
  const std::string other = dir_ / "other.db";
  fs::create_hard_link(db_, other);
  const std::string key = Value(db_, "SELECT run_key FROM runs");
  for (const std::string& name : {db_, other}) {
    const std::string refusal = "dmlbench: error: " + name + ": the database file has 2 names (hard links), and its "
                                "logs directory sits beside one of them, which no name can tell: dmlbench keeps, "
                                "shows and forgets logs only of a database of one name (remove the other links, or "
                                "copy the file; a symbolic link is followed)\n";
    const CommandOutput logs = Dmlbench({"--db", name, "logs", "workers=1"});
    EXPECT_NE(logs.exit_code, 0);
    EXPECT_EQ(logs.err, refusal);
    const CommandOutput forget = Dmlbench({"--db", name, "forget", "workers=1", "--yes"});
    EXPECT_NE(forget.exit_code, 0);
    EXPECT_EQ(forget.err, refusal);
    const CommandOutput run = SecondSweep(name);
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find(refusal), std::string::npos) << run.err;
  }
  EXPECT_EQ(Value(db_, "SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(Value(db_, "SELECT count(*) FROM attempts"), "1");
  EXPECT_TRUE(fs::is_directory(db_ + ".logs/" + key));
}

// The read-only commands read a database in a folder this user cannot
// write (another user's: SQLite cannot make the -shm file beside it), and
// say in one line that what a writer adds meanwhile may be missed.
TEST_F(HostileDatabaseTest, AnotherUsersDatabaseIsReadThoughItsFolderCannotBeWritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to be another user";
  constexpr char kNobody[] = "65534";
  for (const std::string& folder : {dir_.path(), dir_ / "d"}) {
    fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
  const std::string out = dir_ / "out";
  fs::create_directories(out);
  ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
  const auto as_nobody = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"setpriv", std::string("--reuid=") + kNobody, std::string("--regid=") + kNobody,
                                     "--clear-groups", testing::DmlbenchProgram()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, 120);
  };
  const std::string note = "dmlbench: note: " + db_ + ": read as an unchanging file (its directory is not writable "
                           "for this user, so SQLite cannot share a writer's locks): what a sweep writes while this "
                           "command reads may be missed, or fail the read\n";
  const CommandOutput status = as_nobody({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.err, note);
  const CommandOutput query = as_nobody({"--db", db_, "query", "--csv", "SELECT count(*) AS runs FROM runs"});
  EXPECT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(query.out, "runs\n1\n");
  EXPECT_EQ(query.err, note);
  const CommandOutput exported = as_nobody({"--db", db_, "export", out + "/csv"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(fs::exists(out + "/csv/runs.csv"));
  const CommandOutput compared = as_nobody({"--db", db_, "compare", "experiment=hostile", "experiment=hostile"});
  EXPECT_EQ(compared.err.find("readonly"), std::string::npos) << compared.err;
  EXPECT_NE(compared.err.find(note), std::string::npos) << compared.err;
  const CommandOutput report = as_nobody({"--db", db_, "report", out + "/report"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.err, note);
  // Nothing was made beside the database.
  for (const char* suffix : {"-shm", "-wal"}) EXPECT_FALSE(fs::exists(db_ + suffix)) << suffix;
}

// What only its write-ahead log holds cannot be read without the -shm file:
// said, with what to do.
TEST_F(HostileDatabaseTest, AnotherUsersDatabaseWithChangesInItsLogSaysWhyItCannotBeRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to be another user";
  const std::string shared = dir_ / "shared";
  fs::create_directories(shared);
  for (const std::string& folder : {dir_.path(), shared}) {
    fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
  const std::string copy = shared + "/results.db";
  {
    // Copied while a writer has a change in its write-ahead log only.
    sqlite3* writer = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &writer), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(writer, "PRAGMA wal_autocheckpoint = 0; UPDATE runs SET failure_reason = 'new'", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    fs::copy_file(db_, copy);
    fs::copy_file(db_ + "-wal", copy + "-wal");
    sqlite3_close(writer);
  }
  ASSERT_GT(fs::file_size(copy + "-wal"), 0u);
  const CommandOutput status = RunCommand({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                           testing::DmlbenchProgram(), "--db", copy, "status"},
                                          120);
  EXPECT_NE(status.exit_code, 0);
  EXPECT_EQ(status.err, "dmlbench: error: " + copy + ": cannot read it: its write-ahead log " + copy + "-wal holds "
                        "changes, and this user cannot create " + copy + "-shm beside it (the directory is not "
                        "writable for it); copy the database with its -wal file to a directory of your own, or ask "
                        "its owner to checkpoint it (sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)')\n");
}

TEST_F(HostileDatabaseTest, QueryRefusesAStatementThatWritesAFileAndLeavesNone) {
  const std::string copy = dir_ / "copy.db";
  const CommandOutput query = Dmlbench({"--db", db_, "query", "VACUUM INTO '" + copy + "'"});
  EXPECT_NE(query.exit_code, 0);
  EXPECT_EQ(query.err, "dmlbench: error: " + db_ + ": the database is open read-only, and this statement would "
                       "write (to it, or as VACUUM INTO to a file of its own): VACUUM INTO '" + copy + "'\n");
  EXPECT_FALSE(fs::exists(copy));
}

TEST_F(HostileDatabaseTest, QueryCsvWritesControlCharactersFromTheDatabaseVisibly) {
  Sql("UPDATE runs SET failure_reason = 'a' || char(27) || '[2J' || char(7) || 'b,c'");
  const CommandOutput query = Dmlbench({"--db", db_, "query", "--csv", "SELECT failure_reason FROM runs"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(query.out, "failure_reason\n\"a\\e[2J\\x07b,c\"\n");
}

TEST_F(HostileDatabaseTest, ASchemaVersionBelowWhatItsTablesHoldIsNamed) {
  Sql("PRAGMA user_version = 5");
  const std::string message = "dmlbench: error: " + db_ + ": the database's schema says version 5 (PRAGMA "
                              "user_version), but it holds tables of version 20 or later "
                              "(runs.system): its user_version was changed after it was "
                              "written; refusing to open it\n";
  const std::vector<std::vector<std::string>> commands = {{"status"},
                                                         {"run", dir_ / "matrix.toml", "--trainer", dir_ / "trainer"}};
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> args = {"--db", db_};
    args.insert(args.end(), command.begin(), command.end());
    const CommandOutput output = Dmlbench(args);
    EXPECT_NE(output.exit_code, 0) << command[0];
    EXPECT_EQ(output.err, message) << command[0];
  }
  EXPECT_EQ(Value(db_, "PRAGMA user_version"), "5");
}

// ---- a stored fit edited into nonsense ------------------------------------

// A copy of the committed study, whose latest corrected fit is edited.
class HostileFitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
    fit_ = Value(db_, "SELECT max(fit_id) FROM model_fits WHERE model = 'corrected'");
  }

  void SetParameter(const std::string& name, const std::string& value) {
    SqlOn(db_, "UPDATE model_parameters SET value = " + value + " WHERE fit_id = " + fit_ +
                                      " AND name = '" + name + "'");
  }

  CommandOutput Predict() {
    return Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ring", "workers=4",
                     "bandwidth=1gbit"});
  }
  CommandOutput Recommend() {
    return Dmlbench({"--db", db_, "model", "recommend", "--catalog",
                     std::string(DMLBENCH_SOURCE_DIR) + "/experiments/instances/emulated-cluster.toml", "--epochs",
                     "10", "--workers", "1,2,4", "--deadline", "1h", "--json"});
  }

  testing::TempDir dir_;
  std::string db_ = dir_ / "study.db";
  std::string fit_;
};

// An infinite value, or text, is refused as the fit is read: every command
// fails naming it, and validate stores nothing.
TEST_F(HostileFitTest, AValueThatIsNoFiniteNumberIsRefusedWhereTheFitIsRead) {
  for (const std::string& value : {std::string("9e999"), std::string("'abc'")}) {
    SetParameter("cpu_per_byte_s", value);
    SqlOn(db_, "DELETE FROM predictions");
    const std::string message = "dmlbench: error: " + db_ + ": fit " + fit_ +
                                ": model_parameters.value of cpu_per_byte_s is not a finite number, got " +
                                (value == "9e999" ? "inf" : "\"abc\"") + "\n";
    const CommandOutput predict = Predict();
    EXPECT_NE(predict.exit_code, 0);
    EXPECT_EQ(predict.err, message);
    const CommandOutput recommend = Recommend();
    EXPECT_NE(recommend.exit_code, 0);
    EXPECT_EQ(recommend.err, message);
    const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate"});
    EXPECT_NE(validate.exit_code, 0);
    EXPECT_EQ(validate.err, message);
    EXPECT_EQ(Value(db_, "SELECT count(*) FROM predictions"), "0");
  }
}

// A finite value that gives no time is refused where the prediction is
// made, alike by predict, recommend and validate; a value outside the
// range the fit keeps it in is refused as the model reads it.
TEST_F(HostileFitTest, AParameterThatGivesNoTimeIsRefusedByEveryCommandThatPredicts) {
  SetParameter("cpu_per_sample_s", "-1");
  const std::string refused = "fit " + fit_ + " predicts an epoch time of ";
  const std::string why = " s, not a positive finite time: refit it (dmlbench model fit)";
  const CommandOutput predict = Predict();
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find(refused + "-nan" + why), std::string::npos) << predict.out;
  const CommandOutput recommend = Recommend();
  ASSERT_EQ(recommend.exit_code, 0) << recommend.err;
  const nlohmann::json json = nlohmann::json::parse(recommend.out);
  EXPECT_TRUE(json["ranked"].empty());
  ASSERT_EQ(json["ruled_out"].size(), json["candidates"].get<std::size_t>());
  for (const nlohmann::json& r : json["ruled_out"]) {
    const std::string reason = r["reason"];
    EXPECT_TRUE(reason.starts_with("the model cannot predict it: " + refused) && reason.ends_with(why)) << reason;
  }
  // validate predicts every other fit and stores them all, none of this one.
  SqlOn(db_, "DELETE FROM predictions");
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate"});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find("corrected cannot predict"), std::string::npos) << validate.out;
  EXPECT_EQ(Value(db_, "SELECT count(*) FROM predictions WHERE fit_id = " + fit_), "0");
  EXPECT_NE(Value(db_, "SELECT count(*) FROM predictions WHERE fit_id > " + fit_), "0");

  SetParameter("cpu_per_sample_s", "5.91363206677072e-06");
  SetParameter("combine_exponent", "-1");
  const CommandOutput outside = Predict();
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  EXPECT_NE(outside.out.find("fit " + fit_ + " holds combine_exponent = -1, outside its range (1 or more): refit it "
                             "(dmlbench model fit)"),
            std::string::npos)
      << outside.out;
}

}  // namespace
}  // namespace dmlbench
