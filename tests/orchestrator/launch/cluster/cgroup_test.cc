// Cgroup: detection of v1/v2 and the files a CPU quota is written to, on a
// directory laid out like /sys/fs/cgroup; then, as root, a real group that
// a process joins and that is removed with it.
#include "orchestrator/launch/cluster/cgroup.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("dmlb-cgroup-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // What the kernel would show inside a new group.
  void PrepareGroup(const fs::path& dir, CgroupVersion version) {
    if (version == CgroupVersion::kV1) {
      Write(dir / "cpu.cfs_quota_us", "-1\n");
      Write(dir / "cpu.cfs_period_us", "100000\n");
    } else {
      Write(dir / "cpu.max", "max 100000\n");
    }
    Write(dir / "cgroup.procs", "");
  }

  fs::path root_;
};

TEST_F(FakeCgroupTree, DetectsV1) {
  Write(root_ / "cpu" / "cpu.cfs_quota_us", "-1\n");
  const CgroupLayout layout = DetectCgroupLayout(root_.string());
  EXPECT_EQ(layout.version, CgroupVersion::kV1);
  EXPECT_EQ(layout.cpu_root, (root_ / "cpu").string());
}

TEST_F(FakeCgroupTree, DetectsV1WithCombinedCpuController) {
  Write(root_ / "cpu,cpuacct" / "cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(DetectCgroupLayout(root_.string()).cpu_root, (root_ / "cpu,cpuacct").string());
}

TEST_F(FakeCgroupTree, PrefersV2WhenItHasTheCpuController) {
  Write(root_ / "cgroup.controllers", "cpuset cpu io memory pids\n");
  Write(root_ / "cpu" / "cpu.cfs_quota_us", "-1\n");
  const CgroupLayout layout = DetectCgroupLayout(root_.string());
  EXPECT_EQ(layout.version, CgroupVersion::kV2);
  EXPECT_EQ(layout.cpu_root, root_.string());
}

TEST_F(FakeCgroupTree, HybridV2WithoutCpuFallsBackToV1) {
  Write(root_ / "unified" / "cgroup.controllers", "hugetlb\n");
  Write(root_ / "cpu" / "cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(DetectCgroupLayout(root_.string()).version, CgroupVersion::kV1);
}

TEST_F(FakeCgroupTree, WritesV1Quota) {
  const CgroupLayout layout{CgroupVersion::kV1, (root_ / "cpu").string()};
  PrepareGroup(root_ / "cpu" / "dmlb-t-h1", CgroupVersion::kV1);
  CreateCpuCgroup(layout, "dmlb-t-h1", 0.4);
  EXPECT_EQ(Read(root_ / "cpu" / "dmlb-t-h1" / "cpu.cfs_quota_us"), "4000");
  EXPECT_EQ(Read(root_ / "cpu" / "dmlb-t-h1" / "cpu.cfs_period_us"), "10000");
  EXPECT_DOUBLE_EQ(CpuCgroupCores(layout, "dmlb-t-h1"), 0.4);
  EXPECT_EQ(CgroupProcsFile(layout, "dmlb-t-h1"), (root_ / "cpu" / "dmlb-t-h1" / "cgroup.procs").string());
  CreateCpuCgroup(layout, "dmlb-t-h1", 0);
  EXPECT_EQ(Read(root_ / "cpu" / "dmlb-t-h1" / "cpu.cfs_quota_us"), "-1");
  EXPECT_DOUBLE_EQ(CpuCgroupCores(layout, "dmlb-t-h1"), 0);
  // A share whose 10 ms quota would be under the kernel's 1 ms minimum
  // gets a longer period instead.
  CreateCpuCgroup(layout, "dmlb-t-h1", 0.05);
  EXPECT_EQ(Read(root_ / "cpu" / "dmlb-t-h1" / "cpu.cfs_quota_us"), "1000");
  EXPECT_EQ(Read(root_ / "cpu" / "dmlb-t-h1" / "cpu.cfs_period_us"), "20000");
  EXPECT_DOUBLE_EQ(CpuCgroupCores(layout, "dmlb-t-h1"), 0.05);
}

TEST_F(FakeCgroupTree, WritesV2MaxAndEnablesTheController) {
  const CgroupLayout layout{CgroupVersion::kV2, root_.string()};
  PrepareGroup(root_ / "dmlb-t-h2", CgroupVersion::kV2);
  CreateCpuCgroup(layout, "dmlb-t-h2", 1.5);
  EXPECT_EQ(Read(root_ / "cgroup.subtree_control"), "+cpu");
  EXPECT_EQ(Read(root_ / "dmlb-t-h2" / "cpu.max"), "15000 10000");
  EXPECT_DOUBLE_EQ(CpuCgroupCores(layout, "dmlb-t-h2"), 1.5);
  CreateCpuCgroup(layout, "dmlb-t-h2", 0);
  EXPECT_EQ(Read(root_ / "dmlb-t-h2" / "cpu.max"), "max 10000");
  EXPECT_DOUBLE_EQ(CpuCgroupCores(layout, "dmlb-t-h2"), 0);
}

TEST_F(FakeCgroupTree, ListsGroupsByPrefix) {
  const CgroupLayout layout{CgroupVersion::kV1, root_.string()};
  fs::create_directories(root_ / "dmlb-a-h1");
  fs::create_directories(root_ / "dmlb-a-h2");
  fs::create_directories(root_ / "dmlb-ab-h1");
  fs::create_directories(root_ / "system.slice");
  std::vector<std::string> groups = ListCpuCgroups(layout, "dmlb-a-");
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::string>{"dmlb-a-h1", "dmlb-a-h2"}));
}

// Error paths of cgroup.cc follow.

TEST_F(FakeCgroupTree, NoCpuControllerIsNamed) {
  try {
    DetectCgroupLayout(root_.string());
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "no CPU cgroup controller under " + root_.string() +
                                         ": neither cgroup v2 with the cpu controller nor cgroup v1 "
                                         "cpu.cfs_quota_us");
  }
}

TEST_F(FakeCgroupTree, MissingControllerDirectoryIsNamed) {
  const CgroupLayout layout{CgroupVersion::kV1, (root_ / "absent").string()};
  try {
    CreateCpuCgroup(layout, "dmlb-t-h1", 0.5);
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot create cgroup " + (root_ / "absent" / "dmlb-t-h1").string() +
                                         ": No such file or directory");
  }
}

TEST_F(FakeCgroupTree, UnwritableQuotaFileIsNamed) {
  const CgroupLayout layout{CgroupVersion::kV1, root_.string()};
  fs::create_directories(root_ / "dmlb-t-h1" / "cpu.cfs_period_us");  // a directory cannot be written
  try {
    CreateCpuCgroup(layout, "dmlb-t-h1", 0.5);
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write \"10000\" to " +
                                         (root_ / "dmlb-t-h1" / "cpu.cfs_period_us").string() +
                                         ": Is a directory");
  }
}

TEST_F(FakeCgroupTree, UnreadableLimitIsNamed) {
  const CgroupLayout layout{CgroupVersion::kV2, root_.string()};
  fs::create_directories(root_ / "dmlb-t-h1");
  try {
    CpuCgroupCores(layout, "dmlb-t-h1");
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read the CPU limit of cgroup " + (root_ / "dmlb-t-h1").string());
  }
}

// The real controller of this machine (root only).
TEST(CgroupOnThisMachine, ProcessJoinsTheGroupAndGoesWithIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const CgroupLayout layout = DetectCgroupLayout("/sys/fs/cgroup");
  const std::string name = "dmlb-cg" + std::to_string(getpid() % 100000) + "-h1";
  CreateCpuCgroup(layout, name, 0.3);
  EXPECT_NEAR(CpuCgroupCores(layout, name), 0.3, 1e-9);
  const std::unique_ptr<CommandRunner> runner = MakeSystemCommandRunner();
  const CommandResult result = runner->Run({"cat", "/proc/self/cgroup"}, {"", CgroupProcsFile(layout, name)});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("/" + name + "\n"), std::string::npos) << result.output;
  EXPECT_EQ(ListCpuCgroups(layout, name), std::vector<std::string>{name});
  RemoveCpuCgroup(layout, name);
  EXPECT_TRUE(ListCpuCgroups(layout, name).empty());
  RemoveCpuCgroup(layout, name);  // gone already: not an error
}

}  // namespace
}  // namespace dmlbench
