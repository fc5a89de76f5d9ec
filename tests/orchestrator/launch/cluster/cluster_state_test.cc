// ClusterState: the names of a cluster's objects, and its state file written
// and read back: every field, the inventory the SSH provider reads in it,
// clusters made before a field existed, and each error path. No root
// needed: nothing but files is made.
#include "orchestrator/launch/cluster/cluster_state.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "orchestrator/launch/ssh/inventory.h"
#include "tests/orchestrator/support/cluster_error.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// A state directory of its own under the system temp dir, removed at the end.
class ClusterStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dmlbench-cluster-state-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A two-host cluster "t1" as up would have made it, with every field set.
  ClusterState Made() const {
    ClusterState state;
    state.name = "t1";
    state.state_dir = dir_.string();
    state.runtime_dir = ClusterRuntimeDir("t1");
    state.host_home = "/root";
    state.work_dir = "/root/dmlbench";
    state.subnet = "10.199.7.0/24";
    state.bridge = ClusterBridgeName("t1");
    state.head_address = "10.199.7.1";
    state.cgroup = {CgroupVersion::kV2, "/sys/fs/cgroup"};
    state.cpu_cores = 0.15;
    state.pin_cpus = false;
    state.base_network = {"lan", 1e9, 0};
    state.network = {"wan", 100e6, 0.005};
    state.hosts = {ClusterHostNamed("t1", 1, "10.199.7.11"), ClusterHostNamed("t1", 2, "10.199.7.12")};
    return state;
  }

  fs::path dir_;
};

TEST(ClusterNamesTest, EveryObjectCarriesTheClustersPrefix) {
  EXPECT_EQ(ClusterPrefix("main"), "dmlb-main-");
  EXPECT_EQ(ClusterBridgeName("main"), "dmlb-main");
  EXPECT_EQ(ClusterRuntimeDir("main"), std::string(kClusterRuntimeRoot) + "/main");
  const ClusterHost host = ClusterHostNamed("main", 2, "10.199.7.12");
  EXPECT_EQ(host.name, "dmlb-main-h2");
  EXPECT_EQ(host.address, "10.199.7.12");
  EXPECT_EQ(host.veth, "dmlb-main-2");
  EXPECT_EQ(host.cgroup, "dmlb-main-h2");
  EXPECT_EQ(ControlPathPrefix("/run/dmlbench/main"), "/run/dmlbench/main/ssh-");
}

TEST_F(ClusterStateTest, EveryFieldReadsBackAsWritten) {
  const ClusterState made = Made();
  WriteClusterState(made);
  EXPECT_FALSE(fs::exists(made.inventory_path() + ".tmp"));
  const ClusterState loaded = LoadClusterState(dir_.string());
  EXPECT_EQ(loaded.name, made.name);
  EXPECT_EQ(loaded.state_dir, made.state_dir);
  EXPECT_EQ(loaded.runtime_dir, made.runtime_dir);
  EXPECT_EQ(loaded.host_home, made.host_home);
  EXPECT_EQ(loaded.work_dir, made.work_dir);
  EXPECT_EQ(loaded.subnet, made.subnet);
  EXPECT_EQ(loaded.bridge, made.bridge);
  EXPECT_EQ(loaded.head_address, made.head_address);
  EXPECT_EQ(loaded.cgroup.version, CgroupVersion::kV2);
  EXPECT_EQ(loaded.cgroup.cpu_root, made.cgroup.cpu_root);
  EXPECT_EQ(loaded.cpu_cores, made.cpu_cores);
  EXPECT_EQ(loaded.pin_cpus, made.pin_cpus);
  for (const auto& [read, written] : {std::pair{loaded.base_network, made.base_network},
                                      std::pair{loaded.network, made.network}}) {
    EXPECT_EQ(read.name, written.name);
    EXPECT_EQ(read.bandwidth_bits_per_s, written.bandwidth_bits_per_s);
    EXPECT_EQ(read.latency_s, written.latency_s);
  }
  ASSERT_EQ(loaded.hosts.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(loaded.hosts[i].name, made.hosts[i].name);
    EXPECT_EQ(loaded.hosts[i].address, made.hosts[i].address);
    EXPECT_EQ(loaded.hosts[i].veth, made.hosts[i].veth);
    EXPECT_EQ(loaded.hosts[i].cgroup, made.hosts[i].cgroup);
  }
  EXPECT_EQ(ClusterNameIn(dir_.string()), "t1");
}

// The SSH provider reads the state file unchanged: root on every host, one
// slot each, strict host keys, and MPI over the cluster's subnet only,
// through ssh connections kept open in the runtime directory.
TEST_F(ClusterStateTest, TheStateFileIsAnInventory) {
  const ClusterState made = Made();
  const Inventory inventory = ParseInventory(ClusterStateText(made), made.inventory_path());
  ASSERT_EQ(inventory.hosts.size(), 2u);
  EXPECT_EQ(inventory.hosts[1].name, "dmlb-t1-h2");
  EXPECT_EQ(inventory.hosts[1].user, "root");
  EXPECT_EQ(inventory.hosts[1].slots, 1);
  EXPECT_EQ(inventory.hosts[1].identity_file, made.identity_file());
  EXPECT_EQ(inventory.hosts[1].tags.at("cpu_cores"), "0.15");
  EXPECT_EQ(inventory.host_key_policy, HostKeyPolicy::kStrict);
  EXPECT_EQ(inventory.known_hosts, made.known_hosts_path());
  EXPECT_EQ(inventory.work_dir, "/root/dmlbench");
  const std::vector<std::string>& args = inventory.mpi_args;
  const auto subnet = std::find(args.begin(), args.end(), "btl_tcp_if_include");
  ASSERT_NE(subnet, args.end());
  EXPECT_EQ(*(subnet + 1), "10.199.7.0/24");
  ASSERT_EQ(args.back().rfind("-F none -i " + made.identity_file(), 0), 0u) << args.back();
  EXPECT_NE(args.back().find("-o ControlPath=" + made.runtime_dir + "/ssh-%C"), std::string::npos) << args.back();
}

// A socket path has at most 107 bytes: a runtime dir too long for one
// keeps no connections open.
TEST_F(ClusterStateTest, ARuntimeDirTooLongForASocketKeepsNoConnectionOpen) {
  ClusterState made = Made();
  made.runtime_dir = "/" + std::string(70, 'r');
  const Inventory inventory = ParseInventory(ClusterStateText(made), made.inventory_path());
  EXPECT_EQ(inventory.mpi_args.back().find("ControlMaster"), std::string::npos) << inventory.mpi_args.back();
}

// Clusters made before the runtime dir, hosts' own homes and pinning
// existed: keys in the state dir, this machine's files, hosts pinned.
TEST_F(ClusterStateTest, AClusterMadeBeforeLaterFieldsReadsWithTheirDefaults) {
  std::ofstream(dir_ / "inventory.toml") << "format_version = 1\nwork_dir = \"/w\"\n[[host]]\n"
                                            "name = \"dmlb-old-h1\"\naddress = \"10.199.1.11\"\n"
                                            "[emulated_cluster]\nname = \"old\"\ncpu_cores = 0.5\n";
  const ClusterState loaded = LoadClusterState(dir_.string());
  EXPECT_EQ(loaded.runtime_dir, dir_.string());
  EXPECT_EQ(loaded.host_home, "");
  EXPECT_TRUE(loaded.pin_cpus);
  EXPECT_EQ(loaded.cgroup.version, CgroupVersion::kV1);
  ASSERT_EQ(loaded.hosts.size(), 1u);
  EXPECT_EQ(loaded.hosts[0].veth, "dmlb-old-1");
}

TEST_F(ClusterStateTest, AnEmptyStateDirectoryHoldsNoCluster) { EXPECT_EQ(ClusterNameIn(dir_.string()), ""); }

// Error paths of cluster_state.cc follow.

TEST(ClusterStateErrors, NoStateIsNamed) {
  EXPECT_EQ(ClusterErrorOf([] { LoadClusterState("no/such/dir"); }),
            "no emulated cluster in no/such/dir (run `dmlbench cluster up`)");
}

TEST_F(ClusterStateTest, AnInventoryOfOtherHostsIsNoClusterState) {
  std::ofstream(dir_ / "inventory.toml") << "format_version = 1\n[[host]]\nname = \"mine\"\naddress = \"192.0.2.1\"\n";
  const std::string expected =
      (dir_ / "inventory.toml").string() + ": no [emulated_cluster] table: not written by `dmlbench cluster up`";
  EXPECT_EQ(ClusterErrorOf([&] { LoadClusterState(dir_.string()); }), expected);
  EXPECT_EQ(ClusterErrorOf([&] { ClusterNameIn(dir_.string()); }), expected);
}

TEST_F(ClusterStateTest, AStateFileThatCannotBeWrittenIsNamed) {
  ClusterState made = Made();
  made.state_dir = (dir_ / "missing").string();
  EXPECT_EQ(ClusterErrorOf([&] { WriteClusterState(made); }),
            "cannot write " + (dir_ / "missing" / "inventory.toml.tmp").string() + ": No such file or directory");
}

TEST(ClusterStateErrors, ANameOutsideAToZAndDigitsIsRefused) {
  for (const std::string name : {"", "../x", "Main", "toolong", "a b"}) {
    EXPECT_EQ(ClusterErrorOf([&] { ValidateClusterName(name); }),
              "cluster name must be 1-6 characters of a-z and 0-9, got \"" + name + "\"");
  }
  EXPECT_EQ(ClusterErrorOf([] { ValidateClusterName("a1b2c3"); }), "(no error)");
}

}  // namespace
}  // namespace dmlbench
