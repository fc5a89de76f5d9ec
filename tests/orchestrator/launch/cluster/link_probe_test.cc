// LinkProbe of the cluster: what it refuses before starting anything (the
// parsing and fit it shares are tested in tests/orchestrator/launch/).
#include "orchestrator/launch/cluster/link_probe.h"

#include <functional>

#include <gtest/gtest.h>

#include "tests/orchestrator/support/cluster_error.h"

namespace dmlbench {
namespace {

// Error paths of link_probe.cc follow.

TEST(ClusterProbeTest, ProbeNeedsTwoHosts) {
  ClusterState state;
  state.name = "t";
  state.hosts.push_back({"dmlb-t-h1", "10.199.0.11", "dmlb-t-1", "dmlb-t-h1"});
  EXPECT_EQ(ClusterErrorOf([&] { ProbeLinks(state, LinkProbeOptions{}); }),
            "the link probe needs at least 2 hosts, cluster t has 1");
}

}  // namespace
}  // namespace dmlbench
