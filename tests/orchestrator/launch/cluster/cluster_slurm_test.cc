// The emulated cluster's Slurm (`cluster up --slurm`): its configuration
// (no root needed), then, as root with the Slurm packages, a job step runs
// inside its host (namespace, cgroup with the host's quota, the host's own
// home, the host's name), the committed quickstart matrix with provider
// "slurm" completes through the real `dmlbench run`, and `cluster down`
// leaves no process of it behind.
#include "orchestrator/launch/cluster/cluster_slurm.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/slurm_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

TEST(ClusterSlurmConfTest, EachHostIsANodeOfOneCpuAtItsAddressAndTheControllerOnTheBridge) {
  ClusterState state;
  state.name = "x1";
  state.runtime_dir = "/run/dmlbench/x1";
  state.head_address = "10.9.8.1";
  state.hosts = {ClusterHostNamed("x1", 1, "10.9.8.11"), ClusterHostNamed("x1", 2, "10.9.8.12")};
  const std::string conf = ClusterSlurmConfText(state, 4242);
  EXPECT_EQ(ClusterSlurmConf(state.runtime_dir), "/run/dmlbench/x1/slurm/etc/slurm.conf");
  EXPECT_NE(conf.find("\nSlurmctldHost=localhost(10.9.8.1)\nSlurmctldPort=4242\nSlurmdPort=6818\n"),
            std::string::npos) << conf;
  EXPECT_NE(conf.find("\nAuthInfo=socket=/run/dmlbench/x1/slurm/run/munge.sock\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("\nNodeName=dmlb-x1-h1 NodeAddr=10.9.8.11 CPUs=1 Feature=emulated State=UNKNOWN\n"
                      "NodeName=dmlb-x1-h2 NodeAddr=10.9.8.12 CPUs=1 Feature=emulated State=UNKNOWN\n"
                      "PartitionName=emulated Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"),
            std::string::npos) << conf;
}

std::string UniqueName(char tag) {
  std::string name;
  for (unsigned pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36]);
  }
  return std::string(1, tag) + name.substr(0, 5);
}

class ClusterSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = testing::SlurmFixture::Unavailable();
    if (!why.empty()) GTEST_SKIP() << "no Slurm here: " << why;
    name_ = UniqueName('s');
    state_dir_ = dir_ / "cluster";
    runner_ = MakeSystemCommandRunner();
  }
  void TearDown() override {
    if (runner_) ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
    ::unsetenv("SLURM_CONF");
  }

  // Up with Slurm; SLURM_CONF names it for this process and its children.
  ClusterState Up(int hosts, double cpu_cores) {
    ClusterOptions options;
    options.name = name_;
    options.state_dir = state_dir_;
    options.hosts = hosts;
    options.network = {"", 100e6, 0};
    options.cpu_cores = cpu_cores;
    options.sshd = DMLBENCH_SSHD;
    options.slurm = true;
    ClusterState state = ClusterUp(options, *runner_);
    ::setenv("SLURM_CONF", ClusterSlurmConf(state.runtime_dir).c_str(), 1);
    return state;
  }

  testing::TempDir dir_;
  std::string name_;
  std::string state_dir_;
  std::unique_ptr<CommandRunner> runner_;
};

TEST_F(ClusterSlurmTest, AStepRunsInsideItsHostAndDownLeavesNoProcess) {
  const ClusterState state = Up(2, 0.5);
  const std::string h2 = state.hosts[1].name;
  EXPECT_NE(ClusterStatus(state, *runner_).find("slurm SLURM_CONF=" + ClusterSlurmConf(state.runtime_dir) +
                                                ", partition emulated: " + state.hosts[0].name + " idle, " + h2 +
                                                " idle\n"),
            std::string::npos)
      << ClusterStatus(state, *runner_);

  // The step's task: the host's name, address, cgroup (with its quota) and home.
  const CommandOutput step = RunCommand(
      {"srun", "--nodelist=" + h2, "--ntasks=1", "/bin/sh", "-c",
       "hostname; ip -o -4 addr show eth0; grep -E ':cpu(,cpuacct)?:|^0::' /proc/self/cgroup; "
       "cat ~/.ssh/authorized_keys"},
      60);
  ASSERT_EQ(step.exit_code, 0) << step.out << step.err;
  EXPECT_EQ(step.out.substr(0, step.out.find('\n')), h2) << step.out;
  EXPECT_NE(step.out.find("inet " + state.hosts[1].address + "/24"), std::string::npos) << step.out;
  EXPECT_NE(step.out.find("/" + state.hosts[1].cgroup + "\n"), std::string::npos) << step.out;
  EXPECT_NE(step.out.find(ReadTextFile(state.identity_file() + ".pub")), std::string::npos)
      << "the node does not see its host's own home: " << step.out;

  // Every process of the cluster's Slurm, before down.
  std::vector<pid_t> pids;
  for (const std::string& pid_file : std::vector<std::string>{"slurmctld.pid", "munged.pid", "slurmd-" + h2 + ".pid"}) {
    pid_t pid = 0;
    std::istringstream(ReadTextFile(ClusterSlurmDir(state.runtime_dir) + "/run/" + pid_file)) >> pid;
    EXPECT_GT(pid, 0) << pid_file;
    pids.push_back(pid);
  }
  ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  EXPECT_EQ(ClusterLeftovers(name_, "/sys/fs/cgroup", *runner_), std::vector<std::string>{});
  for (const pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " survived cluster down";
  EXPECT_EQ(runner_->Run({"pgrep", "-f", state.runtime_dir + "/"}).exit_code, 1) << "a process of the cluster survived";
}

TEST_F(ClusterSlurmTest, TheQuickstartMatrixCompletesOnTheClustersSlurm) {
  // Its largest run is 5 ranks (ps, 4 workers and a server): one per host.
  const ClusterState state = Up(5, 0.3);
  std::string matrix = ReadTextFile(std::string(DMLBENCH_SOURCE_DIR) + "/experiments/quickstart.toml");
  const std::string local = "provider = \"local\"";
  ASSERT_NE(matrix.find(local), std::string::npos);
  matrix.replace(matrix.find(local), local.size(), "provider = \"slurm\"");
  testing::WriteFile(dir_ / "quickstart.toml", matrix);
  const std::string db = dir_ / "results.db";
  // The trainer where a clone under /tmp builds it: a path no host sees
  // (each has its own /tmp), as a user's build is on no node of many sites.
  char unseen[] = "/tmp/dmlbench-unseen-XXXXXX";
  ASSERT_NE(::mkdtemp(unseen), nullptr);
  const std::string trainer = std::string(unseen) + "/dmlbench-trainer";
  fs::copy_file(DMLBENCH_TRAINER, trainer);
  const CommandOutput run = testing::Dmlbench(
      {"run", dir_ / "quickstart.toml", "--db", db, "--trainer", trainer, "--dataset-dir", DMLBENCH_DATASET_DIR}, 540);
  fs::remove_all(unseen);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;

  Store store(db);
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM runs WHERE status = 'complete'"), 12);
  // The nodes are the hosts, with the facts Slurm gives of them.
  EXPECT_EQ(testing::Int(store, "SELECT count(*) FROM hosts WHERE provider = 'slurm' AND cores = 1 AND "
                                "tags_json = '{\"features\": \"emulated\"}' AND name LIKE 'dmlb-" + name_ + "-h_'"),
            5);
  EXPECT_EQ(testing::Int(store, "SELECT count(DISTINCT h.host_id) FROM attempt_hosts h JOIN runs r "
                                "ON h.attempt_id = r.complete_attempt_id WHERE r.architecture = 'ps' AND r.workers = 4"),
            5);
  // Each rank read the dataset decoded on its own host, in the host's own home.
  for (const ClusterHost& host : state.hosts) {
    const fs::path cache = fs::path(state.host_dir(host)) / "home" / ".cache" / "dmlbench" / "dataset-cache";
    EXPECT_TRUE(fs::exists(cache) && !fs::is_empty(cache)) << cache;
  }
}

}  // namespace
}  // namespace dmlbench
