// Cluster: an EC2-like cluster on this machine (DESIGN.md section 4). Each
// host is a network namespace with its own sshd, started inside the host's
// CPU cgroup and its own mount namespace (a home, /tmp and /dev/shm of its
// own, so it starts like a fresh machine), on a bridge over veth links shaped
// in both directions. Up writes the state directory (the inventory the SSH
// provider reads unchanged, schemas/inventory.md, whose [emulated_cluster]
// table is this module's own state, and each host's files) and the runtime
// directory /run/dmlbench/<name> (keys, known_hosts, ssh sockets: paths
// without spaces that every host sees too). A state directory holds one
// cluster. Everything carries the prefix dmlb-<name>- so Down() also removes
// what a crashed run left. Not thread-safe: one Up/Reshape/Down at a time per
// cluster name.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/netns.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

inline constexpr char kClusterStateDir[] = ".dmlbench/cluster";
inline constexpr char kClusterPrefix[] = "dmlb-";
// Holds <name>/ per cluster: what must have the same short path on this
// machine and inside every host.
inline constexpr char kClusterRuntimeRoot[] = "/run/dmlbench";

// Up stopped by its cancel flag (Ctrl-C); everything it made is removed.
class ClusterInterrupted : public ClusterError {
 public:
  using ClusterError::ClusterError;
};

struct ClusterOptions {
  std::string name = "main";            // 1-6 of [a-z0-9]; objects are dmlb-<name>-*
  std::string state_dir = kClusterStateDir;
  int hosts = 3;                        // 1..64; one MPI slot each
  NetworkProfile network;               // shaping of every link at up (and for runs without a profile)
  double cpu_cores = 0;                 // CPU share per host in cores; 0 = uncapped
  bool pin_cpus = true;                 // a host of at most one core runs on one CPU (cluster.cc HostCpu)
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
  NetworkProfile network;       // the links' shaping now
  std::vector<ClusterHost> hosts;

  std::string inventory_path() const;   // <state_dir>/inventory.toml
  std::string known_hosts_path() const; // <runtime_dir>/known_hosts
  std::string identity_file() const;    // <runtime_dir>/id_ed25519, the private user key
  std::string host_dir(const ClusterHost& host) const;  // <state_dir>/<host>: its sshd's files and home
};

// Throws ClusterError "the emulated cluster needs root: missing ..." listing
// every missing capability (CAP_NET_ADMIN, CAP_SYS_ADMIN) and cgroup write
// access, or returns when all is there.
void CheckClusterPrivileges(const std::string& cgroup_root);
// The message for the given effective capability mask (/proc/self/status
// CapEff) and cgroup access; "" when nothing is missing.
std::string PrivilegeProblem(std::uint64_t effective_caps, bool cgroup_writable,
                             const std::string& cgroup_dir);

// Throws ClusterError "cluster name must be 1-6 characters of a-z and 0-9,
// got \"X\"" unless `name` is one.
void ValidateClusterName(const std::string& name);

// Validates options: the name, "hosts must be between 1 and 64, got N",
// "cpu share must be between 0 and <cores> cores, got X".
void ValidateClusterOptions(const ClusterOptions& options);

// The name of the cluster whose state `state_dir` holds, "" when it holds
// none. Throws ClusterError when it holds an inventory that `cluster up` did
// not write.
std::string ClusterNameIn(const std::string& state_dir);

// Creates the cluster, shaped and capped, with every sshd accepting
// connections. Sets the hosts up in parallel, calling `runner` from one
// thread per host. Refuses when objects of this name exist or the state
// directory belongs to another cluster. On failure removes what it created,
// keeps the log of an sshd that failed as <state_dir>/<host>.sshd.log (its
// end is in the message), and throws ClusterError; ClusterInterrupted when
// `cancel` became true.
ClusterState ClusterUp(const ClusterOptions& options, CommandRunner& runner,
                       const std::atomic<bool>* cancel = nullptr);

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
// cgroup of cluster `name`, its runtime directory and the state files in
// `state_dir`. Works from the prefix alone, so also after a crash or without
// a state directory. Refuses (ClusterError, nothing removed) an invalid name
// and a state directory that belongs to another cluster.
void ClusterDown(const std::string& name, const std::string& state_dir,
                 const std::string& cgroup_root, CommandRunner& runner);

// Copies `local_path` into the work directory of each of `hosts` (their own
// disks) and returns its path as the hosts see it.
std::string CopyToHosts(const ClusterState& state, const std::vector<ClusterHost>& hosts,
                        const std::string& local_path);

// Lifts the CPU quota of the first `hosts` hosts while it is held; Restore()
// (or the destructor) puts the cluster's share back, which also starts every
// host's quota period afresh at one moment. Nothing when the cluster is
// uncapped. Throws ClusterError when a cgroup cannot be written (the
// destructor swallows it: the next lift restores again, and `cluster
// status` shows the quota).
class QuotaLift {
 public:
  QuotaLift(const ClusterState& state, int hosts);
  ~QuotaLift();
  QuotaLift(const QuotaLift&) = delete;
  QuotaLift& operator=(const QuotaLift&) = delete;

  void Restore();
  // When the quota was back on every host; 0 before.
  double restored_unix_s() const { return restored_unix_s_; }

 private:
  const ClusterState& state_;
  const int hosts_;
  bool lifted_ = false;
  double restored_unix_s_ = 0;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
