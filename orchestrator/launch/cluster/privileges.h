// Privileges: whether this process may make an emulated cluster, checked
// before anything is made: network namespaces need CAP_SYS_ADMIN, links and
// tc CAP_NET_ADMIN, CPU caps write access to the cgroup tree. Makes and
// changes nothing. Safe from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_PRIVILEGES_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_PRIVILEGES_H_

#include <cstdint>
#include <string>

namespace dmlbench {

// Throws ClusterError "the emulated cluster needs root: missing ..." listing
// every missing capability (CAP_NET_ADMIN, CAP_SYS_ADMIN) and cgroup write
// access, or returns when all is there.
void CheckClusterPrivileges(const std::string& cgroup_root);

// The message for the given effective capability mask (/proc/self/status
// CapEff) and cgroup access; "" when nothing is missing.
std::string PrivilegeProblem(std::uint64_t effective_caps, bool cgroup_writable,
                             const std::string& cgroup_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_PRIVILEGES_H_
