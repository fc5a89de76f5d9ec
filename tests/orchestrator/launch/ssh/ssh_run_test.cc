// End to end: `dmlbench run` of a matrix with provider = "ssh" on the hosts
// of a real sshd (SshdFixture); the results land in the SQLite database, and
// after `dmlbench inventory probe` a model can be fitted on them.
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

TEST(SshRunTest, AfterTheInventoryProbeAModelFitsTheRunsOfTheInventory) {
  SshdFixture sshd;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  const std::string matrix = sshd.dir() + "/sweep.toml";
  std::ofstream(matrix) << R"([experiment]
name = "ssh-model"
[defaults]
epochs = 2
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
[split]
calibration = { workers = [1, 2] }
)";
  const std::string db = " --db '" + sshd.dir() + "/results.db' ";
  const Outcome run = Shell(Dmlbench() + db + "run '" + matrix + "'");
  ASSERT_EQ(run.status, 0) << run.out;
  // The runs' link is unknown until probed.
  const Outcome unprobed = Shell(Dmlbench() + db + "model fit --model paper2019");
  EXPECT_EQ(unprobed.status, 1);
  EXPECT_NE(unprobed.out.find("no calibration run with a probed link"), std::string::npos) << unprobed.out;

  // dmlbench finds dmlbench-linkprobe beside itself.
  const Outcome probe = Shell(Dmlbench() + db + "inventory probe '" + inventory + "' --seconds-per-size 0.02");
  ASSERT_EQ(probe.status, 0) << probe.out;
  const Outcome fit = Shell(Dmlbench() + db + "model fit --model paper2019 --model linear");
  ASSERT_EQ(fit.status, 0) << fit.out;
  EXPECT_NE(fit.out.find("paper2019: fit 1 on 2 calibration runs (2 points) and 23 probe rows;"), std::string::npos)
      << fit.out;
  EXPECT_NE(fit.out.find("linear: fit 2 on 2 calibration runs (2 points) and 23 probe rows;"), std::string::npos)
      << fit.out;
  EXPECT_EQ(Shell(Dmlbench() + db +
                  "query --csv \"SELECT p.profile, count(*) FROM model_fit_probes f JOIN link_probes p "
                  "USING (link_probe_id) GROUP BY p.profile\"")
                .out,
            "profile,count(*)\nssh-hosts,46\n");
}

}  // namespace
}  // namespace dmlbench
