// ClusterLauncher: the Launcher (orchestrator/launcher.h) for the emulated
// cluster. It is the SSH launcher over the inventory `cluster up` wrote,
// plus one duty: before each run it reshapes every link to the run's
// NetworkProfile when the links are shaped otherwise. It owns the inner SSH
// launcher; the cluster itself (namespaces, sshds) is `cluster up`'s. Runs
// one job at a time, since the shaping is shared by all hosts.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_

#include <memory>
#include <string>

#include "orchestrator/launch/launcher.h"

namespace dmlbench {

// state_dir: where `cluster up` wrote its state (kClusterStateDir by
// default). trainer_path, dataset_dir: as for MakeSshLauncher. Throws
// LaunchError "no emulated cluster in <dir> (run `dmlbench cluster up`)"
// when there is none.
std::unique_ptr<Launcher> MakeClusterLauncher(const std::string& state_dir,
                                              const std::string& trainer_path,
                                              const std::string& dataset_dir = "");

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CLUSTER_LAUNCHER_H_
