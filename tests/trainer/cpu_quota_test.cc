#include "trainer/cpu_quota.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

// /proc/self/mountinfo of a cgroup v1 machine (the cpu controller on its own
// hierarchy, as Debian 12 with systemd.unified_cgroup_hierarchy=0 mounts it).
constexpr char kV1Mounts[] =
    "54 53 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "55 54 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "56 54 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "57 54 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n";

TEST(CpuCgroupDirTest, V1FindsTheHierarchyWithTheCpuController) {
  const auto dir = CpuCgroupDir("3:cpuset:/\n2:cpuacct:/\n1:cpu:/dmlb-tq-h1\n", kV1Mounts);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->path, "/sys/fs/cgroup/cpu/dmlb-tq-h1");
  EXPECT_FALSE(dir->v2);
}

TEST(CpuCgroupDirTest, V1CombinedControllersAndTheRootGroup) {
  const char* mounts =
      "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
      "31 25 0:27 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset\n";
  const auto dir = CpuCgroupDir("4:cpuset:/\n3:cpu,cpuacct:/\n", mounts);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->path, "/sys/fs/cgroup/cpu,cpuacct");
  // "cpuacct" alone is not "cpu".
  EXPECT_FALSE(CpuCgroupDir("2:cpuacct:/x\n", kV1Mounts).has_value());
}

TEST(CpuCgroupDirTest, V2UnifiedHierarchyAndAContainersSubtreeMount) {
  const char* mounts = "29 24 0:25 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
  const auto dir = CpuCgroupDir("0::/system.slice/job.service\n", mounts);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->path, "/sys/fs/cgroup/system.slice/job.service");
  EXPECT_TRUE(dir->v2);
  // A container that sees only its own subtree mounted at /sys/fs/cgroup.
  const char* subtree = "40 35 0:25 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(CpuCgroupDir("0::/kubepods/pod1/c1\n", subtree)->path, "/sys/fs/cgroup/c1");
  EXPECT_EQ(CpuCgroupDir("0::/kubepods/pod1\n", subtree)->path, "/sys/fs/cgroup");
}

TEST(CpuCgroupDirTest, HybridPrefersTheV1CpuControllerAndNothingMountedIsNone) {
  const std::string hybrid = std::string(kV1Mounts) +
                             "60 54 0:33 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  const auto dir = CpuCgroupDir("0::/user.slice\n1:cpu:/dmlb-a-h2\n", hybrid);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->path, "/sys/fs/cgroup/cpu/dmlb-a-h2");
  EXPECT_FALSE(CpuCgroupDir("1:cpu:/x\n", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n").has_value());
  EXPECT_FALSE(CpuCgroupDir("", kV1Mounts).has_value());
}

TEST(QuotaIsSetTest, V1AndV2) {
  EXPECT_TRUE(QuotaIsSet("4000\n", false));
  EXPECT_FALSE(QuotaIsSet("-1\n", false));
  EXPECT_TRUE(QuotaIsSet("15000 10000\n", true));
  EXPECT_FALSE(QuotaIsSet("max 100000\n", true));
  EXPECT_FALSE(QuotaIsSet("", true));
}

TEST(ParseCpuStatTest, V1CountsThrottledTimeInNanoseconds) {
  const auto c = ParseCpuStat(
      "nr_periods 64740\nnr_throttled 13186\nthrottled_time 34998934499\nnr_bursts 0\nburst_time 0\n");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->periods, 64740u);
  EXPECT_EQ(c->throttled_periods, 13186u);
  EXPECT_DOUBLE_EQ(c->throttled_s, 34.998934499);
}

TEST(ParseCpuStatTest, V2CountsThrottledTimeInMicroseconds) {
  const auto c = ParseCpuStat(
      "usage_usec 812345\nuser_usec 700000\nsystem_usec 112345\n"
      "nr_periods 120\nnr_throttled 7\nthrottled_usec 52500\n");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->periods, 120u);
  EXPECT_EQ(c->throttled_periods, 7u);
  EXPECT_DOUBLE_EQ(c->throttled_s, 0.0525);
}

TEST(ParseCpuStatTest, WithoutTheQuotaCountersThereIsNothing) {
  // cgroup v2 without the cpu controller enabled lists only usage.
  EXPECT_FALSE(ParseCpuStat("usage_usec 812345\nuser_usec 700000\nsystem_usec 112345\n").has_value());
  EXPECT_FALSE(ParseCpuStat("").has_value());
}

}  // namespace
}  // namespace dmlbench
