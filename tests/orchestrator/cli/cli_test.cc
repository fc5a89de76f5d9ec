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
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "orchestrator/cli/launcher_factory.h"
#include "orchestrator/core/build_info.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
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
using testing::TempDir;
using testing::TmpfsMount;
using testing::WriteScript;

using testing::Dmlbench;
using testing::DmlbenchProgram;
using testing::DmlbenchWithInput;

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
  std::string WriteMatrix(const std::string& matrix, int attempts = 2, const std::string& execution = "") {
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"cli-test\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\n" + matrix +
                           "[execution]\norder = \"matrix\"\ntimeout_s = 60\nattempts = " + std::to_string(attempts) +
                           "\n" + execution);
    return dir_ / "matrix.toml";
  }

  // A trainer taking about `seconds` per run, writing its pid next to the
  // database so that tests can check it is gone.
  std::string SlowTrainer(const std::string& seconds) {
    return WriteScript(dir_ / "trainer", "echo $$ >> " + (dir_ / "pids") + "\n" + testing::EchoRunStart() +
                                             "sleep " + seconds + "\n" + Echo(EpochLine(1)) + Echo(RunEndLine()));
  }

  // Runs the matrix `workers = [1]` to completion into `db`.
  void RunOnce(const std::string& db) {
    const CommandOutput run =
        Dmlbench({"--db", db, "run", WriteMatrix("workers = [1]\n"), "--trainer",
                  WriteScript(dir_ / "good-trainer", testing::GoodTrainerBody())});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  // Stores a fit of corrected's version 4, newer than any other of its fits.
  static void AddFitOfAnOlderVersion(const std::string& db) {
    Store store(db);
    ModelFitRecord fit;
    fit.model = "corrected";
    fit.model_version = 4;
    fit.code_commit = "older";
    fit.created_unix_s = 1;
    store.AddModelFit(fit);
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
};

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"plan", "--help"}, {"run", "--help"}, {"status", "--help"}, {"query", "--help"},
           {"export", "--help"}, {"logs", "--help"}, {"forget", "--help"}, {"tag", "--help"}, {"untag", "--help"},
           {"compare", "--help"}}) {
    const CommandOutput output = Dmlbench(args);
    EXPECT_EQ(output.exit_code, 0) << args[0];
    EXPECT_NE(output.out.find("Usage:"), std::string::npos) << args[0];
  }
}

TEST_F(CliTest, ModelTakesOneNamePerModelOptionAndLeavesTheSettingsToPredict) {
  RunOnce(db_);
  const CommandOutput one = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ring",
                                      "workers=4"});
  EXPECT_NE(one.exit_code, 0);  // nothing is fitted yet
  EXPECT_EQ(one.err.find("unknown model"), std::string::npos) << one.err;
  EXPECT_NE(one.err.find("corrected"), std::string::npos) << one.err;
  const CommandOutput two =
      Dmlbench({"--db", db_, "model", "predict", "--model", "linear", "--model", "corrected", "workers=4"});
  EXPECT_EQ(two.err.find("unknown model"), std::string::npos) << two.err;
  const CommandOutput unknown = Dmlbench({"--db", db_, "model", "predict", "--model", "fancy", "workers=4"});
  EXPECT_NE(unknown.err.find("unknown model \"fancy\""), std::string::npos) << unknown.err;
}

// `model fit --fix`: on a copy of the committed study, a measured cost held
// in place of the fitted one is stored as such and `model validate` judges
// the fit made around it; what is not a number, or not a parameter, is
// refused before anything is stored.
TEST_F(CliTest, ModelFitHoldsAParameterAtAValueAndValidateUsesIt) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const std::string fits = "SELECT count(*) FROM model_fits";
  const std::string before = Dmlbench({"--db", db_, "query", "--csv", fits}).out;
  const CommandOutput words =
      Dmlbench({"--db", db_, "model", "fit", "--model", "corrected", "--fix", "cpu_per_byte_s=fast"});
  EXPECT_NE(words.exit_code, 0);
  EXPECT_NE(words.err.find("--fix \"cpu_per_byte_s=fast\": expected NAME=VALUE"), std::string::npos) << words.err;
  const CommandOutput typo =
      Dmlbench({"--db", db_, "model", "fit", "--model", "corrected", "--fix", "cpu_per_bite_s=2e-10"});
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_NE(typo.out.find("corrected fits no parameter \"cpu_per_bite_s\" to hold"), std::string::npos) << typo.out;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv", fits}).out, before);

  const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", "corrected", "--fix",
                                      "cpu_per_byte_s=2e-10", "--fix", "wire_factor ps k=1=0.9"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("cpu_per_byte_s                                2e-10                          s/byte     fixed"),
            std::string::npos)
      << fit.out;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT name, scope, value, ci_low IS NULL AS no_interval FROM model_parameters "
                      "WHERE source = 'fixed' AND fit_id = (SELECT max(fit_id) FROM model_fits) ORDER BY name"})
                .out,
            "name,scope,value,no_interval\ncpu_per_byte_s,,2e-10,1\nwire_factor,ps k=1,0.9,1\n");
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate", "--model", "corrected"});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find(" (held: cpu_per_byte_s, wire_factor ps k=1)\n"), std::string::npos) << validate.out;
  // Its predictions are the held fit's, stored with its id.
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT count(*) > 0 AS predicted FROM predictions "
                      "WHERE fit_id = (SELECT max(fit_id) FROM model_fits)"})
                .out,
            "predicted\n1\n");
}

// `model fit --model counts --fix`: counts holds a parameter as corrected
// does, and `model fit` prints each parameter's source: the measured ones
// as measured, the fitted ones as fitted, the held one as fixed.
TEST_F(CliTest, CountsHoldsAParameterAndPrintsHowEachWasIdentified) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const CommandOutput fit =
      Dmlbench({"--db", db_, "model", "fit", "--model", "counts", "--fix", "cpu_while_waiting=0.05"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  for (const char* row : {R"(\ncpu_while_waiting +0\.05 +s/s +fixed *\n)",
                          R"(\nquota_efficiency +[0-9.e+-]+ +\[[0-9.e+-]+, [0-9.e+-]+\] +1 +measured *\n)",
                          R"(\ncpu_per_wait_s +[0-9.e+-]+ +\[[0-9.e+-]+, [0-9.e+-]+\] +s/wait +fitted *\n)"}) {
    EXPECT_TRUE(std::regex_search(fit.out, std::regex(row))) << row << "\n" << fit.out;
  }
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT source, count(*) AS n FROM model_parameters WHERE fit_id = (SELECT max(fit_id) FROM "
                      "model_fits WHERE model = 'counts') AND source IN ('fitted', 'measured', 'fixed') "
                      "GROUP BY source ORDER BY source"})
                .out,
            "source,n\nfitted,3\nfixed,1\nmeasured,3\n");
  const CommandOutput help = Dmlbench({"model", "fit", "--help"});
  EXPECT_NE(help.out.find("corrected, corrected+overlap and counts"), std::string::npos) << help.out;
}

// Every setting of `model predict` that is not what it must be is named
// with what was expected, the whole value read (no "0.2x" taken as 0.2),
// before anything is predicted.
TEST_F(CliTest, PredictNamesEachMalformedSetting) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu=abc", "cpu must be the hosts' CPU share in cores, 0 for uncapped (e.g. 0.15), got \"abc\""},
      {"cpu=0.2x", "cpu must be the hosts' CPU share in cores, 0 for uncapped (e.g. 0.15), got \"0.2x\""},
      {"cpu=-1", "cpu must be the hosts' CPU share in cores, 0 for uncapped (e.g. 0.15), got \"-1\""},
      // The run parameters are read as an experiment file reads them (ParseRunSettings).
      {"hidden=128,x", "hidden=128,x: hidden layer sizes must be an integer, got string \"x\""},
      {"hidden=128,", "hidden=128,: hidden layer sizes must be an integer, got string \"\""},
      {"hidden=0", "hidden=0: hidden layer sizes must be between 1 and 65536, got 0"},
      {"workers=4x", "workers=4x: workers must be an integer, got string \"4x\""},
      {"workers=65", "workers=65: workers must be between 1 and 64, got 65"},
      {"servers=2", "servers=2: servers applies only to architecture \"ps\", got architecture \"ring\""},
      {"workers", "expected KEY=VALUE, got \"workers\""},
  };
  for (const auto& [setting, reason] : cases) {
    const CommandOutput out = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ring",
                                        "bandwidth=1gbit", setting});
    EXPECT_NE(out.exit_code, 0) << setting;
    EXPECT_EQ(out.err, "dmlbench: error: " + reason + "\n") << setting;
    EXPECT_EQ(out.out, "") << setting;
  }
  const CommandOutput good = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ring",
                                       "bandwidth=1gbit", "cpu=0.15", "hidden=128,32", "workers=4"});
  EXPECT_EQ(good.exit_code, 0) << good.err;
}

// `model validate --fit N` and `model predict --fit N`: a stored fit other
// than the latest, e.g. the free fit beside one made with --fix after it.
TEST_F(CliTest, ValidateAndPredictTakeAStoredFitById) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  ASSERT_EQ(Dmlbench({"--db", db_, "model", "fit", "--model", "corrected"}).exit_code, 0);
  const std::string free_fit = Dmlbench({"--db", db_, "query", "--csv", "SELECT max(fit_id) FROM model_fits"}).out;
  const std::string id = free_fit.substr(free_fit.find('\n') + 1, free_fit.size() - free_fit.find('\n') - 2);
  // A validation row of ring: what the fit validated makes of it.
  const auto ring_row = [](const std::string& out) {
    const std::size_t at = out.find("\ncorrected  ring ");
    return at == std::string::npos ? std::string() : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  const CommandOutput latest_free = Dmlbench({"--db", db_, "model", "validate", "--model", "corrected"});
  ASSERT_EQ(latest_free.exit_code, 0) << latest_free.err;
  ASSERT_EQ(Dmlbench({"--db", db_, "model", "fit", "--model", "corrected", "--fix", "cpu_per_byte_s=2e-10"}).exit_code,
            0);
  const CommandOutput latest_held = Dmlbench({"--db", db_, "model", "validate", "--model", "corrected"});
  ASSERT_EQ(latest_held.exit_code, 0) << latest_held.err;
  ASSERT_NE(ring_row(latest_free.out), ring_row(latest_held.out)) << "holding a parameter changed nothing";
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate", "--fit", id});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(validate.out.substr(0, validate.out.find('\n') + 1), "fits: corrected fit " + id + "\n");
  // The free fit's errors, not the held one's, which is now the latest.
  EXPECT_FALSE(ring_row(validate.out).empty()) << validate.out;
  EXPECT_EQ(ring_row(validate.out), ring_row(latest_free.out)) << validate.out;
  EXPECT_EQ(validate.out.find("paper2019"), std::string::npos) << validate.out;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT count(DISTINCT run_id) > 600 AS every_run FROM predictions WHERE fit_id = " + id})
                .out,
            "every_run\n1\n");
  const CommandOutput predict =
      Dmlbench({"--db", db_, "model", "predict", "--fit", id, "architecture=ring", "workers=4", "cpu=0.15"});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find("corrected   " + id + " "), std::string::npos) << predict.out;

  const CommandOutput missing = Dmlbench({"--db", db_, "model", "validate", "--fit", "99999"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("no fit 99999 in "), std::string::npos) << missing.err;
  EXPECT_EQ(missing.out, "");
  const CommandOutput other = Dmlbench({"--db", db_, "model", "validate", "--fit", id, "--model", "linear"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("fit " + id + " is of corrected, not of the --model asked for"), std::string::npos)
      << other.err;
}

// On a copy of the committed database whose pulls in turn were calibrated on
// 0.3-core hosts: fitted again by this dmlbench, the fit has the schedule's
// own wire factor, and every held-out configuration of pulls in turn on
// 0.15-core hosts, six per link profile, is predicted. (How well is the
// findings' matter, not this test's.)
TEST_F(CliTest, CalibratedPullsInTurnHaveTheirOwnWireFactorAndArePredicted) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/pulls-in-turn-calibration.db", db_);
  const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", "corrected"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_TRUE(std::regex_search(fit.out, std::regex(R"(\nwire_factor +ps k=1 pulls-in-turn +[0-9])"))) << fit.out;
  const CommandOutput validate =
      Dmlbench({"--db", db_, "model", "validate", "--model", "corrected", "--experiment", "pulls-in-turn"});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT r.network, count(DISTINCT r.workers) AS points, "
                      "min(p.predicted_epoch_s) > 0 AS all_positive FROM predictions p JOIN runs r USING (run_id) "
                      "WHERE p.fit_id = (SELECT max(fit_id) FROM model_fits WHERE model = 'corrected') "
                      "AND r.pulls_in_turn = 1 GROUP BY r.network ORDER BY r.network"})
                .out,
            "network,points,all_positive\n100mbit,6,1\n1gbit,6,1\n");
}

// On a copy of the committed study: beside each prediction, the model's
// errors on the held-out configurations of that architecture and what lies
// beyond its calibration (here MPI folded at 6 workers, which no
// calibration run did: the study calibrates on 1, 2 and 4).
TEST_F(CliTest, PredictSaysWhatEachPredictionRestsOn) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const CommandOutput folded = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=mpi",
                                         "workers=6", "bandwidth=1gbit", "cpu=0.15"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find("what each prediction rests on"), std::string::npos) << folded.out;
  EXPECT_NE(folded.out.find("  corrected: held-out mpi configurations: median "), std::string::npos) << folded.out;
  EXPECT_NE(folded.out.find("      w=6: calibrated mpi workers 1, 2, 4\n"), std::string::npos) << folded.out;
  EXPECT_NE(folded.out.find("      Open MPI's allreduce by halving and doubling with a fold at w=6: no calibration "
                            "run used it\n"),
            std::string::npos)
      << folded.out;
  // More workers than any calibration run had: the fit's wider interval.
  EXPECT_TRUE(std::regex_search(folded.out, std::regex(R"(\n      its interval is at least -[0-9.]+% / \+[0-9.]+%, )"
                                                       R"(the fit's beyond 4 workers \(its 12 calibration )"
                                                       R"(configurations of 4 workers, each predicted by a fit on )"
                                                       R"(fewer workers\)\n)")))
      << folded.out;
  // What the model expects of the CPU, and what it says sets the iteration.
  EXPECT_TRUE(std::regex_search(folded.out, std::regex(R"(\n  corrected: [0-9.e+-]+ ms of CPU per iteration for the )"
                                                       R"(busiest worker; the iteration is set by the )")))
      << folded.out;
  const CommandOutput inside = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ring",
                                         "workers=2", "bandwidth=100mbit", "cpu=0.15"});
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_NE(inside.out.find("    every setting within its calibration\n"), std::string::npos) << inside.out;
  EXPECT_EQ(inside.out.find("its interval is at least"), std::string::npos) << inside.out;
  // A single server's pulls in turn, which the study never ran, and where
  // they mean nothing.
  const CommandOutput turn = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected", "architecture=ps",
                                       "workers=4", "bandwidth=100mbit", "cpu=0.15", "pulls_in_turn=true"});
  ASSERT_EQ(turn.exit_code, 0) << turn.err;
  EXPECT_NE(turn.out.find("ps k=1 w=4 b=100 pulls-in-turn "), std::string::npos) << turn.out;
  EXPECT_NE(turn.out.find("      pulls in turn: no calibration run had them; their schedule is the model's own\n"),
            std::string::npos)
      << turn.out;
  const CommandOutput nowhere = Dmlbench({"--db", db_, "model", "predict", "--model", "corrected",
                                          "architecture=ps", "servers=2", "workers=4", "pulls_in_turn=true"});
  EXPECT_NE(nowhere.exit_code, 0);
  EXPECT_NE(nowhere.err.find("pulls_in_turn=true: pulls_in_turn applies only to architecture \"ps\" with 1 server, "
                             "partition_bytes = 0 and overlap = false, got ps k=2 w=4 b=100 partition=0"),
            std::string::npos)
      << nowhere.err;
  // predict only reads: the copy is as it was.
  EXPECT_EQ(testing::ReadFile(db_), testing::ReadFile(std::string(DMLBENCH_SOURCE_DIR) +
                                                       "/reports/data/paper-reproduction.db"));
  // validate splits the held-out configurations the same way: 4 of mpi's 11
  // (3 workers, batch 50 and 200) are within the calibration, 7 beyond.
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate", "--model", "corrected"});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find("model      architecture  within  median    p95    max  beyond  median    p95    max"),
            std::string::npos)
      << validate.out;
  EXPECT_NE(validate.out.find("corrected  mpi                4 "), std::string::npos) << validate.out;
  // The model's CPU beside the runs' own reports: for the servers of ps
  // k=1, the model's CPU over the runs' on the 11 held-out configurations
  // (median, min, max of the ratios) and on the 6 calibration ones.
  const std::string ratio = R"( +[0-9]+\.[0-9]{2})";
  EXPECT_TRUE(std::regex_search(validate.out, std::regex(R"(\ncorrected  ps k=1 +server +11)" + ratio + ratio + ratio +
                                                         R"( +6 )")))
      << validate.out;
  // --points: every configuration, with the CPU account and what sets its
  // iteration in the model, and its 90% prediction interval.
  const CommandOutput points = Dmlbench({"--db", db_, "model", "validate", "--model", "corrected", "--points"});
  ASSERT_EQ(points.exit_code, 0) << points.err;
  EXPECT_TRUE(std::regex_search(
      points.out, std::regex(R"(\ncorrected  validation   ps k=1 w=4 b=100 overlap 1 Gbit/s, 0 µs bucket=16384 )"
                             R"(cap=40 cpu=0\.15 +6 +[0-9.]+ +\[[0-9.]+, [0-9.]+\] +[0-9.]+ +-?[0-9]+\.[0-9]% +)"
                             R"([0-9.]+ / [0-9.]+ +[0-9.]+ / [0-9.]+ +(path|worker CPU|server CPU) +)"
                             R"(\[[0-9.]+, [0-9.]+\] \(90%\) *\n)")))
      << points.out;
  // And the measurement against itself: the study's ring, 11 held-out
  // configurations of 6 runs each, split into odd and even repetitions.
  const std::string percent = R"( +[0-9]+\.[0-9]%)";
  EXPECT_TRUE(std::regex_search(validate.out, std::regex(R"(\n\(split half\)  ring +11)" + percent + percent +
                                                         percent + R"( +10 )")))
      << validate.out;
}

TEST_F(CliTest, AFitOfAnotherVersionOfTheModelIsNotUsedToPredict) {
  RunOnce(db_);
  AddFitOfAnOlderVersion(db_);
  for (const char* command : {"predict", "validate"}) {
    std::vector<std::string> args = {"--db", db_, "model", command, "--model", "corrected"};
    if (std::string(command) == "predict") args.push_back("workers=4");
    const CommandOutput output = Dmlbench(args);
    EXPECT_NE(output.exit_code, 0) << command;
    EXPECT_NE(output.err.find("is of version 4; this dmlbench's corrected is version "), std::string::npos)
        << output.err;
    EXPECT_NE(output.err.find("run `dmlbench model fit --model corrected` again"), std::string::npos) << output.err;
  }
}

// Without --model, predict and validate use every model whose latest fit
// this dmlbench can use and name the others on stderr (a database fitted
// before one model's version changed still validates the rest); with no
// usable fit at all, that is the error, naming each model.
TEST_F(CliTest, WithoutModelEveryUsableFitIsUsedAndTheOthersAreNamed) {
  RunOnce(db_);
  const CommandOutput none = Dmlbench({"--db", db_, "model", "validate"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no model has a fit to use: no fit of paper2019 in "), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("; no fit of linear in "), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("run `dmlbench model fit --model corrected+overlap` first"), std::string::npos) << none.err;

  std::filesystem::remove(db_);
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const auto latest = [&](const std::string& model) {
    const std::string csv =
        Dmlbench({"--db", db_, "query", "--csv", "SELECT max(fit_id) FROM model_fits WHERE model = '" + model + "'"})
            .out;
    return csv.substr(csv.find('\n') + 1, csv.size() - csv.find('\n') - 2);
  };
  const std::string fits = "fits: paper2019 fit " + latest("paper2019") + "; corrected+overlap fit " +
                           latest("corrected+overlap") + "; linear fit " + latest("linear") + "; counts fit " +
                           latest("counts") + "\n";
  AddFitOfAnOlderVersion(db_);
  const std::string skipped = "dmlbench: skipped: the latest fit of corrected in " + db_ + " (fit " +
                              latest("corrected") + ") is of version 4; this dmlbench's corrected is version ";
  const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate"});
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(validate.out.substr(0, validate.out.find('\n') + 1), fits) << validate.out;
  EXPECT_EQ(validate.err.rfind(skipped, 0), 0u) << validate.err;
  EXPECT_NE(validate.out.find("\ncorrected+overlap  ring "), std::string::npos) << validate.out;
  const CommandOutput predict = Dmlbench({"--db", db_, "model", "predict", "architecture=ring", "workers=4"});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_EQ(predict.err.rfind(skipped, 0), 0u) << predict.err;
  EXPECT_NE(predict.out.find("\nlinear "), std::string::npos) << predict.out;
  EXPECT_EQ(predict.out.find("\ncorrected "), std::string::npos) << predict.out;
  // Asked for by name, the stale fit is still an error.
  EXPECT_NE(Dmlbench({"--db", db_, "model", "validate", "--model", "corrected"}).exit_code, 0);
}

// `model fit` ends with its verdict: how many models it fitted, then one
// line per model with its fit's id.
TEST_F(CliTest, ModelFitEndsWithOneLinePerModel) {
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", db_);
  const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", "paper2019", "--model", "linear"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  Store store(db_, Store::Mode::kReadOnly);
  auto latest = [&](const std::string& model) {
    return testing::Text(store, "SELECT CAST(max(fit_id) AS TEXT) FROM model_fits WHERE model = '" + model + "'");
  };
  const std::string paper2019 = latest("paper2019"), linear = latest("linear");
  const std::regex verdict("\n\nmodel fit: 2 of 2 models fitted\n"
                           "  paper2019  fitted: fit " + paper2019 + ", residual rms [0-9.]+ ms per iteration\n"
                           "  linear     fitted: fit " + linear + ", residual rms [0-9.]+ ms per iteration\n$");
  EXPECT_TRUE(std::regex_search(fit.out, verdict)) << fit.out;
}

// Every committed database validates every model with its stored fits, as
// the README's commands do (a model whose version changed is refitted on
// each of them, not only on the study's). Each is there, expanded from its
// archive when the build was configured (cmake/ReportData.cmake). The
// databases of model recommend's check (scripts/recommend-validation) have
// no counts fit, and model fit says why: their calibration has no ps with
// several servers.
TEST_F(CliTest, EveryCommittedDatabaseValidatesEveryModel) {
  const std::set<std::string> without_counts = {"recommend-validation.db", "recommend-validation-60s.db"};
  int archives = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data")) {
    if (entry.path().filename().string().ends_with(".db.tar.xz")) {
      ++archives;
      const std::filesystem::path expanded = entry.path().parent_path() / entry.path().stem().stem();
      EXPECT_TRUE(std::filesystem::exists(expanded)) << expanded << " was not expanded from its archive";
    }
    if (entry.path().extension() != ".db") continue;
    std::filesystem::remove(db_);
    std::filesystem::copy_file(entry.path(), db_);
    // A model added since the databases were last packed has no stored
    // fit in them yet: fitted here on the copy's calibration runs.
    for (const char* added : {"counts"}) {
      const std::string fits = Dmlbench({"--db", db_, "query", "--csv",
                                         std::string("SELECT count(*) FROM model_fits WHERE model = '") + added + "'"})
                                   .out;
      if (fits != "count(*)\n0\n") continue;
      const CommandOutput fit = Dmlbench({"--db", db_, "model", "fit", "--model", added});
      if (without_counts.count(entry.path().filename().string())) {
        EXPECT_EQ(fit.err, "dmlbench: error: not fitted: counts (see above why)\n") << entry.path().filename();
        EXPECT_NE(fit.out.find("model fit: counts not fitted: counts: the exchange's costs need calibration runs "
                               "of several workers, of ps with several servers and of both link profiles"),
                  std::string::npos)
            << entry.path().filename() << ": " << fit.out;
        continue;
      }
      EXPECT_EQ(fit.exit_code, 0) << entry.path().filename() << " " << added << ": " << fit.err;
    }
    const bool counts = !without_counts.count(entry.path().filename().string());
    const CommandOutput validate = Dmlbench({"--db", db_, "model", "validate"});
    EXPECT_EQ(validate.exit_code, 0) << entry.path().filename() << ": " << validate.err;
    EXPECT_EQ(validate.err, counts ? "" : "dmlbench: skipped: no fit of counts in " + db_ +
                                              ": run `dmlbench model fit --model counts` first\n")
        << entry.path().filename();
    for (const char* model : {"paper2019 fit", "; corrected fit", "; corrected+overlap fit", "; linear fit"}) {
      EXPECT_NE(validate.out.find(model), std::string::npos) << entry.path().filename() << " " << model;
    }
    if (counts) EXPECT_NE(validate.out.find("; counts fit"), std::string::npos) << entry.path().filename();
  }
  EXPECT_GT(archives, 0);
}

// A run whose trainer reports an epoch far slower than its others (a link
// down for 10 s leaves one of 13.5 s among epochs of 0.5 s) completes, and
// its attempt holds a note that status and logs show.
TEST_F(CliTest, AnEpochStalledInACompleteRunIsNotedInStatusAndLogs) {
  const std::string matrix = WriteMatrix("workers = [1]\nepochs = [3]\n");
  testing::RunFacts launched;
  launched.epochs = 3;
  const std::string trainer =
      WriteScript(dir_ / "trainer", testing::Echo(testing::RunStartLine(launched)) + testing::Echo(testing::EpochLine(1, 1, 2.0)) +
                                        testing::Echo(testing::EpochLine(2, 1, 0.5)) +
                                        testing::Echo(testing::EpochLine(3, 1, 13.5)) +
                                        testing::Echo(testing::RunEndLine()));
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string note =
      "epoch 3 took 13.5 s, 27.0 times the median of the run's other steady epochs (0.500 s): something stalled "
      "it, such as a link down";
  Store store(db_, Store::Mode::kReadOnly);
  const std::string key = testing::Text(store, "SELECT substr(run_key, 1, 12) FROM runs WHERE status = 'complete'");
  const CommandOutput status = Dmlbench({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("\n1 complete run has a note (`dmlbench logs RUN` prints it with the attempt):\n  " +
                            key + " ring w=1 b=100 rep=0: " + note + "\n"),
            std::string::npos)
      << status.out;
  const CommandOutput logs = Dmlbench({"--db", db_, "logs", key});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("attempt 1 of 1: ok\nnote: " + note + "\n"), std::string::npos) << logs.out;
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
  // The closing summary says where the sweep's time went.
  EXPECT_NE(run.out.find("0 pending\nsweep "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" of which steady epochs 1.0 s: efficiency "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("; largest overheads: "), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("[2/2] mpi w=1 b=100 rep=0: complete"), std::string::npos) << run.err;

  plan = Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer});
  EXPECT_NE(plan.out.find("cli-test: 2 runs: 2 complete, 0 pending, 0 failed, 0 interrupted\n"), std::string::npos);

  const CommandOutput status = Dmlbench({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(status.out.rfind(db_ + ": schema version " + std::to_string(Store::KnownSchemaVersion()) + "\n", 0),
            0u)
      << status.out;
  EXPECT_NE(status.out.find("cli-test           1     2         2       0            0                   0"),
            std::string::npos)
      << status.out;
  // Each experiment by its name, its versions, and the path its latest was read from last.
  EXPECT_NE(status.out.find("experiment  versions  runs"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("  " + matrix + "\n"), std::string::npos) << status.out;

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

TEST_F(CliTest, PlanAndSummaryNameEveryParameterTheMatrixVaries) {
  const std::string matrix =
      WriteMatrix("hidden = [[16], [32, 8]]\nlearning_rate = [0.1, 0.25]\nmax_iterations_per_epoch = [3]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());

  const CommandOutput plan = Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  std::istringstream lines(plan.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("#  run_key       architecture  servers  workers  batch    lr  hidden  overlap  network  rep",
                         0),
            0u)
      << plan.out;
  EXPECT_NE(plan.out.find("ring                0        1    100  0.25  32,8    off      -          0"),
            std::string::npos)
      << plan.out;

  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* label : {"ring w=1 b=100 lr=0.1 hidden=16 rep=0", "ring w=1 b=100 lr=0.1 hidden=32,8 rep=0",
                            "ring w=1 b=100 lr=0.25 hidden=16 rep=0", "ring w=1 b=100 lr=0.25 hidden=32,8 rep=0"}) {
    EXPECT_NE(run.out.find(std::string(label) + "  "), std::string::npos) << label << "\n" << run.out;
    EXPECT_NE(run.err.find(std::string(label) + ": complete"), std::string::npos) << label << "\n" << run.err;
  }
}

TEST_F(CliTest, PlanAndRunChooseRunsWithOnly) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());

  const CommandOutput plan =
      Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer, "--only", "architecture=ring|mpi"});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("cli-test: 2 of 3 runs: 0 complete, 2 pending, 0 failed, 0 interrupted\n"),
            std::string::npos)
      << plan.out;
  EXPECT_EQ(plan.out.find("p2p"), std::string::npos) << plan.out;

  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer, "--only", "architecture=mpi"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("cli-test: 1 of 3 runs: 1 complete (1 just now), 0 failed, 0 interrupted, 0 pending\n"),
            std::string::npos)
      << run.out;
  Store store(db_, Store::Mode::kReadOnly);
  // The sweep records every run of the experiment; it ran only the mpi one.
  EXPECT_EQ(Text(store, "SELECT group_concat(architecture || ':' || status, ',') FROM "
                        "(SELECT architecture, status FROM runs ORDER BY architecture)"),
            "mpi:complete,p2p:pending,ring:pending");
  EXPECT_EQ(Text(store, "SELECT group_concat(architecture) FROM runs r JOIN attempts a USING (run_id)"), "mpi");

  // A run-key prefix chooses that run.
  const std::string key = Text(store, "SELECT substr(run_key, 1, 10) FROM runs WHERE architecture = 'mpi'");
  const CommandOutput by_key = Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer, "--only", key});
  EXPECT_NE(by_key.out.find("cli-test: 1 of 3 runs: 1 complete, 0 pending"), std::string::npos) << by_key.out;
}

TEST_F(CliTest, RunSaysWhichRepetitionsItAddedAndWhichPointsStayLoose) {
  const std::string matrix =
      WriteMatrix("architecture = [\"ring\"]\n", 2, "repetitions = 1\nmax_repetitions = 3\ninterval_within = 0.05\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  const CommandOutput out = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("ring w=1 b=100 rep=2"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("cli-test: 3 runs: 3 complete (3 just now)"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("2 of these are repetitions beyond the planned ones, of points whose 95% interval of the "
                         "median epoch time reached further than 5% from it ([execution] interval_within; at most "
                         "max_repetitions = 3 runs a point)\n"),
            std::string::npos)
      << out.out;
  // Three runs cannot give a 95% interval of their median.
  EXPECT_NE(out.out.find("1 point has max_repetitions runs and an interval still wider than asked: measure it on "
                         "quieter hosts, or raise max_repetitions\n  ring w=1 b=100: 0.5 s [0.5, 0.5] over 3 runs\n"),
            std::string::npos)
      << out.out;
}

TEST_F(CliTest, NoRetryFailedLeavesFailedRunsAlone) {
  // Two tries per run; the mpi run's trainer refuses its input, which
  // fails the run at once (and stops the sweep) with a try left.
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n", 2);
  const std::string trainer = WriteScript(
      dir_ / "trainer",
      "case \" $* \" in *\" --architecture mpi \"*) echo 'dmlbench-trainer: error: no' >&2; exit 1;; esac\n" +
          testing::GoodTrainerBody());
  EXPECT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer}).exit_code, 1);

  const CommandOutput again = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer, "--no-retry-failed"});
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_NE(again.out.find("failed (earlier)"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("cli-test: 2 runs: 1 complete (0 just now), 1 failed"), std::string::npos) << again.out;
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
  }
  // The default retries it.
  EXPECT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer, "--retry-failed"}).exit_code, 1);
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 3);
  }
  // Until it has failed `attempts` times: then the summary says so and how to go on.
  const CommandOutput exhausted = Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer, "--retry-failed"});
  EXPECT_EQ(exhausted.exit_code, 1);
  EXPECT_NE(exhausted.out.find("1 run has failed `attempts` times and was not tried again, --retry-failed or not; "
                               "raise [execution] attempts to give it more tries, or `dmlbench forget` it to "
                               "start afresh\n"),
            std::string::npos)
      << exhausted.out;
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 3);
  }
  // A forgotten run starts afresh.
  ASSERT_EQ(Dmlbench({"--db", db_, "forget", "architecture=mpi", "--yes"}).exit_code, 0);
  EXPECT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer}).exit_code, 1);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT attempts FROM runs WHERE architecture = 'mpi'"), 1);

  const CommandOutput help = Dmlbench({"run", "--help"});
  EXPECT_NE(help.out.find("--no-retry-failed"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("(the default)"), std::string::npos) << help.out;
}

TEST_F(CliTest, TagsComeFromTheMatrixAndTheCommandLine) {
  testing::WriteFile(dir_ / "tagged.toml",
                     "[experiment]\nname = \"tagged\"\ntags = [\"baseline\"]\n[defaults]\ndataset = \"synthetic\"\n"
                     "[matrix]\narchitecture = [\"ring\", \"mpi\"]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  const CommandOutput run =
      Dmlbench({"--db", db_, "run", dir_ / "tagged.toml", "--trainer", trainer, "--tag", "v2", "--tag", "nightly"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT architecture, tags FROM run_overview ORDER BY architecture"})
                .out,
            "architecture,tags\nmpi,\"baseline,nightly,v2\"\nring,\"baseline,nightly,v2\"\n");
  const CommandOutput plan =
      Dmlbench({"--db", db_, "plan", dir_ / "tagged.toml", "--trainer", trainer, "--only", "tag=nightly"});
  EXPECT_NE(plan.out.find("tagged: 2 runs: 2 complete"), std::string::npos) << plan.out;
}

// A trainer of two ranks: rank 0 prints a good run, rank 1 a line on stderr,
// and for the mpi architecture rank 1 then fails.
std::string TwoRankTrainerBody() {
  return "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then\n"
         "  echo 'rank 1 says hi' >&2\n"
         "  case \" $* \" in *\" --architecture mpi \"*) echo 'dmlbench-trainer: error: rank 1 fails' >&2; exit 3;; "
         "esac\n"
         "  exit 0\n"
         "fi\n" +
         testing::GoodTrainerBody();
}

TEST_F(CliTest, LogsPrintWhatEachRankOfAnAttemptWrote) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [2]\n", 1);
  const std::string trainer = WriteScript(dir_ / "trainer", TwoRankTrainerBody());
  EXPECT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer}).exit_code, 1);
  std::string ring_key, mpi_key;
  {
    Store store(db_, Store::Mode::kReadOnly);
    ring_key = Text(store, "SELECT substr(run_key, 1, 12) FROM runs WHERE architecture = 'ring'");
    mpi_key = Text(store, "SELECT substr(run_key, 1, 12) FROM runs WHERE architecture = 'mpi'");
    // The failures view keeps its tail besides the whole logs.
    EXPECT_NE(Text(store, "SELECT stderr_tail FROM failures").find("rank 1 fails"), std::string::npos);
  }

  testing::RunFacts launched;
  launched.workers = 2;
  const std::string events =
      testing::RunStartLine(launched) + "\n" + testing::EpochLine(1) + "\n" + testing::RunEndLine() + "\n";
  const CommandOutput ring = Dmlbench({"--db", db_, "logs", ring_key});
  EXPECT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_EQ(ring.out, "run " + ring_key + " (ring w=2 b=100 rep=0), attempt 1 of 1: ok\n"
                      "==> rank 0 stdout (" + std::to_string(events.size()) + " bytes) <==\n" + events +
                      "==> rank 0 stderr (empty) <==\n"
                      "==> rank 1 stdout (empty) <==\n"
                      "==> rank 1 stderr (15 bytes) <==\n"
                      "rank 1 says hi\n"
                      "==> mpirun stderr (15 bytes) <==\n"
                      "rank 1 says hi\n");

  // Any filter that chooses one run will do; --rank keeps one rank's streams.
  const CommandOutput mpi = Dmlbench({"--db", db_, "logs", "architecture=mpi", "--rank", "1"});
  EXPECT_EQ(mpi.exit_code, 0) << mpi.err;
  EXPECT_EQ(mpi.out, "run " + mpi_key + " (mpi w=2 b=100 rep=0), attempt 1 of 1: failed (mpirun exited with status 3: "
                     "dmlbench-trainer: error: rank 1 fails)\n"
                     "==> rank 1 stdout (empty) <==\n"
                     "==> rank 1 stderr (53 bytes) <==\n"
                     "rank 1 says hi\ndmlbench-trainer: error: rank 1 fails\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "logs", mpi_key, "--attempt", "1", "--rank", "1"}).out, mpi.out);
}

// A run that shared its job with another: its logs are the job's, and say so.
TEST_F(CliTest, LogsOfARunThatSharedItsJobSayTheOutputIsTheJobs) {
  const std::string matrix = WriteMatrix(
      "architecture = [\"ring\", \"mpi\"]\nworkers = [1]\nepochs = [2]\nmax_iterations_per_epoch = [2]\n", 1,
      "runs_per_job = 2\n[split]\ncalibration = { workers = [1] }\n");
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--trainer", DMLBENCH_TRAINER});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const CommandOutput logs = Dmlbench({"--db", db_, "logs", "architecture=mpi", "--rank", "0"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("\nits job trained 2 runs in turn (runs_per_job): the output below is the job's, this "
                          "run's events among theirs\n==> rank 0 stdout"),
            std::string::npos)
      << logs.out;
  std::size_t starts = 0;
  for (std::size_t at = logs.out.find("\"run_start\""); at != std::string::npos;
       at = logs.out.find("\"run_start\"", at + 1))
    ++starts;
  EXPECT_EQ(starts, 2u);
}

TEST_F(CliTest, LogsOfADatabaseCopiedWithoutThemAreMissing) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\"]\nworkers = [2]\n", 1);
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", WriteScript(dir_ / "trainer", TwoRankTrainerBody())})
                .exit_code,
            0);
  ASSERT_TRUE(std::filesystem::exists(db_ + ".logs"));
  std::filesystem::copy_file(db_, dir_ / "copy.db");
  const std::string copy = dir_ / "copy.db";
  std::string key, file;
  {
    Store store(copy, Store::Mode::kReadOnly);
    key = Text(store, "SELECT substr(run_key, 1, 12) FROM runs");
    file = Text(store, "SELECT file FROM attempt_logs ORDER BY rank IS NULL, rank, stream = 'stderr'");
  }
  // The copy works ...
  EXPECT_EQ(Dmlbench({"--db", copy, "status"}).exit_code, 0);
  EXPECT_EQ(Dmlbench({"--db", copy, "query", "--csv", "SELECT count(*) AS n FROM complete_epochs"}).out, "n\n1\n");
  // ... and says where its logs should be.
  const CommandOutput logs = Dmlbench({"--db", copy, "logs", key});
  EXPECT_EQ(logs.exit_code, 1);
  EXPECT_EQ(logs.err, "dmlbench: error: the logs of attempt 1 of run " + key + " are missing: " + copy + ".logs/" +
                          file + " does not exist; was the database copied without " + copy + ".logs?\n");
}

TEST_F(CliTest, ForgetShowsAsksRemovesAndRecords) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\", \"p2p\"]\nworkers = [1]\nepochs = [2]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer, "--tag", "first"}).exit_code, 0);
  std::string mpi_key;
  {
    Store store(db_, Store::Mode::kReadOnly);
    mpi_key = Text(store, "SELECT run_key FROM runs WHERE architecture = 'mpi'");
  }
  ASSERT_TRUE(std::filesystem::exists(db_ + ".logs/" + mpi_key));

  // Anything but yes keeps everything.
  const CommandOutput declined = DmlbenchWithInput({"--db", db_, "forget", "architecture=mpi"}, "n\n");
  EXPECT_EQ(declined.exit_code, 1);
  EXPECT_NE(declined.out.find(mpi_key.substr(0, 12) + "  cli-test    mpi w=1 b=100 rep=0  complete         1  first"),
            std::string::npos)
      << declined.out;
  EXPECT_NE(declined.out.find("forget 1 run with 1 attempt, 2 epochs and 3 log files from " + db_ +
                              "? [y/N] nothing was forgotten\n"),
            std::string::npos)
      << declined.out;
  EXPECT_EQ(DmlbenchWithInput({"--db", db_, "forget", "architecture=mpi"}, "").exit_code, 1);
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 3);
  }

  const CommandOutput forgot = DmlbenchWithInput({"--db", db_, "forget", "architecture=mpi"}, "y\n");
  EXPECT_EQ(forgot.exit_code, 0) << forgot.err;
  EXPECT_NE(forgot.out.find("forgot 1 run; the table forgotten_runs records what they were\n"), std::string::npos)
      << forgot.out;
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(Text(store, "SELECT group_concat(architecture) FROM (SELECT architecture FROM runs ORDER BY 1)"),
              "p2p,ring");
    EXPECT_EQ(Int(store, "SELECT count(*) FROM attempts"), 2);
    EXPECT_EQ(Int(store, "SELECT count(*) FROM epochs"), 4);
    EXPECT_EQ(Text(store, "SELECT run_key || ' ' || filter FROM forgotten_runs"), mpi_key + " architecture=mpi");
  }
  EXPECT_FALSE(std::filesystem::exists(db_ + ".logs/" + mpi_key));
  // The forgotten run is pending again, and --yes does not ask.
  EXPECT_NE(Dmlbench({"--db", db_, "plan", matrix, "--trainer", trainer}).out.find("2 complete, 1 pending"),
            std::string::npos);
  const CommandOutput all = Dmlbench({"--db", db_, "forget", "tag=first", "--yes"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("forget 2 runs with 2 attempts, 4 epochs and 6 log files from " + db_ + "? yes (--yes)\n"),
            std::string::npos)
      << all.out;
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 0);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM forgotten_runs"), 3);
}

// ---- error paths of main.cc follow ---------------------------------------

TEST_F(CliTest, QueryCannotWrite) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", WriteScript(dir_ / "t", testing::GoodTrainerBody())})
                .exit_code,
            0);
  const CommandOutput query = Dmlbench({"--db", db_, "query", "DELETE FROM runs"});
  EXPECT_EQ(query.exit_code, 1);
  EXPECT_EQ(query.err, "dmlbench: error: " + db_ + ": the database is open read-only, and this statement would "
                       "write (to it, or as VACUUM INTO to a file of its own): DELETE FROM runs\n");
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

TEST_F(CliTest, OnlyThatDoesNotParseShowsTheColumnAndACaret) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  const CommandOutput run = Dmlbench({"--db", db_, "run", matrix, "--only", "architecture=ps,workers>="});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "dmlbench: error: --only: column 26: expected a value after '>='\n"
            "architecture=ps,workers>=\n"
            "                         ^\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliTest, OnlyThatMatchesNothingIsAnError) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"ps\"]\nworkers = [1, 2]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  for (const char* command : {"plan", "run"}) {
    const CommandOutput output =
        Dmlbench({"--db", db_, command, matrix, "--trainer", trainer, "--only", "architecture=ps,workers>=64"});
    EXPECT_EQ(output.exit_code, 1) << command;
    EXPECT_EQ(output.err,
              "dmlbench: error: --only architecture=ps,workers>=64 matches none of the 4 runs of cli-test\n")
        << command;
  }
}

TEST_F(CliTest, InvalidTagIsRefusedBeforeAnythingRuns) {
  const CommandOutput run = Dmlbench({"--db", db_, "run", WriteMatrix("workers = [1]\n"), "--tag", "two words"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "dmlbench: error: --tag: a tag must be 1 to 64 letters, digits, '.', '_' or '-', got "
                     "\"two words\"\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(CliTest, LogsSayWhichAttemptOrRankDoesNotExist) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [2]\n", 1);
  Dmlbench({"--db", db_, "run", matrix, "--trainer", WriteScript(dir_ / "trainer", TwoRankTrainerBody())});
  std::string key;
  {
    Store store(db_, Store::Mode::kReadOnly);
    key = Text(store, "SELECT substr(run_key, 1, 12) FROM runs WHERE architecture = 'ring'");
  }
  CommandOutput logs = Dmlbench({"--db", db_, "logs", key, "--attempt", "2"});
  EXPECT_EQ(logs.exit_code, 1);
  EXPECT_EQ(logs.err, "dmlbench: error: run " + key + " has no attempt 2; its attempts are 1 to 1\n");
  logs = Dmlbench({"--db", db_, "logs", key, "--rank", "2"});
  EXPECT_EQ(logs.err, "dmlbench: error: attempt 1 of run " + key + " has no output of rank 2; its ranks are 0 to 1\n");
  logs = Dmlbench({"--db", db_, "logs", "workers=64"});
  EXPECT_EQ(logs.err, "dmlbench: error: RUN workers=64 matches none of the 2 runs in " + db_ + "\n");
  logs = Dmlbench({"--db", db_, "logs", "workers=2"});
  EXPECT_EQ(logs.err.rfind("dmlbench: error: workers=2 matches 2 runs, not one: ", 0), 0u) << logs.err;
  EXPECT_NE(logs.err.find("; give a longer run-key prefix or more terms\n"), std::string::npos) << logs.err;
  logs = Dmlbench({"--db", db_, "logs", "workers>"});
  EXPECT_EQ(logs.err, "dmlbench: error: RUN: column 9: expected a value after '>'\nworkers>\n        ^\n");
}

TEST_F(CliTest, ForgetThatChoosesNothingOrAMissingDatabase) {
  const CommandOutput missing = Dmlbench({"--db", db_, "forget", "status=failed", "--yes"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "dmlbench: error: " + db_ + ": no such database (it is created by `dmlbench run MATRIX`)\n");
  EXPECT_FALSE(std::filesystem::exists(db_));
  ASSERT_EQ(Dmlbench({"--db", db_, "run", WriteMatrix("workers = [1]\n"), "--trainer",
                      WriteScript(dir_ / "trainer", testing::GoodTrainerBody())})
                .exit_code,
            0);
  const CommandOutput none = Dmlbench({"--db", db_, "forget", "status=failed", "--yes"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "dmlbench: error: FILTER status=failed matches none of the 1 run in " + db_ + "\n");
  const CommandOutput bad = Dmlbench({"--db", db_, "forget", "status=", "--yes"});
  EXPECT_EQ(bad.err, "dmlbench: error: FILTER: column 8: expected a value after '='\nstatus=\n       ^\n");
}

TEST_F(CliTest, ForgetRefusesTheRunsOfAModelFit) {
  testing::WriteFile(dir_ / "split.toml",
                     "[experiment]\nname = \"split\"\n[defaults]\ndataset = \"synthetic\"\n"
                     "[matrix]\narchitecture = [\"ring\", \"mpi\"]\n[split]\ncalibration = { architecture = [\"ring\"] }\n");
  ASSERT_EQ(Dmlbench({"--db", db_, "run", dir_ / "split.toml", "--trainer",
                      WriteScript(dir_ / "trainer", testing::GoodTrainerBody())})
                .exit_code,
            0);
  {
    Store store(db_);
    ModelFitRecord fit;
    fit.model = "corrected";
    fit.code_commit = "test";
    fit.runs.push_back({Int(store, "SELECT run_id FROM runs WHERE architecture = 'ring'"), 1, 1});
    ASSERT_EQ(store.AddModelFit(fit), 1);
  }
  const CommandOutput forget = Dmlbench({"--db", db_, "forget", "workers<=2", "--yes"});
  EXPECT_EQ(forget.exit_code, 1);
  EXPECT_EQ(forget.err, "dmlbench: error: FILTER workers<=2 chooses runs that model fit 1 used; a fit keeps the "
                        "runs it rests on, so nothing was forgotten (choose others, e.g. add ',split=validation')\n");
  EXPECT_EQ(forget.out, "");
  EXPECT_EQ(Dmlbench({"--db", db_, "forget", "workers<=2,split=validation", "--yes"}).exit_code, 0);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs"), 1);
}

TEST_F(CliTest, AnExperimentInAFilterChoosesTheRunsItSharesWithAnotherToo) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  const std::string trainer = WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
  ASSERT_EQ(Dmlbench({"--db", db_, "run", matrix, "--trainer", trainer}).exit_code, 0);
  // An edited copy under another name: its batch_size = 100 run is the one above.
  testing::WriteFile(dir_ / "copy.toml",
                     "[experiment]\nname = \"copy\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\n"
                     "workers = [1]\nbatch_size = [100, 50]\n[execution]\ntimeout_s = 60\n");
  const CommandOutput copy = Dmlbench({"--db", db_, "run", dir_ / "copy.toml", "--trainer", trainer});
  ASSERT_EQ(copy.exit_code, 0) << copy.out << copy.err;
  const CommandOutput forget = Dmlbench({"--db", db_, "forget", "experiment=copy,batch_size=100", "--yes"});
  EXPECT_EQ(forget.exit_code, 0) << forget.err;
  EXPECT_NE(forget.out.find("  cli-test,copy  "), std::string::npos) << forget.out;
  EXPECT_NE(forget.out.find("forget 1 run with 1 attempt"), std::string::npos) << forget.out;
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(store, "SELECT group_concat(batch_size) FROM runs"), "50");
  EXPECT_EQ(Int(store, "SELECT count(*) FROM experiment_runs"), 1);
}

TEST_F(CliTest, ForgetWaitsForNoSweep) {
  const std::string matrix = WriteMatrix("architecture = [\"ring\", \"mpi\"]\nworkers = [1]\n");
  const std::string trainer = SlowTrainer("60");
  const pid_t pid = StartDmlbench({"--db", db_, "run", matrix, "--trainer", trainer}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"));
  const CommandOutput forget = Dmlbench({"--db", db_, "forget", "architecture=ring", "--yes"});
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(forget.exit_code, 1);
  EXPECT_EQ(forget.err, "dmlbench: error: " + db_ + ": another `dmlbench run` is using this database\n");
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Int(store, "SELECT count(*) FROM runs WHERE architecture = 'ring'"), 1);
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
  // The hint repeats the command as given: with --db, following it resumes this sweep.
  EXPECT_NE(testing::ReadFile(dir_ / "err").find("dmlbench: interrupted; `" +
                                                 ShellJoin({testing::DmlbenchProgram(), "--db", db_, "run", matrix,
                                                            "--trainer", trainer}) +
                                                 "` resumes\n"),
            std::string::npos)
      << testing::ReadFile(dir_ / "err");
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

// A closed terminal or SSH session (SIGHUP) stops the sweep as SIGTERM
// does: the attempt is stored as interrupted, its output is not left here,
// and the status is 129.
TEST_F(CliTest, SighupInterruptsTheCurrentRunWithStatus129) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  const pid_t pid =
      StartDmlbench({"--db", db_, "run", matrix, "--trainer", SlowTrainer("60")}, dir_ / "out", dir_ / "err");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor(db_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"));
  ::kill(pid, SIGHUP);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << testing::ReadFile(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 129);
  Store store(db_, Store::Mode::kReadOnly);
  EXPECT_EQ(Text(store, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(Text(store, "SELECT status FROM attempts"), "interrupted");
  // The trainer is gone, and so is the attempt's output directory.
  std::istringstream pids(testing::ReadFile(dir_ / "pids"));
  for (pid_t trainer_pid; pids >> trainer_pid;) EXPECT_FALSE(Running(trainer_pid)) << trainer_pid;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    EXPECT_EQ(entry.path().filename().string().find("dmlbench-output-" + std::to_string(pid) + "-"),
              std::string::npos);
  }
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

// The report's SQL functions, in `query` too: over four numbers and a NULL
// the median of 1, 2, 3, 10 is 2.5, its 0.25-quantile 1 + 0.75 (2 - 1),
// its coefficient of variation sqrt(50 / 3) / 4, and the widest interval of
// four order statistics, [1, 10], covers the median with probability
// 1 - 2 / 2^4; Kendall's tau is counted by hand. A run's bound is NULL where no corrected fit exists.
TEST_F(CliTest, QueryHasTheReportsStatistics) {
  RunOnce(db_);
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "WITH v(x) AS (VALUES (1), (2), (3), (10), (NULL)) SELECT median(x) AS m, "
                      "quantile(x, 0.25) AS q, round_sig(cv(x), 3) AS cv, median_ci_low(x) AS low, "
                      "median_ci_high(x) AS high, median_ci_coverage(x) AS coverage FROM v"})
                .out,
            "m,q,cv,low,high,coverage\n2.5,1.75,1.02,1,10,0.875\n");
  // Kendall's tau of (x, y) over the pairs with both: y = 3, 1, 2, 5, 4
  // against x = 1..5 (the NULLs left out) has 7 of 10 pairs concordant.
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "WITH v(x, y) AS (VALUES (1, 3), (2, 1), (NULL, 9), (3, 2), (4, 5), (5, 4), (6, NULL)) "
                      "SELECT round(kendall_tau(x, y), 12) AS tau FROM v"})
                .out,
            "tau\n0.4\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "query", "--csv",
                      "SELECT count(*) AS n, count(iteration_bound_s(run_id)) AS bounded FROM runs"})
                .out,
            "n,bounded\n1,0\n");
  const CommandOutput bad = Dmlbench({"--db", db_, "query", "SELECT quantile(workers, 2) FROM runs"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "dmlbench: error: " + db_ + ": quantile(x, p): p must be between 0 and 1\n");

  // On the committed study every complete run has a bound, and no steady
  // epoch beats it.
  const std::filesystem::path study = dir_ / "study.db";
  std::filesystem::copy_file(std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db", study);
  EXPECT_EQ(Dmlbench({"--db", study, "query", "--csv",
                      "SELECT count(*) = count(iteration_bound_s(r.run_id)) AS all_bounded, "
                      "sum(iteration_bound_s(r.run_id) * a.iterations_per_epoch > "
                      "(SELECT min(wall_s) FROM steady_epochs s WHERE s.run_id = r.run_id)) AS beaten "
                      "FROM runs r JOIN attempts a ON a.attempt_id = r.complete_attempt_id "
                      "WHERE r.status = 'complete'"})
                .out,
            "all_bounded,beaten\n1,0\n");
}

// ---- experiments and their runs -------------------------------------------

TEST_F(CliTest, AnEditedCopyOfAMatrixIsAnotherVersionOfItsExperiment) {
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
  // One row for the experiment, its two versions, every run either
  // planned counted once, and the copy's path: the latest version's.
  const CommandOutput status = Dmlbench({"--db", db_, "status"});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find("\ncli-test           2     3         3       0            0                   0  "),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("  " + (dir_ / "copy.toml") + "\n(1 row)\n"), std::string::npos) << status.out;
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
                              "remove such runs with [[exclude]] (or leave them out with --only) or add hosts\n")
        << command;
  }
}

// Two sweeps on the same hosts would each measure the other's load; the
// second is refused before it touches a host, naming the first's database.
TEST_F(CliTest, ASecondSweepOnTheSameHostsIsRefusedWithTheFirstsDatabase) {
  ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  testing::WriteFile(dir_ / "hosts.toml",
                     "format_version = 1\n[[host]]\nname = \"a\"\naddress = \"127.0.0.2\"\n"
                     "[[host]]\nname = \"b\"\naddress = \"127.0.0.3\"\nuser = \"u\"\nport = 2222\n");
  ExecutionOptions execution;
  execution.provider = Provider::kSsh;
  execution.inventory = dir_ / "hosts.toml";
  const std::unique_ptr<HostPoolLock> first = LockHostPool(execution, dir_ / "first.db");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "cache/dmlbench/host-locks/u@127.0.0.3:2222.lock"));
  const std::string matrix = WriteMatrix("workers = [1]\n", 2, "provider = \"ssh\"\ninventory = \"hosts.toml\"\n");
  const CommandOutput output = Dmlbench({"--db", db_, "run", matrix, "--trainer",
                                         WriteScript(dir_ / "trainer", testing::GoodTrainerBody())});
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_NE(output.err.find(" (a, b): in use by another sweep (process " + std::to_string(::getpid()) +
                            " (database " + (dir_ / "first.db") + ")); wait for it to end or stop it\n"),
            std::string::npos)
      << output.err;
}

// ---- the run lock: one sweep per database file, whatever its path ------------

TEST_F(CliTest, ASecondRunThroughAnotherPathToTheDatabaseIsRefused) {
  const std::string matrix = WriteMatrix("workers = [1]\n");
  // The first launch waits until it is stopped; any later one would finish at once.
  const std::string trainer =
      WriteScript(dir_ / "trainer", "if mkdir " + (dir_ / "first") + " 2>/dev/null; then\n" + testing::EchoRunStart() +
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
  EXPECT_NE(status.out.find("cli-test           1     1         1       0            0                   0"),
            std::string::npos)
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
