// End to end: `dmlbench run` of a matrix with provider = "ssh" on the hosts
// of a real sshd (SshdFixture); the results land in the SQLite database, and
// after `dmlbench inventory probe` a model can be fitted on them.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

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

// Four jobs at once on four hosts (max_concurrent_runs = 4): attempts that
// overlap in time share no host, and every run completes once.
constexpr char kConcurrentMatrix[] = R"([experiment]
name = "ssh-concurrent"
[defaults]
epochs = 2
max_iterations_per_epoch = 40
dataset = "synthetic"
[matrix]
architecture = ["ring"]
workers = [1, 2]
batch_size = [10, 20, 30, 40]
[execution]
provider = "ssh"
inventory = "hosts.toml"
timeout_s = 300
[split]
calibration = { workers = [1, 2] }
)";

// Attempts that overlap in time, and of those the pairs that share a host.
const char kOverlapping[] =
    "SELECT count(*) FROM attempts a JOIN attempts b ON a.attempt_id < b.attempt_id "
    "AND a.start_unix_s < b.end_unix_s AND b.start_unix_s < a.end_unix_s";
const char kSharingAHost[] =
    "SELECT count(*) FROM attempts a JOIN attempts b ON a.attempt_id < b.attempt_id "
    "AND a.start_unix_s < b.end_unix_s AND b.start_unix_s < a.end_unix_s "
    "JOIN attempt_hosts x ON x.attempt_id = a.attempt_id JOIN attempt_hosts y ON y.attempt_id = b.attempt_id "
    "AND x.host_id = y.host_id";

// Trainer processes whose program lies under `dir` (the hosts' work dirs).
int TrainersUnder(const std::string& dir) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string program = SshdFixture::ReadFile((entry.path() / "cmdline").string());
    const std::string first = program.substr(0, program.find('\0'));
    if (first.rfind(dir, 0) == 0 && first.size() >= 16 && first.substr(first.size() - 16) == "dmlbench-trainer") {
      ++count;
    }
  }
  return count;
}

std::string Csv(const std::string& db, const std::string& sql) {
  const Outcome query = Shell(Dmlbench() + db + "query --csv \"" + sql + "\"");
  return query.out.substr(query.out.find('\n') + 1);
}

TEST(SshRunTest, JobsRunAtOnceOnDisjointHostsAndEachRunCompletesOnce) {
  SshdFixture sshd({"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"});
  sshd.WriteInventory("hosts.toml", 1, "max_concurrent_runs = 4");
  const std::string matrix = sshd.dir() + "/sweep.toml";
  std::ofstream(matrix) << kConcurrentMatrix;
  const std::string db = " --db '" + sshd.dir() + "/results.db' ";
  const Outcome run = Shell(Dmlbench() + db + "run '" + matrix + "'");
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("utilisation "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" of 4 slots"), std::string::npos) << run.out;
  EXPECT_EQ(Csv(db, "SELECT status, count(*) FROM runs GROUP BY status"), "complete,8\n");
  EXPECT_EQ(Csv(db, "SELECT count(*) FROM attempts"), "8\n");
  EXPECT_NE(Csv(db, kOverlapping), "0\n") << "no two jobs ran at once";
  EXPECT_EQ(Csv(db, kSharingAHost), "0\n");
}

// SIGKILL of the orchestrator with four jobs in flight: the next sweep
// records each of their attempts as interrupted, no trainer is left on a
// host, and every run completes exactly once.
TEST(SshRunTest, SigkillWithFourJobsInFlightLosesAndDuplicatesNothing) {
  SshdFixture sshd({"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"});
  sshd.WriteInventory("hosts.toml", 1, "max_concurrent_runs = 4");
  const std::string matrix = sshd.dir() + "/sweep.toml";
  std::string text = kConcurrentMatrix;
  text.replace(text.find("max_iterations_per_epoch = 40"), 29, "max_iterations_per_epoch = 1500");
  text.replace(text.find("workers = [1, 2]"), 16, "workers = [1]");
  std::ofstream(matrix) << text;
  const std::string db_path = sshd.dir() + "/results.db";
  const std::string db = " --db '" + db_path + "' ";
  const pid_t orchestrator = fork();
  if (orchestrator == 0) {
    const std::string log = sshd.dir() + "/first.log";
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(127);
    const std::string dmlbench = Dmlbench();
    execl(dmlbench.c_str(), dmlbench.c_str(), "--db", db_path.c_str(), "run", matrix.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(orchestrator, 0);
  // Wait until four attempts are running, each on its host, with epochs under way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (Csv(db, "SELECT count(*) FROM attempts WHERE status = 'running' AND mpi_library_version IS NOT NULL") !=
         "4\n") {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << SshdFixture::ReadFile(sshd.dir() + "/first.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(kill(orchestrator, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(orchestrator, &status, 0), orchestrator);
  ASSERT_TRUE(WIFSIGNALED(status));
  // The hosts stop the jobs of a dead orchestrator themselves, at once (a
  // trainer in a long epoch writes nothing that would fail before its end).
  const auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (TrainersUnder(sshd.dir()) > 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), gone) << "a trainer outlived its orchestrator";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const Outcome second = Shell(Dmlbench() + db + "run '" + matrix + "'");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(Csv(db, "SELECT status, count(*) FROM attempts GROUP BY status ORDER BY status"),
            "interrupted,4\nok,4\n");
  EXPECT_EQ(Csv(db, "SELECT status, count(*) FROM runs GROUP BY status"), "complete,4\n");
  EXPECT_EQ(Csv(db, "SELECT count(*) FROM (SELECT run_id FROM attempts WHERE status = 'ok' GROUP BY run_id "
                    "HAVING count(*) = 1)"),
            "4\n");
}

}  // namespace
}  // namespace dmlbench
