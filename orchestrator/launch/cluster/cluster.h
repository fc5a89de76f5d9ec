// Cluster: an EC2-like cluster on this machine (DESIGN.md section 4), and
// its life: up, reshape, status, down. Each host is a network namespace
// with its own sshd, started inside the host's CPU cgroup and its own mount
// namespace (a home, /tmp and /dev/shm of its own, so it starts like a
// fresh machine), on a bridge over veth links shaped in both directions. Up
// writes the state directory (the state file, cluster_state.h, and each
// host's files, host_setup.h) and the runtime directory /run/dmlbench/<name>
// (keys, known_hosts, ssh sockets: paths without spaces that every host sees
// too). Everything carries the prefix dmlb-<name>- so Down() also removes
// what a crashed run left. Not thread-safe: one Up/Reshape/Down at a time
// per cluster name.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_

#include <atomic>
#include <string>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/launch/cluster/cluster_state.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {

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
  bool pin_cpus = true;                 // a host of at most one core runs on one CPU (host_setup.h HostsPinned)
  std::string sshd = "/usr/sbin/sshd";  // absolute path (sshd re-executes itself)
  std::string cgroup_root = "/sys/fs/cgroup";
  bool slurm = false;                   // also a Slurm whose nodes are the hosts (cluster_slurm.h)
};

// Validates options: the name, "hosts must be between 1 and 64, got N",
// "cpu share must be between 0 and <cores> cores, got X".
void ValidateClusterOptions(const ClusterOptions& options);

// Creates the cluster, shaped and capped, with every sshd accepting
// connections, and with options.slurm its Slurm with every node idle. Sets the hosts up in parallel, calling `runner` from one
// thread per host. Refuses when objects of this name exist or the state
// directory belongs to another cluster. On failure removes what it created,
// keeps the log of an sshd that failed as <state_dir>/<host>.sshd.log (its
// end is in the message), and throws ClusterError; ClusterInterrupted when
// `cancel` became true.
ClusterState ClusterUp(const ClusterOptions& options, CommandRunner& runner,
                       const std::atomic<bool>* cancel = nullptr);

// Shapes every link to `network` (a profile without bandwidth and latency
// means the cluster's own, base_network) unless the state records it shaped
// so already, and records it in the state (and its file). The hosts are
// shaped in parallel; while they are, the record is UnknownShaping(), so a
// reshape that throws ClusterError half way is redone by the next call,
// whatever it asks for. Returns true when it changed anything.
bool ReshapeCluster(ClusterState& state, const NetworkProfile& network, CommandRunner& runner);

// Hosts, links and quotas as the kernel reports them now, one line each.
std::string ClusterStatus(const ClusterState& state, CommandRunner& runner);

// What of cluster `name` exists on this machine: namespaces, links, cgroups,
// its Slurm's daemons, its runtime directory.
std::vector<std::string> ClusterLeftovers(const std::string& name, const std::string& cgroup_root,
                                          CommandRunner& runner);

// Removes every namespace (with its processes: sshd, slurmd, orted, ranks),
// link and cgroup of cluster `name`, stops its slurmctld and munged, removes
// its runtime directory and the state files in
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
  // When putting the quota back began: every host's was written after it,
  // so a rank that waited for its quota saw it later. 0 before.
  double restored_unix_s() const { return restored_unix_s_; }

 private:
  const ClusterState& state_;
  const int hosts_;
  bool lifted_ = false;
  double restored_unix_s_ = 0;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_H_
