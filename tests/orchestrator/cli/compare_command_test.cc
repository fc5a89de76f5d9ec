// `dmlbench compare` as users run it, on real databases: scripted trainers
// whose epoch times are known, so that every median, interval and verdict
// is checked against a hand computation; the gate's exit statuses, a gate
// that could not have seen its factor, and the drift over a history of
// builds on scripted trainers; copies of the committed study, against
// itself, 15% slower, changed in a few configurations, and paired across
// the batch size (--by); then the real trainer through real mpirun on
// Fashion-MNIST, a ring against the same ring made twice as slow, which the
// gate (--fail-if slower) catches.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "orchestrator/core/shell_quote.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;
using testing::Echo;
using testing::EpochLine;
using testing::RunEndLine;
using testing::TempDir;
using testing::Text;
using testing::WriteScript;

constexpr int kEpochs = 4;

// The scripted epoch time of (seed, epoch): 0.1 s plus 0 to 6 ms, times `scale`.
double ScriptedEpochS(int seed, int epoch, double scale) {
  return scale * (0.1 + 0.001 * ((seed * 3 + epoch) % 7));
}

// A trainer printing kEpochs epochs whose times follow ScriptedEpochS for
// the seeds 1 to `seeds` (repetitions 0 to seeds - 1 of seed 1).
std::string ScriptedTrainerBody(double scale, int seeds = 3) {
  std::string body = testing::EchoRunStart() + "case $seed in\n";
  for (int seed = 1; seed <= seeds; ++seed) {
    body += std::to_string(seed) + ")\n";
    for (int e = 1; e <= kEpochs; ++e) body += Echo(EpochLine(e, 1, ScriptedEpochS(seed, e, scale)));
    body += ";;\n";
  }
  return body + "esac\n" + Echo(RunEndLine());
}

class CompareCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"sweep\"\n[defaults]\ndataset = \"synthetic\"\nepochs = " +
                           std::to_string(kEpochs) +
                           "\n[matrix]\narchitecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"
                           "[execution]\nrepetitions = 3\ntimeout_s = 60\nattempts = 1\n");
    fast_ = WriteScript(dir_ / "fast-trainer", ScriptedTrainerBody(1));
    slow_ = WriteScript(dir_ / "slow-trainer", ScriptedTrainerBody(2));
  }

  void Run(const std::string& db, const std::string& trainer, const std::string& tag) {
    const CommandOutput run = Dmlbench({"--db", db, "run", dir_ / "matrix.toml", "--trainer", trainer, "--tag", tag});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
  std::string fast_, slow_;
};

// The steady epochs (2 to kEpochs) of the three repetitions, pooled: their
// median and the 95% interval of 9 values, order statistics 2 and 8.
struct Expected {
  double median, low, high;
};
Expected Pooled(double scale) {
  std::vector<double> sample;
  for (int seed = 1; seed <= 3; ++seed) {
    for (int e = 2; e <= kEpochs; ++e) sample.push_back(std::stod(std::to_string(ScriptedEpochS(seed, e, scale))));
  }
  std::sort(sample.begin(), sample.end());
  return {sample[4], sample[1], sample[7]};
}

TEST_F(CompareCommandTest, AnExperimentAgainstItselfShowsNoSignificantDifference) {
  Run(db_, fast_, "first");
  const CommandOutput self = Dmlbench({"--db", db_, "compare", "sweep", "experiment=sweep"});
  ASSERT_EQ(self.exit_code, 0) << self.err;
  ASSERT_EQ(Pooled(1).median, 0.104);  // by hand: 0.100 0.101 0.102 0.103 [0.104] 0.105 0.105 0.106 0.106
  // The runs' medians, by hand: seed 1 0.105, seed 2 0.102, seed 3 0.105 on
  // both sides; U = 4.5 = mn/2 (ties), p = 1; three runs a side cannot be
  // tested, and the ratio interval is the widest, 0.102/0.105 to 0.105/0.102.
  const std::string row_end = "   3/3     0.105     0.105  1.000 [0.971, 1.029]         1  too few runs\n";
  EXPECT_EQ(self.out,
            "A: experiment=sweep in " + db_ + "\n"
            "B: experiment=sweep in " + db_ + "\n"
            "configuration   runs  A median  B median  B/A [95% CI]          p (Holm)  change\n"
            "--------------  ----  --------  --------  --------------------  --------  ------------\n"
            "mpi w=1 b=100 " + row_end +
            "ring w=1 b=100" + row_end +
            "2 configurations compared, 0 only in A, 0 only in B: 0 slower, 0 faster, 0 within factor, 0 ~, 2 too "
            "few runs\n"
            "study: B/A 1.000 [1.000, 1.000], the geometric mean over 2 configurations; too few configurations to "
            "test (9 are needed)\n"
            "runs: A's/B's; median: of each run's median steady epoch (warm-up excluded), s; B/A: ratio of the\n"
            "medians with the U test's 95% interval; change: U test per configuration, signed-rank test over the\n"
            "study, p Holm-adjusted over the 2 tests, a change when p < 0.05 and B/A is beyond 1.05 either way "
            "(docs/ci.md)\n"
            "\n"
            "how far B's pooled medians lie from A's, |B/A - 1| over each architecture's configurations\n"
            "(between two sweeps of one study: what a perfect model of one would miss the other by):\n"
            "architecture  configurations  median   p95   max\n"
            "------------  --------------  ------  ----  ----\n"
            "mpi                        1    0.0%  0.0%  0.0%\n"
            "ring                       1    0.0%  0.0%  0.0%\n");
}

TEST_F(CompareCommandTest, TwoTrainerBuildsTwoTagsAndTwoDatabases) {
  Run(db_, fast_, "fast");
  Run(db_, slow_, "slow");
  std::string fast_sha, slow_sha;
  {
    Store store(db_, Store::Mode::kReadOnly);
    fast_sha = Text(store, "SELECT min(trainer_sha256) FROM run_overview WHERE tags = 'fast'");
    slow_sha = Text(store, "SELECT min(trainer_sha256) FROM run_overview WHERE tags = 'slow'");
  }
  const Expected f = Pooled(1), s = Pooled(2);
  // Trainer builds by sha256 prefix, as CSV.
  const CommandOutput builds =
      Dmlbench({"--db", db_, "compare", fast_sha.substr(0, 8), slow_sha.substr(0, 8), "--csv"});
  ASSERT_EQ(builds.exit_code, 0) << builds.err;
  const std::string header =
      "configuration,parameters,a_runs,a_epochs,a_median_s,a_ci_low_s,a_ci_high_s,a_ci_coverage,b_runs,b_epochs,"
      "b_median_s,b_ci_low_s,b_ci_high_s,b_ci_coverage,ratio,verdict,run_ratio,run_ratio_ci_low,run_ratio_ci_high,p,"
      "p_holm,change\n";
  EXPECT_EQ(builds.out.substr(0, header.size()), header);
  EXPECT_NE(builds.out.find("\nring w=1 b=100,"), std::string::npos) << builds.out;
  EXPECT_NE(builds.out.find(",slower,2,"), std::string::npos) << builds.out;
  EXPECT_NE(builds.out.find(",too few runs\n"), std::string::npos) << builds.out;
  EXPECT_EQ(builds.out.find("no significant"), std::string::npos) << builds.out;

  // Tags, as JSON: every number as computed by hand.
  const CommandOutput tags = Dmlbench({"--db", db_, "compare", "fast", "tag=slow", "--json"});
  ASSERT_EQ(tags.exit_code, 0) << tags.err;
  const nlohmann::json report = nlohmann::json::parse(tags.out);
  EXPECT_EQ(report["a"]["filter"], "tag=fast");
  EXPECT_EQ(report["b"]["filter"], "tag=slow");
  EXPECT_EQ(report["a"]["complete_runs"], 6);
  EXPECT_EQ(report["confidence_level"], 0.95);
  ASSERT_EQ(report["configurations"].size(), 2u);
  for (const nlohmann::json& c : report["configurations"]) {
    EXPECT_EQ(c["a"]["runs"], 3);
    EXPECT_EQ(c["a"]["epochs"], 9);
    EXPECT_DOUBLE_EQ(c["a"]["median_s"].get<double>(), f.median);
    EXPECT_DOUBLE_EQ(c["a"]["ci_low_s"].get<double>(), f.low);
    EXPECT_DOUBLE_EQ(c["a"]["ci_high_s"].get<double>(), f.high);
    EXPECT_NEAR(c["a"]["ci_coverage"].get<double>(), 1 - 2 * 10.0 / 512, 1e-12);
    EXPECT_DOUBLE_EQ(c["b"]["median_s"].get<double>(), s.median);
    EXPECT_DOUBLE_EQ(c["ratio"].get<double>(), s.median / f.median);
    EXPECT_EQ(c["verdict"], "slower");
    EXPECT_EQ(c["parameters"]["workers"], 1);
    EXPECT_FALSE(c["parameters"].contains("seed"));
  }
  // The shift of each architecture: its one configuration's |B/A - 1|.
  ASSERT_EQ(report["shift_by_architecture"].size(), 2u);
  for (const nlohmann::json& shift : report["shift_by_architecture"]) {
    EXPECT_EQ(shift["configurations"], 1);
    EXPECT_DOUBLE_EQ(shift["max_abs_ratio_minus_1"].get<double>(), s.median / f.median - 1);
    EXPECT_DOUBLE_EQ(shift["median_abs_ratio_minus_1"].get<double>(), s.median / f.median - 1);
  }
  EXPECT_EQ(report["shift_by_architecture"][1]["architecture"], "ring");
  // Swapped, B is faster.
  const CommandOutput swapped = Dmlbench({"--db", db_, "compare", "slow", "fast", "--only", "architecture=ring"});
  EXPECT_NE(swapped.out.find("  0.500 [0.486, 0.515]  "), std::string::npos) << swapped.out;
  EXPECT_NE(swapped.out.find("\n1 configuration compared, 0 only in A, 0 only in B: 0 slower, 0 faster, 0 within "
                             "factor, 0 ~, 1 too few runs\n"),
            std::string::npos)
      << swapped.out;

  // Two databases: every run of each.
  const std::string other = dir_ / "other.db";
  Run(other, slow_, "elsewhere");
  const CommandOutput databases = Dmlbench({"--db", db_, "compare", db_, other});
  ASSERT_EQ(databases.exit_code, 0) << databases.err;
  EXPECT_NE(databases.out.find("A: every run in " + db_ + "\nB: every run in " + other + "\n"), std::string::npos)
      << databases.out;
  // A holds the fast and the slow build: its pooled sample straddles B's.
  EXPECT_NE(databases.out.find("2 configurations compared"), std::string::npos) << databases.out;
}

// ---- error paths of compare_command.cc follow -------------------------------

TEST_F(CompareCommandTest, OperandsThatChooseNothingOrDoNotParse) {
  const CommandOutput missing = Dmlbench({"--db", db_, "compare", "a", "b"});
  EXPECT_EQ(missing.exit_code, 2) << "compare's errors exit 2: its 1 means a regression";
  EXPECT_EQ(missing.err, "dmlbench: error: " + db_ + ": no such database (it is created by `dmlbench run MATRIX`)\n");
  Run(db_, fast_, "sweep");  // a tag with the experiment's name

  CommandOutput out = Dmlbench({"--db", db_, "compare", "architecture=ring,workers>", "sweep"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: A: column 27: expected a value after '>'\n"
                     "architecture=ring,workers>\n"
                     "                          ^\n");
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "workers=7"});
  EXPECT_EQ(out.err, "dmlbench: error: B workers=7 matches none of the 6 runs in " + db_ + "\n");
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "nightly"});
  EXPECT_EQ(out.err.rfind("dmlbench: error: B: \"nightly\" is no experiment, tag or trainer build in " + db_ +
                              " (experiments: sweep; tags: sweep; trainer builds: ",
                          0),
            0u)
      << out.err;
  out = Dmlbench({"--db", db_, "compare", "sweep", "experiment=sweep"});
  EXPECT_EQ(out.err, "dmlbench: error: A: \"sweep\" names more than one thing in " + db_ +
                         "; write experiment=sweep or tag=sweep\n");
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "tag=sweep", "--only", "architecture=p2p"});
  EXPECT_EQ(out.err, "dmlbench: error: A experiment=sweep: --only architecture=p2p matches none of its 6 runs in " +
                         db_ + "\n");
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "architecture=ring", "--only", "architecture="});
  EXPECT_EQ(out.err, "dmlbench: error: --only: column 14: expected a value after '='\n"
                     "architecture=\n"
                     "             ^\n");
  out = Dmlbench({"--db", db_, "compare", "architecture=mpi", "architecture=ring"});
  EXPECT_EQ(out.err, "dmlbench: error: A and B have no configuration in common: A has 1, B has 1 (a configuration "
                     "is every parameter but the seed and the repetition); to pair those that differ in one "
                     "parameter: --by architecture\n");
  out = Dmlbench({"--db", db_, "compare", "sweep.db", "experiment=sweep"});
  EXPECT_EQ(out.err, "dmlbench: error: sweep.db: no such database (it is created by `dmlbench run MATRIX`)\n");
  out = Dmlbench({"--db", db_, "compare", "status=failed", "experiment=sweep"});
  EXPECT_EQ(out.err, "dmlbench: error: A status=failed matches none of the 6 runs in " + db_ + "\n");
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "tag=sweep", "--csv", "--json"});
  EXPECT_EQ(out.exit_code, 2) << "a command line that does not parse";

  // Runs that never completed have no epoch time to compare.
  const CommandOutput broken = Dmlbench({"--db", db_, "run", dir_ / "matrix.toml", "--trainer",
                                         WriteScript(dir_ / "broken-trainer", "exit 3\n"), "--tag", "broken",
                                         "--only", "architecture=ring,repetition=0"});
  ASSERT_EQ(broken.exit_code, 1) << broken.err;
  out = Dmlbench({"--db", db_, "compare", "experiment=sweep", "broken"});
  EXPECT_EQ(out.err, "dmlbench: error: B broken chooses 1 run in " + db_ + ", none of them complete\n");
}

// ---- the gate ---------------------------------------------------------------

// Five repetitions of one ring configuration, enough for the U test (two
// five-run sides completely apart give p = 2/252).
class CompareGateTest : public CompareCommandTest {
 protected:
  void SetUp() override {
    CompareCommandTest::SetUp();
    testing::WriteFile(dir_ / "gate.toml",
                       "[experiment]\nname = \"gate\"\n[defaults]\ndataset = \"synthetic\"\nepochs = " +
                           std::to_string(kEpochs) +
                           "\n[matrix]\narchitecture = [\"ring\"]\nworkers = [1]\n"
                           "[execution]\nrepetitions = 5\ntimeout_s = 60\nattempts = 1\n");
  }
  void RunGate(double scale, const std::string& tag) {
    const std::string trainer = WriteScript(dir_ / ("trainer-" + tag), ScriptedTrainerBody(scale, 5));
    const CommandOutput run = Dmlbench({"--db", db_, "run", dir_ / "gate.toml", "--trainer", trainer, "--tag", tag});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
};

TEST_F(CompareGateTest, ExitsOneOnARegressionAndZeroWithout) {
  RunGate(1, "base");
  RunGate(2, "slow");
  CommandOutput out = Dmlbench({"--db", db_, "compare", "base", "slow", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 1) << out.out << out.err;
  // Run medians 0.105 0.102 0.105 0.101 0.104 against twice those: all
  // apart, but two ties, so the normal approximation: p = 0.012.
  EXPECT_NE(out.out.find("   5/5     0.104     0.208  2.000 [1.942, 2.059]     0.012  slower\n"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: FAIL, 1 of 1 configurations slower:\n"
                         "  ring w=1 b=100\n"),
            std::string::npos)
      << out.out;
  EXPECT_EQ(out.err, "");
  out = Dmlbench({"--db", db_, "compare", "base", "base", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  // Five runs 4% apart at most: the 3rd smallest of the 25 ratios of run
  // medians, 0.101/0.104, bounds what the test could see at 95%.
  EXPECT_NE(out.out.find("gate --fail-if slower --factor 1.05: pass, no configuration slower (1 of 1 tested)\n"
                         "resolution: the smallest change it could have seen at p < 0.05:\n"
                         "  every configuration slower by 1.030 (the U test of ring w=1 b=100)\n"
                         "  one configuration alone: 1.030 (ring w=1 b=100)\n"),
            std::string::npos)
      << out.out;
  // Faster is no regression, unless asked for.
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "slow", "base", "--fail-if", "slower"}).exit_code, 0);
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "slow", "base", "--fail-if", "faster"}).exit_code, 1);
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "slow", "base", "--fail-if", "different"}).exit_code, 1);
  // Twice as slow is within a factor of 2.5; --only chooses what is gated.
  out = Dmlbench({"--db", db_, "compare", "base", "slow", "--fail-if", "slower", "--factor", "2.5"});
  EXPECT_EQ(out.exit_code, 0) << out.out;
  EXPECT_NE(out.out.find("  within factor\n"), std::string::npos) << out.out;
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "base", "slow", "--fail-if", "slower", "--only", "workers=1"}).exit_code,
            1);
  // The text of the gate is left out of --csv and --json; the status stays.
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "base", "slow", "--fail-if", "slower", "--csv"}).exit_code, 1);
}

TEST_F(CompareGateTest, JsonCarriesThePValueTheRatioAndItsInterval) {
  RunGate(1, "base");
  RunGate(2, "slow");
  const CommandOutput out = Dmlbench({"--db", db_, "compare", "base", "slow", "--json", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 1) << out.err;
  const nlohmann::json report = nlohmann::json::parse(out.out);
  const nlohmann::json& test = report["configurations"][0]["u_test"];
  EXPECT_EQ(test["unit"], "run median");
  EXPECT_EQ(test["runs_a"], 5);
  EXPECT_EQ(test["runs_b"], 5);
  EXPECT_EQ(test["u"], 25);
  // Seeds 1 and 3 share a median on each side: the normal approximation
  // with the tie correction, variance 25/12 (11 - 12/90), z = 12/4.758.
  EXPECT_EQ(test["exact"], false);
  EXPECT_NEAR(test["p"].get<double>(), 0.011667312, 1e-8);
  EXPECT_EQ(test["p_holm"], test["p"]) << "one configuration: nothing to adjust";
  EXPECT_NEAR(test["ratio"].get<double>(), 2, 1e-9);
  // Five a side at 95%: the 3rd smallest and 3rd largest of the 25 ratios
  // (P(U <= 2) = 4/252), covering 1 - 8/252.
  EXPECT_LE(test["ratio_ci_low"].get<double>(), 2 + 1e-9);
  EXPECT_GE(test["ratio_ci_high"].get<double>(), 2 - 1e-9);
  EXPECT_NEAR(test["ratio_ci_coverage"].get<double>(), 1 - 8.0 / 252, 1e-12);
  EXPECT_EQ(test["change"], "slower");
  EXPECT_EQ(report["configurations"][0]["a"]["run_median_s"].size(), 5u);
  EXPECT_EQ(report["gate"]["fail_if"], "slower");
  EXPECT_EQ(report["gate"]["failed"], nlohmann::json::array({"ring w=1 b=100"}));
  EXPECT_EQ(report["gate"]["exit_status"], 1);
  EXPECT_EQ(report["gate"]["alpha"], 0.05);
  EXPECT_EQ(report["gate"]["factor"], 1.05);
  EXPECT_EQ(report["gate"]["correction"], "holm");
}

// Three repetitions a side can never reach p < 0.05: a warning on stderr,
// and a gate that cannot judge anything is an error, not a pass.
TEST_F(CompareCommandTest, TooFewRunsWarnAndAGateThatCannotJudgeIsAnError) {
  Run(db_, fast_, "fast");
  Run(db_, slow_, "slow");
  CommandOutput out = Dmlbench({"--db", db_, "compare", "fast", "slow"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.err, "warning: too few runs to test 2 of 2 configurations: mpi w=1 b=100 (3 and 3 runs), ring w=1 "
                     "b=100 (3 and 3 runs); even with every B run beyond every A run the U test could not reach p "
                     "< 0.05 with 2 tested together; 5 runs a side are needed\n");
  out = Dmlbench({"--db", db_, "compare", "fast", "slow", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: --fail-if slower: no configuration has runs enough to be tested (2 "
                     "configurations compared); the gate can neither pass nor fail\n");
  out = Dmlbench({"--db", db_, "compare", "fast", "slow", "--factor", "1"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: --factor must be above 1, got 1\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "fast", "slow", "--fail-if", "sideways"}).exit_code, 2);
  out = Dmlbench({"--db", db_, "compare", "fast"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: expected A and B, or --history SPEC; got only A\n");
}

// Four runs a side, spread so wide that the ratio's interval is [0.455,
// 1.314]: the U test sees nothing, and could not have seen 5%. That is no
// pass: status 2 with the smallest change it could have seen, or a warning
// under --underpowered warn.
TEST_F(CompareCommandTest, AGateThatCouldNotHaveSeenTheFactorSaysSoWithStatusTwo) {
  testing::WriteFile(dir_ / "four.toml",
                     "[experiment]\nname = \"four\"\n[defaults]\ndataset = \"synthetic\"\nepochs = 2\n"
                     "[matrix]\narchitecture = [\"ring\"]\nworkers = [1]\n"
                     "[execution]\nrepetitions = 4\ntimeout_s = 60\nattempts = 1\n");
  auto trainer = [&](const std::string& name, const std::vector<double>& epoch_s) {
    std::string body = testing::EchoRunStart() + "case $seed in\n";
    for (size_t seed = 1; seed <= epoch_s.size(); ++seed) {
      body += std::to_string(seed) + ")\n" + Echo(EpochLine(1, 1, epoch_s[seed - 1])) +
              Echo(EpochLine(2, 1, epoch_s[seed - 1])) + ";;\n";
    }
    return WriteScript(dir_ / name, body + "esac\n" + Echo(RunEndLine()));
  };
  for (const auto& [tag, epoch_s] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"wide-a", {0.110, 0.145, 0.080, 0.100}}, {"wide-b", {0.066, 0.105, 0.075, 0.10512}}}) {
    const CommandOutput run =
        Dmlbench({"--db", db_, "run", dir_ / "four.toml", "--trainer", trainer(tag, epoch_s), "--tag", tag});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  CommandOutput out = Dmlbench({"--db", db_, "compare", "wide-a", "wide-b", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 2) << out.out << out.err;
  // The 16 ratios b/a: their median (0.7875, the Hodges-Lehmann estimate)
  // over the smallest (0.066/0.145) is the slowdown it could have seen.
  EXPECT_NE(out.out.find("   4/4     0.105      0.09  0.857 [0.455, 1.314]      0.34  ~\n"), std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: no verdict, no configuration slower (1 of 1 "
                         "tested), but it could not have seen 1.05\n"
                         "resolution: the smallest change it could have seen at p < 0.05:\n"
                         "  every configuration slower by 1.730 (the U test of ring w=1 b=100)\n"
                         "  one configuration alone: 1.730 (ring w=1 b=100)\n"),
            std::string::npos)
      << out.out;
  EXPECT_EQ(out.err, "dmlbench: error: --fail-if slower: the gate could not have seen every configuration slower by "
                     "--factor 1.05: the smallest change it could see at p < 0.05 is 1.730 (the U test of ring w=1 "
                     "b=100); add runs, raise --factor, or pass --underpowered warn\n");
  out = Dmlbench({"--db", db_, "compare", "wide-a", "wide-b", "--fail-if", "slower", "--underpowered", "warn"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: pass, no configuration slower (1 of 1 tested), but "
                         "it could not have seen 1.05\n"),
            std::string::npos)
      << out.out;
  EXPECT_EQ(out.err, "warning: --fail-if slower: the gate could not have seen every configuration slower by "
                     "--factor 1.05: the smallest change it could see at p < 0.05 is 1.730 (the U test of ring w=1 "
                     "b=100)\n");
  const nlohmann::json report = nlohmann::json::parse(
      Dmlbench({"--db", db_, "compare", "wide-a", "wide-b", "--fail-if", "slower", "--json"}).out);
  EXPECT_EQ(report["gate"]["underpowered"], true);
  EXPECT_EQ(report["gate"]["exit_status"], 2);
  EXPECT_NEAR(report["gate"]["resolution"]["every_configuration"].get<double>(), 0.7875 / (0.066 / 0.145), 1e-9);
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "wide-a", "wide-b", "--fail-if", "slower", "--factor", "1.8"}).exit_code, 0)
      << "a factor it could have seen";
}

TEST_F(CompareCommandTest, FailIfTakesOnlyItsWords) {
  Run(db_, fast_, "fast");
  const CommandOutput out = Dmlbench({"--db", db_, "compare", "fast", "fast", "--fail-if", "2"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: --fail-if: expected slower, faster or different, got 2\n");
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "fast", "fast", "--underpowered", "maybe"}).err,
            "dmlbench: error: --underpowered: expected error or warn, got maybe\n");
  const CommandOutput help = Dmlbench({"compare", "--help"});
  EXPECT_NE(help.out.find("--fail-if slower|faster|different"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("->"), std::string::npos) << "no mapping of words to numbers: " << help.out;
}

// ---- the committed study ----------------------------------------------------

// reports/data/paper-reproduction.db: 106 configurations of 6 runs, one
// steady epoch each. No configuration's six runs can be tested among 107
// tests (8 a side are needed), but the study as a whole can: against a copy
// of itself it passes; against the copy with every epoch 15% slower it
// fails with a geometric mean of 1.150; a mixed change among the seven ring
// configurations at 1 Gbit/s is named configuration by configuration.
class CompareCommittedStudyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string study = std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db";
    for (const std::string& copy : {a_, b_, slower_, mixed_}) std::filesystem::copy_file(study, copy);
    Store(slower_).ExecuteScript("UPDATE epochs SET wall_s = wall_s * 1.15;");
    const std::string ring = "SELECT run_id FROM runs WHERE architecture = 'ring' AND network = '1gbit' AND "
                             "batch_size = 100 AND overlap = 0 AND workers ";
    Store(mixed_).ExecuteScript("UPDATE epochs SET wall_s = wall_s * 1.3 WHERE run_id IN (" + ring + "IN (4, 5));"
                                "UPDATE epochs SET wall_s = wall_s / 1.3 WHERE run_id IN (" + ring + "= 1);");
  }

  TempDir dir_;
  std::string a_ = dir_ / "a.db", b_ = dir_ / "b.db", slower_ = dir_ / "slower.db", mixed_ = dir_ / "mixed.db";
};

TEST_F(CompareCommittedStudyTest, AgainstACopyOfItselfThePassAndFifteenPercentSlowerFails) {
  CommandOutput out = Dmlbench({"compare", a_, b_, "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_NE(out.out.find("\nstudy: B/A 1.000 [1.000, 1.000], the geometric mean over 106 configurations; "
                         "signed-rank p (Holm) 1: ~\n"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: pass, no configuration slower (0 of 106 tested "
                         "alone, and the study as a whole)\n"
                         "resolution: the smallest change it could have seen at p < 0.05:\n"
                         "  every configuration slower by 1.000 (the signed-rank test over 106 configurations)\n"
                         "  one configuration alone: none had runs enough\n"),
            std::string::npos)
      << out.out;
  EXPECT_EQ(out.err.rfind("warning: too few runs to test 106 of 106 configurations: ", 0), 0u) << out.err;
  EXPECT_NE(out.err.find("with 107 tested together; 8 runs a side are needed\n"), std::string::npos) << out.err;

  out = Dmlbench({"compare", a_, slower_, "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 1) << out.out << out.err;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: FAIL, the study as a whole is slower\n"
                         "  B/A 1.150 [1.150, 1.150], the geometric mean over 106 configurations; signed-rank p (Holm) "
                         "<0.0001\n"
                         "  no configuration is slower on its own (0 of 106 had runs enough to be tested alone)\n"),
            std::string::npos)
      << out.out;
  const nlohmann::json report =
      nlohmann::json::parse(Dmlbench({"compare", a_, slower_, "--fail-if", "slower", "--json"}).out);
  EXPECT_NEAR(report["study"]["ratio_geometric_mean"].get<double>(), 1.15, 1e-9);
  EXPECT_EQ(report["study"]["change"], "slower");
  EXPECT_EQ(report["study"]["n"], 106);
  EXPECT_EQ(report["gate"]["study_failed"], true);
  EXPECT_EQ(report["gate"]["failed"], nlohmann::json::array());
  EXPECT_EQ(report["gate"]["tests"], 107);
  EXPECT_EQ(report["gate"]["exit_status"], 1);
  // The other way round it is faster: no regression, unless asked for.
  EXPECT_EQ(Dmlbench({"compare", slower_, a_, "--fail-if", "slower"}).exit_code, 0);
  EXPECT_EQ(Dmlbench({"compare", slower_, a_, "--fail-if", "faster"}).exit_code, 1);
}

TEST_F(CompareCommittedStudyTest, AMixedChangeIsNamedConfigurationByConfiguration) {
  const std::string ring = "architecture=ring,network=1gbit,batch_size=100,overlap=false";
  CommandOutput out = Dmlbench({"compare", a_, mixed_, "--only", ring, "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 1) << out.out << out.err;
  EXPECT_NE(out.out.find("\ngate --fail-if slower --factor 1.05: FAIL, 2 of 7 configurations slower:\n"
                         "  ring w=4 b=100 net=1gbit\n"
                         "  ring w=5 b=100 net=1gbit\n"),
            std::string::npos)
      << out.out;
  EXPECT_EQ(out.err, "") << "six runs a side can be tested among seven configurations";
  out = Dmlbench({"compare", a_, mixed_, "--only", ring, "--fail-if", "faster"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.out.find("FAIL, 1 of 7 configurations faster:\n  ring w=1 b=100 net=1gbit\n"), std::string::npos)
      << out.out;
}

// The study's batch sizes 50 and 200 have no configuration in common, nor
// one that differs in the batch size alone: each keeps 4000 samples an
// epoch, 80 iterations of 50 or 20 of 200. The error names the --by that
// pairs them, and --by pairs the seven.
TEST_F(CompareCommittedStudyTest, ByPairsConfigurationsAcrossAFactor) {
  CommandOutput out = Dmlbench({"--db", a_, "compare", "batch_size=50", "batch_size=200"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: A and B have no configuration in common: A has 7, B has 7 (a configuration "
                     "is every parameter but the seed and the repetition); to pair those that differ in two "
                     "parameters: --by batch_size,max_iterations_per_epoch\n");
  out = Dmlbench({"--db", a_, "compare", "batch_size=50", "batch_size=200", "--by", "batch_size"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: A and B have no configuration in common, even paired by batch_size: A has 7, "
                     "B has 7 (a configuration is every parameter but the seed and the repetition)\n");
  const std::string by = "batch_size,max_iterations_per_epoch";
  out = Dmlbench({"--db", a_, "compare", "batch_size=50", "batch_size=200", "--by", by});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\npaired by " + by + ": each configuration of A with the one of B that differs in "
                         "nothing else\n"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("\nring w=4 b=50->200 iters=80->20 net=1gbit "), std::string::npos) << out.out;
  const nlohmann::json report = nlohmann::json::parse(
      Dmlbench({"--db", a_, "compare", "batch_size=50", "batch_size=200", "--by", by, "--json"}).out);
  EXPECT_EQ(report["by"], by);
  ASSERT_EQ(report["configurations"].size(), 7u);
  for (const nlohmann::json& c : report["configurations"]) {
    EXPECT_EQ(c["parameters"]["batch_size"], 50);
    EXPECT_EQ(c["parameters_b"]["batch_size"], 200);
    EXPECT_EQ(c["parameters"]["max_iterations_per_epoch"], 80);
    EXPECT_EQ(c["parameters_b"]["max_iterations_per_epoch"], 20);
    EXPECT_EQ(c["parameters"]["workers"], c["parameters_b"]["workers"]);
    EXPECT_EQ(c["u_test"]["runs_a"], 6);
  }
  out = Dmlbench({"--db", a_, "compare", "batch_size=50|100", "batch_size=200", "--by", by});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err.rfind("dmlbench: error: --by " + by + ": A has two values of " + by + " for one configuration, ",
                          0),
            0u)
      << out.err;
  out = Dmlbench({"--db", a_, "compare", "batch_size=50", "batch_size=200", "--by", "batch"});
  EXPECT_EQ(out.err.rfind("dmlbench: error: --by: \"batch\" is no parameter of a configuration; expected one of ", 0),
            0u)
      << out.err;
  out = Dmlbench({"--db", a_, "compare", "--history", "trainer", "--by", "batch_size"});
  EXPECT_EQ(out.err, "dmlbench: error: --by pairs the configurations of A and B; it does not apply to --history\n");
}

// ---- history ----------------------------------------------------------------

TEST_F(CompareGateTest, HistoryShowsEachBuildAndFlagsADrift) {
  // Three nightly builds, each 10% slower than the one before, and one
  // tag outside the pattern.
  RunGate(1.0, "nightly-1");
  RunGate(1.1, "nightly-2");
  RunGate(1.21, "nightly-3");
  RunGate(5, "other");
  CommandOutput out = Dmlbench({"--db", db_, "compare", "--history", "tag=nightly-*"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("history: tag=nightly-* in " + db_ + ", 3 builds in the order their first run was "
                          "recorded\nconfiguration   nightly-1  nightly-2  nightly-3  last/first  largest step",
                          0),
            0u)
      << out.out;
  EXPECT_NE(out.out.find("  1.210  +10.0% at nightly-"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("  slower\n"), std::string::npos) << out.out;
  out = Dmlbench({"--db", db_, "compare", "--history", "tag=nightly-*", "--fail-if", "slower"});
  EXPECT_EQ(out.exit_code, 1) << out.out;
  const nlohmann::json report =
      nlohmann::json::parse(Dmlbench({"--db", db_, "compare", "--history", "tag=nightly-*", "--json"}).out);
  EXPECT_EQ(report["builds"], nlohmann::json::array({"nightly-1", "nightly-2", "nightly-3"}));
  const nlohmann::json& ring = report["configurations"][0];
  EXPECT_EQ(ring["builds"][1]["runs"], 5);
  EXPECT_NEAR(ring["ratio_last_first"].get<double>(), 1.21, 1e-6);
  EXPECT_GT(ring["trend"]["z"].get<double>(), 0);
  EXPECT_LT(ring["trend"]["p_holm"].get<double>(), 0.05);
  EXPECT_EQ(ring["change"], "slower");
  // Errors exit 2.
  out = Dmlbench({"--db", db_, "compare", "--history", "tag=weekly-*"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err, "dmlbench: error: --history tag=weekly-*: 0 builds match in " + db_ +
                         " (none); a history needs two or more\n");
  out = Dmlbench({"--db", db_, "compare", "--history", "nightly"});
  EXPECT_EQ(out.err, "dmlbench: error: --history: expected tag=GLOB, experiment=GLOB, trainer=GLOB or trainer, got "
                     "\"nightly\"\n");
  out = Dmlbench({"--db", db_, "compare", "base", "--history", "trainer"});
  EXPECT_EQ(out.err, "dmlbench: error: --history compares builds of one database; A and B do not apply\n");
}

// ---- the real trainer -------------------------------------------------------

// A build of the trainer that does twice the work in every epoch: the real
// trainer, given twice the iterations per epoch the orchestrator asked for.
// Its epochs really take twice as long, compute and communication alike, as
// its own clock measures them; nothing is faked, and no CPU quota (a cgroup,
// which needs root) or test-only option of the trainer is needed.
std::string TwiceTheWorkTrainer(const std::string& path) {
  return WriteScript(path,
                     "trainer=" + ShellQuote(DMLBENCH_TRAINER) +
                         "\n"
                         "n=$#; i=0; doubled=0\n"
                         "while [ $i -lt $n ]; do\n"
                         "  a=$1; shift; i=$((i + 1))\n"
                         "  if [ $doubled = 1 ]; then a=$((a * 2)); doubled=0; fi\n"
                         "  [ \"$a\" = --max-iterations-per-epoch ] && doubled=1\n"
                         "  set -- \"$@\" \"$a\"\n"
                         "done\n"
                         "exec \"$trainer\" \"$@\"\n");
}

TEST(CompareRealTrainerTest, ARingTwiceAsSlowIsReportedSlower) {
  TempDir dir;
  const std::string db = dir / "results.db";
  testing::WriteFile(dir / "ring.toml",
                     "[experiment]\nname = \"ring\"\n[defaults]\ndataset = \"fashion-mnist\"\nepochs = 6\n"
                     "max_iterations_per_epoch = 100\n[matrix]\narchitecture = [\"ring\"]\nworkers = [2]\n"
                     "[execution]\nrepetitions = 5\ntimeout_s = 120\nattempts = 1\n");
  const std::string slowed = TwiceTheWorkTrainer(dir / "twice-the-work");
  // The repetitions alternate between the builds, so that a drift of this
  // machine's load falls on both alike.
  for (int rep = 0; rep < 5; ++rep) {
    for (const auto& [trainer, tag] : std::vector<std::pair<std::string, std::string>>{
             {DMLBENCH_TRAINER, "baseline"}, {slowed, "slowed"}}) {
      const CommandOutput run = Dmlbench({"--db", db, "run", dir / "ring.toml", "--trainer", trainer, "--tag", tag,
                                          "--only", "repetition=" + std::to_string(rep)},
                                         300);
      ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    }
  }
  {
    Store store(db, Store::Mode::kReadOnly);
    EXPECT_EQ(testing::Int(store, "SELECT DISTINCT iterations FROM epochs e JOIN run_overview r USING (run_id) "
                                  "WHERE r.tags = 'slowed'"),
              200);
  }
  // The gate: five runs a side for one configuration (p down to 2/252,
  // still below 0.05 with two of the 25 pairs the other way round, as a
  // burst of load on a shared machine can turn them; four a side had no
  // such room: 2/70, and one pair inverted gives 4/70); the build against
  // itself passes, the slowed one fails.
  // The build against itself: whether five runs a side could have seen 5%
  // depends on this machine's spread while they ran, which is not this
  // test's to judge (GateTest in tests/orchestrator/compare is): warn.
  const CommandOutput self = Dmlbench(
      {"--db", db, "compare", "baseline", "baseline", "--fail-if", "slower", "--underpowered", "warn"});
  EXPECT_EQ(self.exit_code, 0) << self.out << self.err;
  EXPECT_NE(self.out.find("  5/5  "), std::string::npos) << self.out;
  EXPECT_NE(self.out.find("  1.000 ["), std::string::npos) << self.out;
  EXPECT_NE(self.out.find("]         1  ~\n"), std::string::npos) << self.out;

  const CommandOutput compare = Dmlbench({"--db", db, "compare", "baseline", "slowed", "--json", "--fail-if", "slower"});
  ASSERT_EQ(compare.exit_code, 1) << compare.out << compare.err;
  const nlohmann::json report = nlohmann::json::parse(compare.out);
  ASSERT_EQ(report["configurations"].size(), 1u);
  const nlohmann::json& ring = report["configurations"][0];
  EXPECT_EQ(ring["verdict"], "slower") << compare.out;
  EXPECT_EQ(ring["a"]["epochs"], 25);  // 5 steady epochs of each of 5 repetitions
  EXPECT_EQ(ring["u_test"]["change"], "slower") << compare.out;
  EXPECT_LT(ring["u_test"]["p"].get<double>(), 0.05) << compare.out;
  EXPECT_EQ(report["gate"]["failed"], nlohmann::json::array({"ring w=2 b=100"}));
  // Twice the iterations cost about twice the time: 1.97 to 2.03 measured
  // on an idle machine. The bounds leave room for a machine shared with
  // other work: on a CI machine that ran this test alone it read 3.02 once
  // (medians 0.067 and 0.204 s, the slowed runs' interval 0.148-0.213 s),
  // something else holding a core while the slowed runs ran. That the work
  // doubled is checked exactly above (200 iterations); here only that
  // compare's ratio is of that order, neither inverted nor of another scale.
  EXPECT_GT(ring["ratio"].get<double>(), 1.3) << compare.out;
  EXPECT_LT(ring["ratio"].get<double>(), 4.0) << compare.out;
  std::printf("ring w=2, twice the work: B/A = %.3f\n", ring["ratio"].get<double>());
}

}  // namespace
}  // namespace dmlbench
