// Cluster: option and name checks (no root needed), up without privileges; up's
// rollback against a fake machine (root for the privilege check, but no
// namespace or cgroup is made); then the real lifecycle as root, in a state
// directory whose path has a space: up, ssh into a host lands in its
// namespace, cgroup and mounts, status, reshape, down, and down after a
// crash. Every test run uses a cluster name of its own so parallel runs do
// not collide.
#include "orchestrator/launch/cluster/cluster.h"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include <sstream>

#include "common/sha256.h"
#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/cluster_launcher.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/cluster/privileges.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"
#include "tests/orchestrator/support/cluster_error.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// A name of this process: "c" + pid in base 36, at most 6 characters.
std::string UniqueName(char tag) {
  std::string name;
  for (unsigned pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36]);
  }
  return std::string(1, tag) + name.substr(0, 5);
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
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }),
            "cluster name must be 1-6 characters of a-z and 0-9, got \"Main-1\"");
  options.name = "toolong";
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }),
            "cluster name must be 1-6 characters of a-z and 0-9, got \"toolong\"");
}

TEST(ClusterTest, RejectsHostCountOutOfRange) {
  ClusterOptions options;
  options.hosts = 0;
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }), "hosts must be between 1 and 64, got 0");
  options.hosts = 65;
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }), "hosts must be between 1 and 64, got 65");
}

TEST(ClusterTest, RejectsCpuShareAboveTheCores) {
  ClusterOptions options;
  options.cpu_cores = 1000;
  const std::string cores = std::to_string(std::thread::hardware_concurrency());
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }),
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
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }), expected.str());
  // What the committed study uses fits a 2-core machine.
  options.cpu_cores = 0.15;
  if (11 * 0.15 <= 0.9 * cores) {
    EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }), "(no error)");
  }
}

TEST(ClusterTest, RejectsAShareBelowTheKernelsSmallestQuota) {
  ClusterOptions options;
  options.cpu_cores = 0.0001;
  EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterOptions(options); }),
            "cpu share must be 0 (uncapped) or at least 0.01 cores, got 0.0001");
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The state an earlier `cluster up` of cluster `name` left in `dir`.
void WriteClusterState(const fs::path& dir, const std::string& name) {
  fs::create_directories(dir);
  std::ofstream(dir / "inventory.toml") << "format_version = 1\n[[host]]\nname = \"dmlb-" << name
                                        << "-h1\"\naddress = \"10.199.1.11\"\n[emulated_cluster]\nname = \""
                                        << name << "\"\n";
}

// This machine as cluster up and down see it through CommandRunner, without
// touching the kernel: namespaces exist as names, ip and tc succeed,
// ssh-keygen runs for real, and a host's start (`unshare ... sshd`) runs
// `on_start`. A namespace's deletion also empties the cgroup of the same
// name in the fake cgroup tree, whose files the kernel's rmdir would take.
class FakeMachine : public CommandRunner {
 public:
  explicit FakeMachine(fs::path cgroup_cpu_root) : cgroup_cpu_root_(std::move(cgroup_cpu_root)) {}

  CommandResult Run(const std::vector<std::string>& argv, const CommandPlace& place) override {
    std::unique_lock<std::mutex> lock(mutex_);
    commands_.push_back(argv);
    if (on_command) on_command(argv);
    if (argv[0] == "ssh-keygen") {
      lock.unlock();
      return real_->Run(argv, place);
    }
    if (argv[0] == "unshare") {
      lock.unlock();
      return on_start ? on_start(argv) : CommandResult{0, ""};
    }
    if (argv.size() >= 3 && argv[0] == "ip" && argv[1] == "netns") {
      if (argv[2] == "list") {
        std::string names;
        for (const std::string& name : namespaces_) names += name + "\n";
        return {0, names};
      }
      if (argv[2] == "add") namespaces_.insert(argv[3]);
      if (argv[2] == "delete") {
        namespaces_.erase(argv[3]);
        std::error_code error;
        for (const fs::directory_entry& file : fs::directory_iterator(cgroup_cpu_root_ / argv[3], error)) {
          fs::remove(file.path(), error);
        }
      }
    }
    return {0, ""};
  }

  std::vector<std::vector<std::string>> commands() {
    std::lock_guard<std::mutex> lock(mutex_);
    return commands_;
  }
  std::set<std::string> namespaces() {
    std::lock_guard<std::mutex> lock(mutex_);
    return namespaces_;
  }

  std::function<CommandResult(const std::vector<std::string>& argv)> on_start;  // argv of `unshare ...`
  std::function<void(const std::vector<std::string>& argv)> on_command;       // under the lock, before it runs

 private:
  const fs::path cgroup_cpu_root_;
  std::unique_ptr<CommandRunner> real_ = MakeSystemCommandRunner();
  std::mutex mutex_;
  std::vector<std::vector<std::string>> commands_;
  std::set<std::string> namespaces_;
};

// Up and down on a FakeMachine with a cgroup v1 tree of its own, in a state
// directory whose path has a space.
class ClusterOnAFakeMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = UniqueName('f');
    work_ = fs::temp_directory_path() / ("dmlb fake machine " + name_);
    fs::remove_all(work_);
    fs::create_directories(work_ / "cgroup" / "cpu");
    std::ofstream(work_ / "cgroup" / "cpu" / "cpu.cfs_quota_us") << "-1\n";
    state_dir_ = (work_ / "state dir").string();
    machine_ = std::make_unique<FakeMachine>(work_ / "cgroup" / "cpu");
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(std::string(kClusterRuntimeRoot) + "/" + name_, error);
    fs::remove_all(work_, error);
  }

  ClusterOptions Options(int hosts) const {
    ClusterOptions options;
    options.name = name_;
    options.state_dir = state_dir_;
    options.hosts = hosts;
    options.cpu_cores = 0.1;
    options.cgroup_root = (work_ / "cgroup").string();
    return options;
  }

  // Nothing of the cluster is left but what `kept` names, in the state dir.
  void ExpectRolledBack(const std::vector<std::string>& kept) {
    EXPECT_EQ(machine_->namespaces(), std::set<std::string>{});
    EXPECT_FALSE(fs::exists(std::string(kClusterRuntimeRoot) + "/" + name_));
    std::vector<std::string> groups;
    for (const auto& entry : fs::directory_iterator(work_ / "cgroup" / "cpu")) {
      if (entry.is_directory()) groups.push_back(entry.path().filename().string());
    }
    EXPECT_EQ(groups, std::vector<std::string>{});
    std::vector<std::string> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(state_dir_, error)) files.push_back(entry.path().filename().string());
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, kept);
  }

  std::string name_;
  fs::path work_;
  std::string state_dir_;
  std::unique_ptr<FakeMachine> machine_;
};

TEST_F(ClusterOnAFakeMachine, AnSshdThatFailsKeepsItsLogAndTheMessageShowsItsEnd) {
  if (geteuid() != 0) GTEST_SKIP() << "up checks for root first";
  const std::string failing = "dmlb-" + name_ + "-h2";
  std::vector<std::string> start;  // the failing host's start command
  machine_->on_start = [&](const std::vector<std::string>& argv) -> CommandResult {
    if (argv[9].size() < failing.size() || argv[9].substr(argv[9].size() - failing.size()) != failing) {
      return {0, ""};
    }
    start = argv;
    // sshd writes its complaints to its -E log (argv[14], which is
    // argv[9]/sshd.log on this machine).
    std::ofstream(argv[9] + "/sshd.log") << "line 1\nline 2\n/x/sshd_config line 3: Bad configuration option: Foo\n"
                                         << "line 4\nline 5\n\nline 6\nsshd: terminating, 1 bad configuration options\n";
    return {255, "some output"};
  };
  std::string error = "(no error)";
  try {
    ClusterUp(Options(2), *machine_);
  } catch (const ClusterError& e) {
    error = e.what();
  }
  const std::string kept = fs::path(state_dir_).lexically_normal().string() + "/" + failing + ".sshd.log";
  EXPECT_EQ(error, "sshd of " + failing + " did not start (exit 255); the end of its log (kept in " + kept +
                       "):\n  /x/sshd_config line 3: Bad configuration option: Foo\n  line 4\n  line 5\n  line 6\n"
                       "  sshd: terminating, 1 bad configuration options");
  EXPECT_EQ(ReadText(kept).substr(0, 14), "line 1\nline 2\n");
  ExpectRolledBack({failing + ".sshd.log"});

  // The host started in a mount namespace of its own, its sshd reading its
  // files from a path without the state dir's space.
  ASSERT_EQ(start.size(), 16u);
  const std::string inside = std::string(kClusterRuntimeRoot) + "/" + name_ + "/" + failing;
  EXPECT_EQ(std::vector<std::string>(start.begin(), start.begin() + 7),
            (std::vector<std::string>{"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c"}));
  EXPECT_EQ(start[9], fs::path(state_dir_).lexically_normal().string() + "/" + failing);
  EXPECT_EQ(start[10], inside);
  EXPECT_EQ(start[11], getpwnam("root")->pw_dir);
  EXPECT_EQ(std::vector<std::string>(start.begin() + 13, start.begin() + 15),
            (std::vector<std::string>{inside + "/sshd_config", inside + "/sshd.log"}));
  // A host of 0.1 core is pinned to one CPU: the second host to the second.
  EXPECT_EQ(start[15], std::to_string(1 % std::max(1u, std::thread::hardware_concurrency())));
}

TEST_F(ClusterOnAFakeMachine, AnInterruptedUpRemovesEverythingItMade) {
  if (geteuid() != 0) GTEST_SKIP() << "up checks for root first";
  std::atomic<bool> cancel{false};
  machine_->on_command = [&](const std::vector<std::string>& argv) {
    if (argv == std::vector<std::string>{"ip", "netns", "add", "dmlb-" + name_ + "-h2"}) cancel = true;
  };
  std::string error = "(no error)";
  try {
    ClusterUp(Options(3), *machine_, &cancel);
  } catch (const ClusterInterrupted& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "cluster up interrupted; everything it had made is removed");
  ExpectRolledBack({});
  EXPECT_FALSE(fs::exists(state_dir_));
  // Down ran: every namespace that was made was deleted.
  int added = 0, deleted = 0;
  for (const auto& argv : machine_->commands()) {
    added += argv.size() == 4 && argv[1] == "netns" && argv[2] == "add";
    deleted += argv.size() == 4 && argv[1] == "netns" && argv[2] == "delete";
  }
  EXPECT_GE(added, 1);
  EXPECT_EQ(deleted, added);
}

TEST_F(ClusterOnAFakeMachine, AStateDirectoryBelongsToOneCluster) {
  WriteClusterState(state_dir_, "other");
  const std::string before = ReadText(fs::path(state_dir_) / "inventory.toml");
  const std::string dir = fs::path(state_dir_).lexically_normal().string();
  std::string error = "(no error)";
  try {
    ClusterUp(Options(1), *machine_);
  } catch (const ClusterError& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "state directory " + dir + " belongs to cluster other: bring up cluster " + name_ +
                       " with another --state-dir, or take other down first");
  error = "(no error)";
  try {
    ClusterDown(name_, state_dir_, (work_ / "cgroup").string(), *machine_);
  } catch (const ClusterError& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "state directory " + dir + " belongs to cluster other, not " + name_ +
                       ": to take other down, use --name other (or leave --name out)");
  EXPECT_EQ(ReadText(fs::path(state_dir_) / "inventory.toml"), before);
  EXPECT_EQ(machine_->commands(), std::vector<std::vector<std::string>>{});
}

TEST_F(ClusterOnAFakeMachine, AnInventoryNotWrittenByUpIsLeftAlone) {
  fs::create_directories(state_dir_);
  const std::string text = "format_version = 1\n[[host]]\nname = \"mine\"\naddress = \"192.0.2.1\"\n";
  std::ofstream(fs::path(state_dir_) / "inventory.toml") << text;
  const std::string expected = fs::path(state_dir_).string() + "/inventory.toml: no [emulated_cluster] table: not "
                               "written by `dmlbench cluster up`";
  EXPECT_EQ(ClusterErrorOf([&] { ClusterUp(Options(1), *machine_); }), expected);
  EXPECT_EQ(ClusterErrorOf([&] { ClusterDown(name_, state_dir_, (work_ / "cgroup").string(), *machine_); }), expected);
  EXPECT_EQ(ReadText(fs::path(state_dir_) / "inventory.toml"), text);
}

TEST_F(ClusterOnAFakeMachine, DownRefusesANameThatIsNotAClusterName) {
  for (const std::string name : {"", "../x", "Main", "toolong", "a b"}) {
    EXPECT_EQ(ClusterErrorOf([&] { ClusterDown(name, state_dir_, (work_ / "cgroup").string(), *machine_); }),
              "cluster name must be 1-6 characters of a-z and 0-9, got \"" + name + "\"");
  }
  EXPECT_EQ(machine_->commands(), std::vector<std::vector<std::string>>{});
}

// The links of a hand-made cluster of three hosts on the fake machine,
// recorded (but never shaped) at `network`.
ClusterState RecordedAt(const std::string& name, const std::string& state_dir, const NetworkProfile& network) {
  ClusterState state;
  state.name = name;
  state.state_dir = state_dir;
  state.runtime_dir = ClusterRuntimeDir(name);
  state.host_home = "/root";
  state.work_dir = "/root/dmlbench";
  state.subnet = "10.199.7.0/24";
  state.bridge = ClusterBridgeName(name);
  state.head_address = "10.199.7.1";
  state.base_network = network;
  state.network = network;
  for (int i = 1; i <= 3; ++i) state.hosts.push_back(ClusterHostNamed(name, i, "10.199.7.1" + std::to_string(i)));
  fs::create_directories(state_dir);
  WriteClusterState(state);
  return state;
}

// The tc commands on `host`'s link, both ends, whose verb is `verb`
// ("add", "replace", "del").
int QdiscCommands(const std::vector<std::vector<std::string>>& commands, const ClusterHost& host,
                  const std::string& verb) {
  int count = 0;
  for (const std::vector<std::string>& argv : commands) {
    const bool names_host = std::find(argv.begin(), argv.end(), host.veth) != argv.end() ||
                            std::find(argv.begin(), argv.end(), host.name) != argv.end();
    count += argv[0] == "tc" && names_host && std::find(argv.begin(), argv.end(), verb) != argv.end();
  }
  return count;
}

// The tc commands that set a qdisc on `host`'s link, both ends.
int QdiscsSet(const std::vector<std::vector<std::string>>& commands, const ClusterHost& host) {
  return QdiscCommands(commands, host, "add") + QdiscCommands(commands, host, "replace");
}

TEST_F(ClusterOnAFakeMachine, ReshapingIsSkippedWhenTheRecordedProfileIsTheRunsOne) {
  ClusterState state = RecordedAt(name_, state_dir_, {"slow", 100e6, 0});
  EXPECT_FALSE(ReshapeCluster(state, {"same", 100e6, 0}, *machine_));
  EXPECT_EQ(machine_->commands(), std::vector<std::vector<std::string>>{});
  EXPECT_TRUE(ReshapeCluster(state, {"fast", 1e9, 0}, *machine_));
  for (const ClusterHost& host : state.hosts) {
    EXPECT_EQ(QdiscsSet(machine_->commands(), host), 2) << host.name;
    // A rate to another rate: each end's bucket is replaced in place.
    EXPECT_EQ(QdiscCommands(machine_->commands(), host, "del"), 0) << host.name;
  }
  EXPECT_EQ(LoadClusterState(state_dir_).network.name, "fast");
}

// Until every link has its new shaping, the record says "unknown": a
// reshape that failed (or was killed) half way, leaving hosts of two
// profiles, is redone by the next, even to the profile recorded before.
TEST_F(ClusterOnAFakeMachine, AReshapeThatFailedHalfWayIsRedoneWhateverTheNextAsks) {
  ClusterState state = RecordedAt(name_, state_dir_, {"slow", 100e6, 0});
  const std::string lost = state.hosts[1].name;
  machine_->on_command = [&](const std::vector<std::string>& argv) {
    if (argv[0] == "tc" && std::find(argv.begin(), argv.end(), lost) != argv.end()) {
      throw ClusterError("`tc` failed (exit 2): Cannot find device \"eth0\"");
    }
  };
  EXPECT_EQ(ClusterErrorOf([&] { ReshapeCluster(state, {"fast", 1e9, 0}, *machine_); }),
            "`tc` failed (exit 2): Cannot find device \"eth0\"");
  EXPECT_EQ(LoadClusterState(state_dir_).network.name, "unknown");
  machine_->on_command = nullptr;
  ClusterState next = LoadClusterState(state_dir_);
  const size_t before = machine_->commands().size();
  EXPECT_TRUE(ReshapeCluster(next, {"slow", 100e6, 0}, *machine_));
  const std::vector<std::vector<std::string>> all = machine_->commands();
  const std::vector<std::vector<std::string>> redone(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  for (const ClusterHost& host : next.hosts) {
    EXPECT_EQ(QdiscsSet(redone, host), 2) << host.name;
    // From "unknown", never in place.
    EXPECT_EQ(QdiscCommands(redone, host, "del"), 2) << host.name;
  }
  EXPECT_EQ(LoadClusterState(state_dir_).network.name, "slow");
}

TEST(ClusterTest, WithoutPrivilegesUpNamesWhatIsMissing) {
  if (geteuid() != 0) {
    // As an ordinary user the real check fails with this message.
    EXPECT_NE(ClusterErrorOf([] { CheckClusterPrivileges("/sys/fs/cgroup"); }).find("the emulated cluster needs root: missing "),
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
      message = ClusterErrorOf([&] { ClusterUp(options, *runner); });
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
    // A space in the path: sshd_config and Open MPI's ssh arguments cannot
    // hold one, and must not need to.
    work_ = fs::temp_directory_path() / ("dmlb cluster test " + name_);
    state_dir_ = (work_ / "state dir").string();
    runner_ = MakeSystemCommandRunner();
    ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
  }
  void TearDown() override {
    if (runner_) ClusterDown(name_, state_dir_, "/sys/fs/cgroup", *runner_);
    fs::remove_all(work_);
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
    return runner_->Run({"ssh", "-F", "none", "-i", state.identity_file(), "-o",
                         "UserKnownHostsFile=" + state.known_hosts_path(),
                         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@" + state.hosts[host].address,
                         command});
  }

  std::string name_;
  fs::path work_;
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
  EXPECT_TRUE(loaded.pin_cpus);

  // ssh lands inside the host: its namespace (address) and its cgroup.
  const CommandResult inside = Ssh(state, 1, "ip -o -4 addr show eth0; cat /proc/self/cgroup");
  ASSERT_EQ(inside.exit_code, 0) << inside.output;
  EXPECT_NE(inside.output.find("inet " + state.hosts[1].address + "/24"), std::string::npos) << inside.output;
  EXPECT_NE(inside.output.find("/dmlb-" + name_ + "-h2\n"), std::string::npos) << inside.output;

  const std::string status = ClusterStatus(state, *runner_);
  EXPECT_NE(status.find("cluster " + name_ + ": 2 hosts on " + state.subnet), std::string::npos) << status;
  EXPECT_NE(status.find(", host i on CPU i mod the CPUs\n"), std::string::npos) << status;
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
  const std::string error = ClusterErrorOf([&] { ReshapeCluster(state, {"far", 100e6, 0.005}, *runner_); });
  if (has_netem) {
    EXPECT_EQ(error, "(no error)");
  } else {
    EXPECT_EQ(error, "cannot delay " + state.hosts[0].veth +
                         " by 5ms: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM); use latency 0");
  }
}

TEST_F(ClusterOnThisMachine, UpRefusesAClusterThatExists) {
  ClusterUp(Options(1), *runner_);
  EXPECT_EQ(ClusterErrorOf([&] { ClusterUp(Options(1), *runner_); }),
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
  EXPECT_EQ(runner_->Run({"pgrep", "-f", state.runtime_dir + "/dmlb-"}).exit_code, 1);
}

TEST_F(ClusterOnThisMachine, HostsStartLikeFreshMachines) {
  const ClusterState state = ClusterUp(Options(2), *runner_);
  const std::string home = getpwnam("root")->pw_dir;
  // Its own home (only the cluster's key in it: none of this machine's
  // user's files, no shell start-up file), its own empty /tmp and /dev/shm.
  const CommandResult first = Ssh(state, 0,
                                  "echo \"$HOME\"; ls -A; stat -f -c %T /tmp; { ls -A /tmp; ls -A /dev/shm; } | grep -c . ; "
                                  "touch /tmp/mark ~/mark /dev/shm/mark");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, home + "\n.ssh\ntmpfs\n0\n");
  // What one host writes, no other host and not this machine sees.
  const CommandResult second = Ssh(state, 1, "ls -A; ls /tmp /dev/shm | grep -c mark");
  EXPECT_EQ(second.output, ".ssh\n0\n") << second.output;
  EXPECT_TRUE(fs::exists(fs::path(state.host_dir(state.hosts[0])) / "home" / "mark"));
  EXPECT_FALSE(fs::exists(fs::path(home) / "mark"));
  EXPECT_FALSE(fs::exists("/tmp/mark"));
  // A host of at most one core runs on one CPU: host i on CPU i mod the CPUs.
  const CommandResult cpus = Ssh(state, 1, "grep Cpus_allowed_list /proc/self/status");
  EXPECT_EQ(cpus.output, "Cpus_allowed_list:\t" + std::to_string(1 % std::max(1u, std::thread::hardware_concurrency())) +
                             "\n");
}

TEST_F(ClusterOnThisMachine, AHostUpWasToldNotToPinRunsOnAnyCpu) {
  ClusterOptions options = Options(2);
  options.pin_cpus = false;
  const ClusterState state = ClusterUp(options, *runner_);
  EXPECT_FALSE(LoadClusterState(state_dir_).pin_cpus);
  std::string mine;  // the CPUs this test may run on, as the kernel lists them
  std::ifstream status_file("/proc/self/status");
  for (std::string line; std::getline(status_file, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) mine = line + "\n";
  }
  ASSERT_FALSE(mine.empty());
  for (int host = 0; host < 2; ++host) {
    EXPECT_EQ(Ssh(state, host, "grep Cpus_allowed_list /proc/self/status").output, mine) << "host " << host;
  }
  const std::string status = ClusterStatus(state, *runner_);
  EXPECT_NE(status.find(", hosts on any CPU\n"), std::string::npos) << status;
}

TEST_F(ClusterOnThisMachine, ProvisioningUploadsToEveryHostsOwnDisk) {
  const ClusterState state = ClusterUp(Options(2), *runner_);
  std::unique_ptr<Launcher> launcher = MakeSshLauncher(state.inventory_path(), DMLBENCH_TRAINER, "");
  launcher->Prepare();
  const std::string sha256 = Sha256FileHex(DMLBENCH_TRAINER);
  for (const ClusterHost& host : state.hosts) {
    const fs::path uploaded = fs::path(state.host_dir(host)) / "home" / "dmlbench" / "dmlbench-trainer";
    ASSERT_TRUE(fs::exists(uploaded)) << "not uploaded to " << host.name;
    EXPECT_EQ(Sha256FileHex(uploaded.string()), sha256);
  }
  EXPECT_EQ(state.work_dir, std::string(getpwnam("root")->pw_dir) + "/dmlbench");
}

// The cluster's launcher provisions with the hosts' quota lifted, and puts
// their share back when it is done.
TEST_F(ClusterOnThisMachine, ProvisioningLeavesTheHostsAtTheirShare) {
  const ClusterState state = ClusterUp(Options(2), *runner_);
  MakeClusterLauncher(state.state_dir, DMLBENCH_TRAINER)->Prepare();
  for (const ClusterHost& host : state.hosts) {
    EXPECT_DOUBLE_EQ(CpuCgroupCores(state.cgroup, host.cgroup), 0.5) << host.name;
  }
}

TEST_F(ClusterOnThisMachine, AStateDirectoryHoldsOneCluster) {
  const ClusterState state = ClusterUp(Options(1), *runner_);
  const std::string inventory = ReadText(state.inventory_path());
  const std::string key = ReadText(state.identity_file());
  ClusterOptions other = Options(1);
  other.name = UniqueName('b');
  EXPECT_EQ(ClusterErrorOf([&] { ClusterUp(other, *runner_); }),
            "state directory " + state.state_dir + " belongs to cluster " + name_ + ": bring up cluster " + other.name +
                " with another --state-dir, or take " + name_ + " down first");
  EXPECT_EQ(ClusterErrorOf([&] { ClusterDown("z", state_dir_, "/sys/fs/cgroup", *runner_); }),
            "state directory " + state.state_dir + " belongs to cluster " + name_ + ", not z: to take " + name_ +
                " down, use --name " + name_ + " (or leave --name out)");
  EXPECT_EQ(ReadText(state.inventory_path()), inventory);
  EXPECT_EQ(ReadText(state.identity_file()), key);
  EXPECT_EQ(Ssh(state, 0, "true").exit_code, 0) << "cluster " << name_ << " did not survive";
  EXPECT_EQ(ClusterLeftovers(other.name, "/sys/fs/cgroup", *runner_), std::vector<std::string>{});
}

TEST_F(ClusterOnThisMachine, AFailedSshdKeepsItsLog) {
  // An sshd that complains in its log (-E) and exits, as one with a bad
  // configuration does. Not under /tmp, which the host has its own of.
  const fs::path sshd = fs::path("/var/tmp") / ("dmlb-fake-sshd-" + name_);
  std::ofstream(sshd) << "#!/bin/sh\necho \"$2: line 9: Bad configuration option: Foo\" >> \"$4\"\nexit 255\n";
  fs::permissions(sshd, fs::perms::owner_all);
  ClusterOptions options = Options(1);
  options.sshd = sshd.string();
  const std::string host = "dmlb-" + name_ + "-h1";
  const std::string kept = fs::path(state_dir_).string() + "/" + host + ".sshd.log";
  EXPECT_EQ(ClusterErrorOf([&] { ClusterUp(options, *runner_); }),
            "sshd of " + host + " did not start (exit 255); the end of its log (kept in " + kept + "):\n  " +
                kClusterRuntimeRoot + "/" + name_ + "/" + host + "/sshd_config: line 9: Bad configuration option: Foo");
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_EQ(ClusterLeftovers(name_, "/sys/fs/cgroup", *runner_), std::vector<std::string>{});
  fs::remove(sshd);
}

}  // namespace
}  // namespace dmlbench
