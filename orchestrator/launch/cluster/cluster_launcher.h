// ClusterLauncher: the Launcher (orchestrator/launch/launcher.h) for the
// emulated cluster. Its hosts are provisioned over SSH like any inventory's
// (the inventory `cluster up` wrote); a job's mpirun runs on this machine,
// the cluster's head node on the bridge (DESIGN.md section 4), and starts
// Open MPI's daemons on the hosts over ssh, so no host's CPU share pays for
// mpirun itself. Before each run every link is reshaped to the run's
// NetworkProfile when shaped otherwise. Owns the SSH launcher it provisions
// with; the cluster itself (namespaces, sshds) is `cluster up`'s. Runs one
// job at a time, since the shaping is shared by all hosts.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_

#include <memory>
#include <string>

#include "orchestrator/launch/launcher.h"

namespace dmlbench {

// state_dir: where `cluster up` wrote its state (kClusterStateDir by
// default). trainer_path, dataset_dir: as for MakeSshLauncher; mpirun: the
// local Open MPI launcher. Throws LaunchError "no emulated cluster in <dir>
// (run `dmlbench cluster up`)" when there is none.
std::unique_ptr<Launcher> MakeClusterLauncher(const std::string& state_dir, const std::string& trainer_path,
                                              const std::string& dataset_dir = "",
                                              const std::string& mpirun = "mpirun");

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_
