// ClusterSlurm: a Slurm whose nodes are the emulated cluster's hosts
// (`cluster up --slurm`): munged and slurmctld on this machine, one slurmd
// inside each host — its network namespace, its CPU cgroup (and CPU pin),
// and a mount namespace holding the host's own home, /tmp and /dev/shm as
// its sshd's does — so a job step's ranks get the host's quota, shaped link
// and disk. Each node is named as its host. Its files (slurm.conf, the munge
// key and socket, spool, logs) live in <runtime_dir>/slurm, a path every
// host sees; they go with the runtime directory at `cluster down`, which
// stops the daemons first (StopClusterSlurm). Not thread-safe: one start or
// stop at a time per cluster.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_SLURM_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_SLURM_H_

#include <string>
#include <vector>

#include "orchestrator/launch/cluster/cluster_state.h"
#include "orchestrator/launch/cluster/host_setup.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {

// The port every host's slurmd listens on, each in its own namespace.
inline constexpr int kClusterSlurmdPort = 6818;
// The partition that holds every host.
inline constexpr char kClusterSlurmPartition[] = "emulated";

// <runtime_dir>/slurm, and the slurm.conf in it: what SLURM_CONF must name
// for Slurm's commands (and `dmlbench run`) to reach this cluster's Slurm.
std::string ClusterSlurmDir(const std::string& runtime_dir);
std::string ClusterSlurmConf(const std::string& runtime_dir);

// The slurm.conf of `state`'s Slurm: the controller on the bridge address at
// `controller_port`, each host a node of one CPU (one rank per host, as
// provider "cluster" places them) at its address, no accounting, finished
// jobs in <dir>/log/jobcomp.txt.
std::string ClusterSlurmConfText(const ClusterState& state, int controller_port);

// Writes the configuration and a munge key, starts munged and slurmctld on
// this machine and one slurmd in each host, and waits (20 s at most) until
// every node is idle. Throws ClusterError with the end of the daemon's log
// that failed; what it started is stopped by `cluster down`
// (StopClusterSlurm and the namespaces), which up's rollback runs.
void StartClusterSlurm(const ClusterState& state, CommandRunner& runner, const InterruptCheck& interrupted);

// Stops the slurmctld and munged whose pid files are in
// ClusterSlurmDir(runtime_dir) (SIGTERM, then SIGKILL after 5 s), each only
// if its command line names that directory. The slurmds die with their
// hosts' namespaces. Nothing when the cluster has no Slurm.
void StopClusterSlurm(const std::string& runtime_dir);

// "slurmctld pid N" and "munged pid N" for each of this cluster's Slurm
// daemons on this machine that still runs.
std::vector<std::string> ClusterSlurmDaemons(const std::string& runtime_dir);

// One line for `cluster status`: "slurm: SLURM_CONF=<conf>, nodes idle: h1,h2"
// as sinfo reports them; "" when the cluster has no Slurm.
std::string ClusterSlurmStatus(const ClusterState& state, CommandRunner& runner);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_SLURM_H_
