// Privileges: the message that names what is missing, from a capability
// mask and cgroup access, and the check on this process. No root needed.
#include "orchestrator/launch/cluster/privileges.h"

#include <functional>

#include <gtest/gtest.h>

#include "orchestrator/launch/cluster/netns.h"
#include "tests/orchestrator/support/cluster_error.h"

namespace dmlbench {
namespace {

TEST(PrivilegesTest, PrivilegeProblemNamesEverythingMissing) {
  EXPECT_EQ(PrivilegeProblem(0, false, "/sys/fs/cgroup/cpu"),
            "the emulated cluster needs root: missing CAP_NET_ADMIN (links, tc), CAP_SYS_ADMIN (network "
            "namespaces) and write access to /sys/fs/cgroup/cpu (CPU cgroups)");
  EXPECT_EQ(PrivilegeProblem(1ull << 21, true, "/sys/fs/cgroup"),
            "the emulated cluster needs root: missing CAP_NET_ADMIN (links, tc)");
  EXPECT_EQ(PrivilegeProblem((1ull << 12) | (1ull << 21), false, "/sys/fs/cgroup"),
            "the emulated cluster needs root: missing write access to /sys/fs/cgroup (CPU cgroups)");
  EXPECT_EQ(PrivilegeProblem((1ull << 12) | (1ull << 21), true, "/sys/fs/cgroup"), "");
}

// Error paths of privileges.cc follow.

// Without a CPU controller under the root, the root itself is named: as
// root the message names only it, as another user the capabilities too.
TEST(PrivilegesTest, ACgroupRootWithoutACpuControllerIsNamed) {
  const std::string message = ClusterErrorOf([] { CheckClusterPrivileges("/nonexistent/cgroup"); });
  EXPECT_EQ(message.rfind("the emulated cluster needs root: missing ", 0), 0u) << message;
  const std::string end = "write access to /nonexistent/cgroup (CPU cgroups)";
  ASSERT_GE(message.size(), end.size()) << message;
  EXPECT_EQ(message.substr(message.size() - end.size()), end);
}

}  // namespace
}  // namespace dmlbench
