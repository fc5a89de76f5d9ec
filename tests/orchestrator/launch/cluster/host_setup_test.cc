// HostSetup: an emulated host's sshd_config, its CPU pin, its files made
// afresh, and its making step by step against a machine that only records
// commands (ssh-keygen runs for real; no namespace or cgroup is made, and no
// root is needed).
#include "orchestrator/launch/cluster/host_setup.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Records every command and succeeds, except that ssh-keygen runs for real
// and a host's start (`unshare ...`) answers `start_result`.
class RecordingMachine : public CommandRunner {
 public:
  CommandResult Run(const std::vector<std::string>& argv, const CommandPlace& place) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      commands_.push_back(argv);
      places_.push_back(place);
    }
    if (argv[0] == "ssh-keygen") return real_->Run(argv, place);
    if (argv[0] == "unshare") return start_result;
    return {0, ""};
  }

  std::vector<std::vector<std::string>> commands_;
  std::vector<CommandPlace> places_;
  CommandResult start_result{0, ""};

 private:
  std::mutex mutex_;
  std::unique_ptr<CommandRunner> real_ = MakeSystemCommandRunner();
};

// A one-host cluster "hs" in a directory of its own, its user key made, a
// cgroup v1 tree of its own.
class HostSetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dmlbench-host-setup-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    fs::create_directories(dir_ / "cgroup");
    std::ofstream(dir_ / "cgroup" / "cpu.cfs_quota_us") << "-1\n";
    state_.name = "hs";
    state_.state_dir = (dir_ / "state").string();
    state_.runtime_dir = (dir_ / "run").string();
    state_.host_home = "/root";
    state_.bridge = ClusterBridgeName("hs");
    state_.subnet = "10.199.9.0/24";
    state_.cgroup = {CgroupVersion::kV1, (dir_ / "cgroup").string()};
    state_.cpu_cores = 0.15;
    state_.hosts = {ClusterHostNamed("hs", 1, "10.199.9.11")};
    RunChecked(*MakeSystemCommandRunner(),
               {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", state_.identity_file()});
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  ClusterState state_;
  RecordingMachine machine_;
};

TEST(HostSetupNamesTest, SshdConfigNamesTheHostsOwnFilesAndAddress) {
  EXPECT_EQ(SshdConfig("/run/dmlbench/t1/dmlb-t1-h1", "10.199.7.11"),
            "# sshd of one emulated host; written by `dmlbench cluster up`.\n"
            "ListenAddress 10.199.7.11\n"
            "Port 22\n"
            "HostKey /run/dmlbench/t1/dmlb-t1-h1/ssh_host_ed25519_key\n"
            "AuthorizedKeysFile .ssh/authorized_keys\n"
            "PidFile /run/dmlbench/t1/dmlb-t1-h1/sshd.pid\n"
            "PermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "UsePAM no\n"
            "StrictModes no\n"
            "UseDNS no\n"
            "MaxStartups 100\n"
            "MaxSessions 100\n"
            "Subsystem sftp internal-sftp\n");
  EXPECT_EQ(KeptLogPath("/s", "dmlb-t1-h2"), "/s/dmlb-t1-h2.sshd.log");
}

// Host i runs on CPU i mod the CPUs when it has at most one core and up
// was not told otherwise; else anywhere.
TEST(HostSetupNamesTest, HostsOfAtMostOneCoreArePinned) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  ClusterState state;
  state.cpu_cores = 0.15;
  EXPECT_TRUE(HostsPinned(state));
  EXPECT_EQ(HostCpu(state, 0), "0");
  EXPECT_EQ(HostCpu(state, 3), std::to_string(3 % cpus));
  state.cpu_cores = 1;
  EXPECT_TRUE(HostsPinned(state));
  for (double cores : {0.0, 1.5}) {
    state.cpu_cores = cores;
    EXPECT_FALSE(HostsPinned(state)) << cores;
    EXPECT_EQ(HostCpu(state, 1), "") << cores;
  }
  state.cpu_cores = 0.15;
  state.pin_cpus = false;
  EXPECT_EQ(HostCpu(state, 1), "");
}

TEST(HostSetupNamesTest, TheHostsUserIsRootWithItsHome) { EXPECT_EQ(HostUserHome(), getpwnam("root")->pw_dir); }

// Host key, sshd_config, and a home that holds the cluster's key and
// nothing of an earlier host of the same name.
TEST_F(HostSetupTest, AHostsFilesAreMadeAfresh) {
  const ClusterHost& host = state_.hosts[0];
  const fs::path dir = state_.host_dir(host);
  fs::create_directories(dir / "home");
  std::ofstream(dir / "home" / "stale") << "from an earlier host";
  std::ofstream(KeptLogPath(state_.state_dir, host.name)) << "an earlier failure";
  const std::string known_host = WriteHostFiles(state_, host, machine_);

  EXPECT_FALSE(fs::exists(dir / "home" / "stale"));
  EXPECT_FALSE(fs::exists(KeptLogPath(state_.state_dir, host.name)));
  EXPECT_EQ(ReadText(dir / "home" / ".ssh" / "authorized_keys"), ReadText(state_.identity_file() + ".pub"));
  EXPECT_EQ(ReadText(dir / "sshd_config"), SshdConfig(state_.runtime_dir + "/" + host.name, host.address));
  std::istringstream public_key(ReadText(dir / "ssh_host_ed25519_key.pub"));
  std::string type, key;
  public_key >> type >> key;
  EXPECT_EQ(known_host, "10.199.9.11 ssh-ed25519 " + key + "\n");
}

// Namespace, link, shaping, then sshd started in the host's namespace and
// cgroup, in a mount namespace of its own, pinned to its CPU.
TEST_F(HostSetupTest, AHostIsMadeStepByStepAndItsSshdStartedInside) {
  char sshd_failed = 0;
  int checks = 0;
  SetUpHost(state_, 0, "/usr/sbin/sshd", machine_, [&] { ++checks; }, sshd_failed);
  EXPECT_EQ(sshd_failed, 0);
  EXPECT_EQ(checks, 5);
  const std::string host = "dmlb-hs-h1";
  ASSERT_FALSE(machine_.commands_.empty());
  EXPECT_EQ(machine_.commands_.front(), (std::vector<std::string>{"ip", "netns", "add", host}));
  const std::vector<std::string>& start = machine_.commands_.back();
  ASSERT_EQ(start.size(), 16u);
  EXPECT_EQ(std::vector<std::string>(start.begin(), start.begin() + 7),
            (std::vector<std::string>{"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c"}));
  const std::string inside = state_.runtime_dir + "/" + host;
  EXPECT_EQ(std::vector<std::string>(start.begin() + 8, start.end()),
            (std::vector<std::string>{"dmlbench-host", state_.host_dir(state_.hosts[0]), inside, "/root",
                                      "/usr/sbin/sshd", inside + "/sshd_config", inside + "/sshd.log", "0"}));
  EXPECT_EQ(machine_.places_.back().netns, host);
  EXPECT_EQ(machine_.places_.back().cgroup_procs, (dir_ / "cgroup" / host / "cgroup.procs").string());
  EXPECT_EQ(ReadText(dir_ / "cgroup" / host / "cpu.cfs_quota_us"), "1500");
}

// Error paths of host_setup.cc follow.

TEST_F(HostSetupTest, AnInterruptBeforeTheFirstStepMakesNothing) {
  char sshd_failed = 0;
  EXPECT_THROW(SetUpHost(state_, 0, "/usr/sbin/sshd", machine_, [] { throw std::runtime_error("stop"); },
                         sshd_failed),
               std::runtime_error);
  EXPECT_EQ(machine_.commands_, std::vector<std::vector<std::string>>{});
  EXPECT_EQ(sshd_failed, 0);
}

// Without a log, the message ends with what the start printed.
TEST_F(HostSetupTest, AnSshdThatDoesNotStartIsMarkedAndNamed) {
  machine_.start_result = {255, "unshare: mount failed\n"};
  char sshd_failed = 0;
  std::string message = "(no error)";
  try {
    SetUpHost(state_, 0, "/usr/sbin/sshd", machine_, [] {}, sshd_failed);
  } catch (const ClusterError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "sshd of dmlb-hs-h1 did not start (exit 255):\n  unshare: mount failed");
  EXPECT_EQ(sshd_failed, 1);
}

}  // namespace
}  // namespace dmlbench
