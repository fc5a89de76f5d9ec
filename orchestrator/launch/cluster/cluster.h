// Cluster: an EC2-like cluster on this machine (DESIGN.md section 4). Each
// host is a network namespace with its own sshd, started inside the host's
// CPU cgroup, on a bridge over veth links shaped in both directions. Up
// writes the state directory: keys, known_hosts and an inventory the SSH
// provider reads unchanged (schemas/inventory.md), whose [emulated_cluster]
// table is this module's own state. Everything carries the prefix
// dmlb-<name>- so Down() also removes what a crashed run left. Not
// thread-safe: one Up/Reshape/Down at a time per cluster name.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/netns.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

inline constexpr char kClusterStateDir[] = ".dmlbench/cluster";
inline constexpr char kClusterPrefix[] = "dmlb-";

struct ClusterOptions {
  std::string name = "main";            // 1-6 of [a-z0-9]; objects are dmlb-<name>-*
  std::string state_dir = kClusterStateDir;
  int hosts = 3;                        // 1..64; one MPI slot each
  NetworkProfile network;               // shaping of every link at up (and for runs without a profile)
  double cpu_cores = 0;                 // CPU share per host in cores; 0 = uncapped
  std::string sshd = "/usr/sbin/sshd";  // absolute path (sshd re-executes itself)
  std::string cgroup_root = "/sys/fs/cgroup";
};

struct ClusterHost {
  std::string name;      // dmlb-<name>-h<i>: the namespace and the inventory name
  std::string address;   // on the cluster's /24
  std::string veth;      // bridge side of the link: dmlb-<name>-<i>
  std::string cgroup;    // dmlb-<name>-h<i> under the CPU controller
};

struct ClusterState {
  std::string name;
  std::string state_dir;        // absolute
  std::string subnet;           // "10.199.7.0/24"
  std::string bridge;           // dmlb-<name>
  std::string head_address;     // the bridge's address, where a local mpirun lives
  CgroupLayout cgroup;
  double cpu_cores = 0;
  NetworkProfile base_network;  // as given at up
  NetworkProfile network;       // the links' shaping now
  std::vector<ClusterHost> hosts;

  std::string inventory_path() const;   // <state_dir>/inventory.toml
  std::string known_hosts_path() const;
  std::string identity_file() const;    // private user key
};

// Throws ClusterError "the emulated cluster needs root: missing ..." listing
// every missing capability (CAP_NET_ADMIN, CAP_SYS_ADMIN) and cgroup write
// access, or returns when all is there.
void CheckClusterPrivileges(const std::string& cgroup_root);
// The message for the given effective capability mask (/proc/self/status
// CapEff) and cgroup access; "" when nothing is missing.
std::string PrivilegeProblem(std::uint64_t effective_caps, bool cgroup_writable,
                             const std::string& cgroup_dir);

// Validates options: ClusterError "cluster name must be 1-6 characters of
// a-z and 0-9, got \"X\"", "hosts must be between 1 and 64, got N",
// "cpu share must be between 0 and <cores> cores, got X".
void ValidateClusterOptions(const ClusterOptions& options);

// Creates the cluster, shaped and capped, with every sshd accepting
// connections. Sets the hosts up in parallel, calling `runner` from one
// thread per host. Refuses when objects of this name exist. On failure removes
// what it created and throws ClusterError.
ClusterState ClusterUp(const ClusterOptions& options, CommandRunner& runner);

// Reads <state_dir>/inventory.toml. Throws ClusterError "no emulated cluster
// in <dir> (run `dmlbench cluster up`)" when it is not there.
ClusterState LoadClusterState(const std::string& state_dir);

// Shapes every link to `network` (a profile without bandwidth and latency
// means the cluster's own, base_network) unless it is shaped so already, and
// records it in the state. Returns true when it changed anything.
bool ReshapeCluster(ClusterState& state, const NetworkProfile& network, CommandRunner& runner);

// Hosts, links and quotas as the kernel reports them now, one line each.
std::string ClusterStatus(const ClusterState& state, CommandRunner& runner);

// What of cluster `name` exists on this machine: namespaces, links, cgroups.
std::vector<std::string> ClusterLeftovers(const std::string& name, const std::string& cgroup_root,
                                          CommandRunner& runner);

// Removes every namespace (with its processes: sshd, orted, ranks), link and
// cgroup of cluster `name`, and the state files in `state_dir`. Works from
// the prefix alone, so also after a crash or without a state directory.
void ClusterDown(const std::string& name, const std::string& state_dir,
                 const std::string& cgroup_root, CommandRunner& runner);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
