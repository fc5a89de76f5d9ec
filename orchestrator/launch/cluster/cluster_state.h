// ClusterState: what `cluster up` made, under which names, and the state
// file that records it. The state file is the inventory the SSH provider
// reads unchanged (schemas/inventory.md), whose [emulated_cluster] table is
// this module's own; a state directory holds one cluster. Every object of
// cluster <name> carries the prefix dmlb-<name>-, and this module derives
// each name from the cluster's. Makes nothing on the machine but the state
// file. Pure functions and a value type; safe from any thread for distinct
// state directories.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_STATE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_STATE_H_

#include <string>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {

inline constexpr char kClusterStateDir[] = ".dmlbench/cluster";
inline constexpr char kClusterPrefix[] = "dmlb-";
// Holds <name>/ per cluster: what must have the same short path on this
// machine and inside every host.
inline constexpr char kClusterRuntimeRoot[] = "/run/dmlbench";

struct ClusterHost {
  std::string name;      // dmlb-<name>-h<i>: the namespace and the inventory name
  std::string address;   // on the cluster's /24
  std::string veth;      // bridge side of the link: dmlb-<name>-<i>
  std::string cgroup;    // dmlb-<name>-h<i> under the CPU controller
};

struct ClusterState {
  std::string name;
  std::string state_dir;        // absolute
  std::string runtime_dir;      // /run/dmlbench/<name> (the state dir for clusters made before it existed)
  std::string host_home;        // each host's own home as the hosts see it ("/root"); "" before it existed
  std::string work_dir;         // the inventory's work_dir, the same path on every host
  std::string subnet;           // "10.199.7.0/24"
  std::string bridge;           // dmlb-<name>
  std::string head_address;     // the bridge's address, where a local mpirun lives
  CgroupLayout cgroup;
  double cpu_cores = 0;
  bool pin_cpus = true;         // as given at up (true for clusters made before it existed)
  NetworkProfile base_network;  // as given at up
  NetworkProfile network;       // the links' shaping now; UnknownShaping() while it changes
  std::vector<ClusterHost> hosts;

  std::string inventory_path() const;   // <state_dir>/inventory.toml
  std::string known_hosts_path() const; // <runtime_dir>/known_hosts
  std::string identity_file() const;    // <runtime_dir>/id_ed25519, the private user key
  std::string host_dir(const ClusterHost& host) const;  // <state_dir>/<host>: its sshd's files and home
};

// What the state records while the links are being reshaped: a profile
// named "unknown" that no run's profile shapes alike, so that a reshape
// that failed or was killed half way is done again by the next one, whatever
// it asks for.
NetworkProfile UnknownShaping();

// Throws ClusterError "cluster name must be 1-6 characters of a-z and 0-9,
// got \"X\"" unless `name` is one.
void ValidateClusterName(const std::string& name);

// The names of cluster `name`'s objects: "dmlb-<name>-" begins every one
// but the bridge "dmlb-<name>"; host i (1-based) is namespace and cgroup
// "dmlb-<name>-h<i>" on link "dmlb-<name>-<i>".
std::string ClusterPrefix(const std::string& name);
std::string ClusterBridgeName(const std::string& name);
ClusterHost ClusterHostNamed(const std::string& name, int i, const std::string& address);
// <kClusterRuntimeRoot>/<name>.
std::string ClusterRuntimeDir(const std::string& name);
// Where the ssh connections mpirun keeps open live: <dir>/ssh-<hash>.
std::string ControlPathPrefix(const std::string& dir);

// A CPU share as the state file and `cluster status` write it: "0.15".
std::string CoresText(double cores);

// The state file's text: the inventory with `state` in [emulated_cluster].
std::string ClusterStateText(const ClusterState& state);

// Writes a file of the cluster's (the state file, known_hosts, a host's
// files) whole, by rename: a reader never sees a part. Throws ClusterError
// "cannot write <file>: <why>".
void WriteClusterFile(const std::string& path, const std::string& text);

// Writes state.inventory_path() (WriteClusterFile).
void WriteClusterState(const ClusterState& state);

// Reads <state_dir>/inventory.toml. Throws ClusterError "no emulated cluster
// in <dir> (run `dmlbench cluster up`)" when it is not there, and
// "<file>: no [emulated_cluster] table: not written by `dmlbench cluster
// up`" for an inventory of other hosts.
ClusterState LoadClusterState(const std::string& state_dir);

// The name of the cluster whose state `state_dir` holds, "" when it holds
// none. Throws ClusterError when it holds an inventory that `cluster up` did
// not write.
std::string ClusterNameIn(const std::string& state_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_STATE_H_
