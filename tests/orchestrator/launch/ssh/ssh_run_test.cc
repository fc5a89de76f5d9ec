// End to end: `dmlbench run` of a matrix with provider = "ssh" on the hosts
// of a real sshd (SshdFixture); the results land in the SQLite database.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

// The build tree holds trainer/dmlbench-trainer and orchestrator/dmlbench.
std::string Dmlbench() {
  return (std::filesystem::path(DMLBENCH_TRAINER).parent_path().parent_path() / "orchestrator" /
          "dmlbench")
      .string();
}

struct Outcome {
  int status = -1;
  std::string out;
};

Outcome Shell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) outcome.out.append(buffer, n);
  const int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

TEST(SshRunTest, SweepRunsOnTheInventoryHostsAndLandsInTheDatabase) {
  SshdFixture sshd;
  sshd.WriteInventory("hosts.toml");
  const std::string matrix = sshd.dir() + "/sweep.toml";
  std::ofstream(matrix) << R"([experiment]
name = "ssh-e2e"
[defaults]
epochs = 1
batch_size = 10
max_iterations_per_epoch = 5
dataset = "synthetic"
[matrix]
architecture = ["ring"]
workers = [1, 2]
[execution]
provider = "ssh"
inventory = "hosts.toml"
timeout_s = 120
attempts = 2
[split]
calibration = { workers = [1] }
)";
  const std::string db = " --db '" + sshd.dir() + "/results.db' ";
  const Outcome run = Shell(Dmlbench() + db + "run '" + matrix + "'");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(Shell(Dmlbench() + db + "query --csv \"SELECT status, count(*) FROM runs GROUP BY status\"").out,
            "status,count(*)\ncomplete,2\n");
  EXPECT_EQ(Shell(Dmlbench() + db + "query --csv \"SELECT name, address, provider FROM hosts ORDER BY name\"").out,
            "name,address,provider\na,127.0.0.2,local\nb,127.0.0.3,local\n");
}

}  // namespace
}  // namespace dmlbench
