// `dmlbench cluster` as users run it: names that are not cluster names and
// --name that differs from the cluster a state directory holds are refused
// before anything is touched; as root, Ctrl-C (SIGINT) or SIGTERM during
// `up` rolls it back and ends with 130 or 143.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/cluster/cluster.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// The build tree holds trainer/dmlbench-trainer and orchestrator/dmlbench.
std::string DmlbenchProgram() {
  return (fs::path(DMLBENCH_TRAINER).parent_path().parent_path() / "orchestrator" / "dmlbench").string();
}

CommandOutput Dmlbench(std::vector<std::string> args) {
  args.insert(args.begin(), DmlbenchProgram());
  return RunCommand(args, 120);
}

// A name of this process: tag + pid in base 36, at most 6 characters.
std::string UniqueName(char tag) {
  std::string name;
  for (unsigned pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36]);
  }
  return std::string(1, tag) + name.substr(0, 5);
}

class ClusterCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("dmlb-cluster-command-" + std::to_string(getpid()));
    fs::remove_all(work_);
    state_ = work_ / "state";
  }
  void TearDown() override { fs::remove_all(work_); }

  // The state `cluster up` of cluster `name` leaves.
  void WriteState(const std::string& name) {
    fs::create_directories(state_);
    std::ofstream(state_ / "inventory.toml") << "format_version = 1\n[[host]]\nname = \"dmlb-" << name
                                              << "-h1\"\naddress = \"10.199.1.11\"\n[emulated_cluster]\nname = \""
                                              << name << "\"\n";
  }

  fs::path work_;
  fs::path state_;
};

TEST_F(ClusterCommand, DownRefusesANameThatIsNotAClusterName) {
  for (const std::string name : {"../x", "Main", "a b", "toolong"}) {
    const CommandOutput down = Dmlbench({"cluster", "--name", name, "--state-dir", state_.string(), "down"});
    EXPECT_EQ(down.exit_code, 1) << name;
    EXPECT_EQ(down.err, "dmlbench: error: cluster name must be 1-6 characters of a-z and 0-9, got \"" + name + "\"\n");
  }
}

TEST_F(ClusterCommand, StatusAndDownRefuseANameTheStateDirectoryDoesNotHold) {
  WriteState("a");
  const CommandOutput status = Dmlbench({"cluster", "--name", "z", "--state-dir", state_.string(), "status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_EQ(status.err, "dmlbench: error: state directory " + state_.string() +
                            " holds cluster a, not z: use --name a (or leave --name out)\n");
  if (geteuid() != 0) return;  // down checks for root first
  const CommandOutput down = Dmlbench({"cluster", "--name", "z", "--state-dir", state_.string(), "down"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_EQ(down.err, "dmlbench: error: state directory " + state_.string() +
                          " belongs to cluster a, not z: to take a down, use --name a (or leave --name out)\n");
  EXPECT_TRUE(fs::exists(state_ / "inventory.toml"));
}

TEST_F(ClusterCommand, InterruptedUpRollsBackAndExitsWith128PlusTheSignal) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  for (const auto& [signal, status] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    const std::string name = UniqueName(signal == SIGINT ? 'i' : 't');
    const auto runner = MakeSystemCommandRunner();
    Child child;
    std::string error;
    ASSERT_TRUE(child.Start({DmlbenchProgram(), "cluster", "--name", name, "--state-dir", state_.string(), "up",
                             "--hosts", "4"},
                            {}, &error))
        << error;
    // Once the first host exists, as a user would press Ctrl-C: the signal
    // goes to dmlbench's process group.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ListNamespaces(*runner, "dmlb-" + name + "-").empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    child.SignalGroup(signal);
    std::string out, err;
    Pump(
        child, [&](std::string_view line) { (out += line) += "\n"; }, [&](std::string_view chunk) { err += chunk; },
        [] { return false; }, 5);
    EXPECT_EQ(ExitCode(child.status()), status) << out << err;
    EXPECT_EQ(err, "dmlbench: cluster up interrupted; everything it had made is removed\n") << out;
    EXPECT_EQ(ClusterLeftovers(name, "/sys/fs/cgroup", *runner), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(state_));
    ClusterDown(name, state_.string(), "/sys/fs/cgroup", *runner);  // whatever a failure left
  }
}

}  // namespace
}  // namespace dmlbench
