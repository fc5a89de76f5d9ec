// `dmlbench plan`: where each stored run was measured. The same matrix
// after a local sweep: complete on this machine, pending on an SSH
// inventory or under another [execution] system; plan names the system and,
// for each stored run, where it was measured. Through the real program;
// plan contacts no host.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "orchestrator/core/subprocess.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;

class PlanCommandTest : public ::testing::Test {
 protected:
  std::string WriteMatrix(const std::string& execution) {
    testing::WriteFile(dir_ / "matrix.toml", "[experiment]\nname = \"where\"\n[defaults]\ndataset = \"synthetic\"\n"
                                             "[matrix]\nworkers = [1]\narchitecture = [\"ring\", \"mpi\"]\n"
                                             "[execution]\norder = \"matrix\"\ntimeout_s = 60\n" + execution);
    return dir_ / "matrix.toml";
  }

  static std::string Machine() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
  }

  testing::TempDir dir_;
  std::string db_ = dir_ / "results.db";
  std::string trainer_ = testing::WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
};

TEST_F(PlanCommandTest, AStoredRunSaysWhereItWasMeasuredAndOtherSystemsMeasureItAgain) {
  const CommandOutput run = Dmlbench({"--db", db_, "run", WriteMatrix(""), "--trainer", trainer_});
  ASSERT_EQ(run.exit_code, 0) << run.err;

  CommandOutput plan = Dmlbench({"--db", db_, "plan", WriteMatrix(""), "--trainer", trainer_});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("where: 2 runs: 2 complete, 0 pending, 0 failed, 0 interrupted\nsystem: local/" + Machine() +
                          "\n"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find(" complete  local/" + Machine() + " "), std::string::npos) << plan.out;

  // The same matrix on an SSH inventory: another system, nothing complete there.
  testing::WriteFile(dir_ / "hosts.toml", "format_version = 1\n[[host]]\nname = \"h1\"\naddress = \"10.0.0.1\"\n");
  plan = Dmlbench({"--db", db_, "plan", WriteMatrix("provider = \"ssh\"\ninventory = \"hosts.toml\"\n"), "--trainer",
                   trainer_});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("where: 2 runs: 0 complete, 2 pending, 0 failed, 0 interrupted\nsystem: ssh/h1\n"),
            std::string::npos)
      << plan.out;

  // A name the matrix gives is the system.
  plan = Dmlbench({"--db", db_, "plan", WriteMatrix("system = \"lab\"\n"), "--trainer", trainer_});
  EXPECT_NE(plan.out.find("0 complete, 2 pending, 0 failed, 0 interrupted\nsystem: lab\n"), std::string::npos)
      << plan.out;
}

}  // namespace
}  // namespace dmlbench
