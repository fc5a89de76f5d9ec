// Cluster: option and privilege checks (no root needed), then the real
// lifecycle as root: up, ssh into a host lands in its namespace and cgroup,
// status, reshape, down, and down after a crash. Every test run uses a
// cluster name of its own so parallel runs do not collide.
#include "orchestrator/launch/cluster/cluster.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <sstream>

#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/ssh/inventory.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "(no error)";
}

// A name of this process: "c" + pid in base 36, at most 6 characters.
std::string UniqueName(char tag) {
  std::string name;
  for (unsigned pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36]);
  }
  return std::string(1, tag) + name.substr(0, 5);
}

TEST(ClusterTest, PrivilegeProblemNamesEverythingMissing) {
  EXPECT_EQ(PrivilegeProblem(0, false, "/sys/fs/cgroup/cpu"),
            "the emulated cluster needs root: missing CAP_NET_ADMIN (links, tc), CAP_SYS_ADMIN (network "
            "namespaces) and write access to /sys/fs/cgroup/cpu (CPU cgroups)");
  EXPECT_EQ(PrivilegeProblem(1ull << 21, true, "/sys/fs/cgroup"),
            "the emulated cluster needs root: missing CAP_NET_ADMIN (links, tc)");
  EXPECT_EQ(PrivilegeProblem((1ull << 12) | (1ull << 21), false, "/sys/fs/cgroup"),
            "the emulated cluster needs root: missing write access to /sys/fs/cgroup (CPU cgroups)");
  EXPECT_EQ(PrivilegeProblem((1ull << 12) | (1ull << 21), true, "/sys/fs/cgroup"), "");
}

// Error paths of cluster.cc follow.

// A capped host is a slower CPU, not a fast one that stops for most of
// 100 ms: the period is 10 ms unless the quota would fall below the
// kernel's 1 ms minimum.
TEST(ClusterTest, CpuQuotaPeriodIsShortYetNeverBelowTheKernelsMinimumQuota) {
  EXPECT_EQ(CpuPeriodUs(0.15), 10000);
  EXPECT_EQ(CpuPeriodUs(1.5), 10000);
  EXPECT_EQ(CpuPeriodUs(0.1), 10000);
  EXPECT_EQ(CpuPeriodUs(0.05), 20000);
  EXPECT_EQ(CpuPeriodUs(0.01), 100000);
  EXPECT_EQ(CpuPeriodUs(0), 10000);
  for (double cores : {0.01, 0.013, 0.05, 0.099, 0.15, 0.4}) {
    EXPECT_GE(cores * CpuPeriodUs(cores), 1000 - 1e-9) << cores;
    EXPECT_LE(CpuPeriodUs(cores), kMaxCpuPeriodUs) << cores;
  }
}

TEST(ClusterTest, RejectsABadName) {
  ClusterOptions options;
  options.name = "Main-1";
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }),
            "cluster name must be 1-6 characters of a-z and 0-9, got \"Main-1\"");
  options.name = "toolong";
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }),
            "cluster name must be 1-6 characters of a-z and 0-9, got \"toolong\"");
}

TEST(ClusterTest, RejectsHostCountOutOfRange) {
  ClusterOptions options;
  options.hosts = 0;
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }), "hosts must be between 1 and 64, got 0");
  options.hosts = 65;
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }), "hosts must be between 1 and 64, got 65");
}

TEST(ClusterTest, RejectsCpuShareAboveTheCores) {
  ClusterOptions options;
  options.cpu_cores = 1000;
  const std::string cores = std::to_string(std::thread::hardware_concurrency());
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }),
            "cpu share must be between 0 and " + cores + " cores, got 1000");
}

TEST(ClusterTest, RejectsSharesTheMachineCannotGiveAtOnce) {
  // 11 hosts of 0.4 core on this machine's cores: refused whenever they sum
  // to more than nine tenths of the cores.
  const double cores = std::thread::hardware_concurrency();
  ClusterOptions options;
  options.hosts = 11;
  options.cpu_cores = 0.4;
  if (11 * 0.4 <= 0.9 * cores) GTEST_SKIP() << "this machine has " << cores << " cores";
  std::ostringstream expected;
  expected << "11 hosts of 0.4 cores need 4.4 cores, but this machine has " << cores << " (at most "
           << 0.9 * cores << " can be given to hosts): use fewer hosts or a smaller --cpu";
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }), expected.str());
  // What the committed study uses fits a 2-core machine.
  options.cpu_cores = 0.15;
  if (11 * 0.15 <= 0.9 * cores) {
    EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }), "(no error)");
  }
}

TEST(ClusterTest, RejectsAShareBelowTheKernelsSmallestQuota) {
  ClusterOptions options;
  options.cpu_cores = 0.0001;
  EXPECT_EQ(ErrorOf([&] { ValidateClusterOptions(options); }),
            "cpu share must be 0 (uncapped) or at least 0.01 cores, got 0.0001");
}

TEST(ClusterTest, NoStateIsNamed) {
  EXPECT_EQ(ErrorOf([] { LoadClusterState("no/such/dir"); }),
            "no emulated cluster in no/such/dir (run `dmlbench cluster up`)");
}

TEST(ClusterTest, WithoutPrivilegesUpNamesWhatIsMissing) {
  if (geteuid() != 0) {
    // As an ordinary user the real check fails with this message.
    EXPECT_NE(ErrorOf([] { CheckClusterPrivileges("/sys/fs/cgroup"); }).find("the emulated cluster needs root: missing "),
              std::string::npos);
    return;
  }
  // As root: drop to nobody in a child and report the message back.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string message = "(no error)";
    if (setgid(65534) == 0 && setuid(65534) == 0) {
      ClusterOptions options;
      options.name = "x";
      options.state_dir = "/nonexistent";
      auto runner = MakeSystemCommandRunner();
      message = ErrorOf([&] { ClusterUp(options, *runner); });
    }
    (void)!write(fds[1], message.data(), message.size());
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  const std::string cpu_root = DetectCgroupLayout("/sys/fs/cgroup").cpu_root;
  EXPECT_EQ(message, "the emulated cluster needs root: missing CAP_NET_ADMIN (links, tc), CAP_SYS_ADMIN "
                     "(network namespaces) and write access to " + cpu_root + " (CPU cgroups)");
}

class ClusterOnThisMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    name_ = UniqueName('l');
    state_dir_ = (fs::temp_directory_path() / ("dmlb-cluster-test-" + name_)).string();
    runner_ = MakeSystemCommandRunner();
    ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  }
  void TearDown() override {
    if (runner_) ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  }

  ClusterOptions Options(int hosts) const {
    ClusterOptions options;
    options.name = name_;
    options.state_dir = state_dir_;
    options.hosts = hosts;
    options.network = {"", 100e6, 0};
    options.cpu_cores = 0.5;
    return options;
  }

  // Runs a shell command on a host over the cluster's own ssh settings.
  CommandResult Ssh(const ClusterState& state, int host, const std::string& command) {
    return runner_->Run({"ssh", "-i", state.identity_file(), "-o", "UserKnownHostsFile=" + state.known_hosts_path(),
                         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@" + state.hosts[host].address,
                         command});
  }

  std::string name_;
  std::string state_dir_;
  std::unique_ptr<CommandRunner> runner_;
};

TEST_F(ClusterOnThisMachine, UpMakesReachableShapedCappedHostsAndDownRemovesThem) {
  const ClusterState state = ClusterUp(Options(2), *runner_);
  ASSERT_EQ(state.hosts.size(), 2u);
  EXPECT_EQ(state.hosts[0].name, "dmlb-" + name_ + "-h1");

  // The inventory is one the SSH provider reads, and it holds our state.
  const Inventory inventory = LoadInventory(state.inventory_path());
  ASSERT_EQ(inventory.hosts.size(), 2u);
  EXPECT_EQ(inventory.hosts[1].address, state.hosts[1].address);
  EXPECT_EQ(inventory.host_key_policy, HostKeyPolicy::kStrict);
  const ClusterState loaded = LoadClusterState(state_dir_);
  EXPECT_EQ(loaded.subnet, state.subnet);
  EXPECT_EQ(loaded.network.bandwidth_bits_per_s, 100e6);
  EXPECT_EQ(loaded.cpu_cores, 0.5);

  // ssh lands inside the host: its namespace (address) and its cgroup.
  const CommandResult inside = Ssh(state, 1, "ip -o -4 addr show eth0; cat /proc/self/cgroup");
  ASSERT_EQ(inside.exit_code, 0) << inside.output;
  EXPECT_NE(inside.output.find("inet " + state.hosts[1].address + "/24"), std::string::npos) << inside.output;
  EXPECT_NE(inside.output.find("/dmlb-" + name_ + "-h2\n"), std::string::npos) << inside.output;

  const std::string status = ClusterStatus(state, *runner_);
  EXPECT_NE(status.find("cluster " + name_ + ": 2 hosts on " + state.subnet), std::string::npos) << status;
  EXPECT_NE(status.find("0.5    rate 100Mbit" + std::string(17, ' ') + "rate 100Mbit\n"), std::string::npos) << status;

  EXPECT_FALSE(ClusterLeftovers(name_, "/sys/fs/cgroup", *runner_).empty());
  ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  EXPECT_EQ(ClusterLeftovers(name_, "/sys/fs/cgroup", *runner_), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(state_dir_));
}

TEST_F(ClusterOnThisMachine, ReshapesOnlyWhenTheProfileDiffers) {
  ClusterState state = ClusterUp(Options(1), *runner_);
  EXPECT_FALSE(ReshapeCluster(state, {"same", 100e6, 0}, *runner_));
  EXPECT_TRUE(ReshapeCluster(state, {"fast", 1e9, 0}, *runner_));
  const std::string download = RunChecked(*runner_, {"tc", "qdisc", "show", "dev", state.hosts[0].veth});
  EXPECT_NE(download.find("rate 1Gbit"), std::string::npos) << download;
  const std::string upload = RunChecked(*runner_, {"tc", "-n", state.hosts[0].name, "qdisc", "show", "dev", "eth0"});
  EXPECT_NE(upload.find("rate 1Gbit"), std::string::npos) << upload;
  EXPECT_EQ(LoadClusterState(state_dir_).network.name, "fast");
  // No bandwidth and no latency: back to the cluster's own shaping.
  EXPECT_TRUE(ReshapeCluster(state, NetworkProfile{}, *runner_));
  EXPECT_EQ(LoadClusterState(state_dir_).network.bandwidth_bits_per_s, 100e6);
}

TEST_F(ClusterOnThisMachine, DelayNeedsNetem) {
  ClusterState state = ClusterUp(Options(1), *runner_);
  const bool has_netem = runner_->Run({"tc", "qdisc", "add", "dev", state.hosts[0].veth, "root", "netem"}).exit_code == 0;
  const std::string error = ErrorOf([&] { ReshapeCluster(state, {"far", 100e6, 0.005}, *runner_); });
  if (has_netem) {
    EXPECT_EQ(error, "(no error)");
  } else {
    EXPECT_EQ(error, "cannot delay " + state.hosts[0].veth +
                         " by 5ms: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM); use latency 0");
  }
}

TEST_F(ClusterOnThisMachine, UpRefusesAClusterThatExists) {
  ClusterUp(Options(1), *runner_);
  EXPECT_EQ(ErrorOf([&] { ClusterUp(Options(1), *runner_); }),
            "cluster " + name_ + " already exists (namespace dmlb-" + name_ + "-h1): run `dmlbench cluster down` first");
}

TEST_F(ClusterOnThisMachine, DownRemovesTheLeftoversOfACrashedRun) {
  const ClusterState state = ClusterUp(Options(2), *runner_);
  // A crash: the state is gone, a rank is still running inside a host.
  fs::remove_all(state_dir_);
  const CommandResult started = runner_->Run(
      {"sh", "-c", "sleep 60 >/dev/null 2>&1 &"},
      {state.hosts[0].name, CgroupProcsFile(state.cgroup, state.hosts[0].cgroup)});
  ASSERT_EQ(started.exit_code, 0);
  ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  EXPECT_EQ(ClusterLeftovers(name_, "/sys/fs/cgroup", *runner_), std::vector<std::string>{});
  EXPECT_EQ(runner_->Run({"pgrep", "-f", state_dir_ + "/dmlb-"}).exit_code, 1);
}

}  // namespace
}  // namespace dmlbench
