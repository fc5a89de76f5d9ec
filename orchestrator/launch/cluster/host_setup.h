// HostSetup: one emulated host made: its network namespace, its shaped
// link to the bridge, its CPU cgroup, its files (host key, sshd_config, a
// home of its own) and its sshd, started in a mount namespace of its own so
// that the host starts like a fresh machine. Does not choose names or
// addresses (ClusterState) and does not undo what it made (`cluster down`
// does). SetUpHost may run from several threads at once for distinct hosts.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_HOST_SETUP_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_HOST_SETUP_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "orchestrator/launch/cluster/cluster_state.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {

// Called between the steps of a set-up; throws to stop it (up's Ctrl-C).
using InterruptCheck = std::function<void()>;

// The home of the user the hosts are logged into (root), as on this
// machine: each host mounts its own over it. Throws ClusterError "the hosts
// log in as root, whose home must be a directory other than /, got \"X\"".
std::string HostUserHome();

// Whether hosts run on one CPU each: those of at most one core, unless up
// was told not to pin. A quota is per cgroup, but the kernel hands it to
// each CPU's run queue in slices: a host whose ranks moved between the 2
// CPUs used both CPUs' slices within one period, and a 1-worker epoch of
// 0.15 core varied from 0.090 to 0.156 s over six runs; pinned, 0.108 to
// 0.129 s. A real host's share is of its own cores, too. Everything its
// sshd starts inherits the pin (the trainer runs with --bind-to none).
// `up --no-pin` leaves every host free to run on any CPU: with 4 hosts of
// 0.4 core on 2 CPUs, ring, mpi and p2p ran no faster so (README,
// Benchmarks).
bool HostsPinned(const ClusterState& state);
// The CPU host `index` (0-based) is pinned to: index mod the machine's CPUs;
// "" when hosts are not pinned.
std::string HostCpu(const ClusterState& state, std::size_t index);

// Where the log of a host whose sshd failed is kept once up has rolled
// back: <state_dir>/<host>.sshd.log.
std::string KeptLogPath(const std::string& state_dir, const std::string& host);

// The sshd_config of the host at `address` that sees its own directory at
// `inside`: a path without spaces, which sshd_config could not hold
// unquoted.
std::string SshdConfig(const std::string& inside, const std::string& address);

// A host's files, made afresh in state.host_dir(host): host key,
// sshd_config and a home holding only the cluster's authorized key (the
// public half of state.identity_file(), which must exist). Returns the
// host's known_hosts line. Throws ClusterError.
std::string WriteHostFiles(const ClusterState& state, const ClusterHost& host, CommandRunner& runner);

// Makes host `index` of `state` and starts `sshd` (an absolute path) in it.
// Returns its known_hosts line. When its sshd does not start, sets
// `sshd_failed` (its log is worth keeping) and throws ClusterError "sshd of
// <host> did not start (exit N)" with the end of its log; other failures
// throw ClusterError, and `interrupted` whatever it throws.
std::string SetUpHost(const ClusterState& state, std::size_t index, const std::string& sshd,
                      CommandRunner& runner, const InterruptCheck& interrupted, char& sshd_failed);

// Waits until every host's sshd accepts connections, 5 s at most. Marks in
// `sshd_failed` (one entry per host) a host whose sshd does not and throws
// ClusterError "sshd of <host> does not accept connections on <address>:22
// after 5 s" with the end of its log.
void WaitForSshd(const ClusterState& state, const InterruptCheck& interrupted, std::vector<char>& sshd_failed);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_HOST_SETUP_H_
