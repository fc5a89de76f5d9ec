#include "orchestrator/cli/launcher_factory.h"

#include <filesystem>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/cluster_launcher.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/slurm/slurm_launcher.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {
namespace {

// The emulated cluster's state directory: where its inventory lives.
std::string ClusterStateDir(const ExecutionOptions& execution) {
  const std::string state_dir = execution.inventory.empty()
                                    ? std::string(kClusterStateDir)
                                    : std::filesystem::path(execution.inventory).parent_path().string();
  return state_dir.empty() ? "." : state_dir;
}

}  // namespace

std::unique_ptr<Launcher> MakeLauncher(const ExecutionOptions& execution, const LauncherPaths& paths) {
  switch (execution.provider) {
    case Provider::kLocal: {
      LocalLauncherOptions options;
      options.trainer = paths.trainer;
      options.mpirun = paths.mpirun;
      return std::make_unique<LocalLauncher>(options);
    }
    case Provider::kSsh:
      return MakeSshLauncher(execution.inventory, paths.trainer, paths.dataset_dir);
    case Provider::kCluster:
      return MakeClusterLauncher(ClusterStateDir(execution), paths.trainer, paths.dataset_dir, paths.mpirun);
    case Provider::kSlurm: {
      SlurmLauncherOptions options;
      options.slurm = execution.slurm;
      options.trainer = paths.trainer;
      options.mpirun = paths.mpirun;
      options.largest_ranks = paths.largest_ranks;
      return std::make_unique<SlurmLauncher>(options);
    }
  }
  throw LaunchError("provider '" + std::string(Text(execution.provider)) + "' is not available in this build");
}

std::optional<HostSlots> SlotsOf(const ExecutionOptions& execution) {
  std::string inventory_path;
  switch (execution.provider) {
    case Provider::kLocal:
    case Provider::kSlurm:  // Slurm places the ranks; it refuses a run larger than its nodes
      return std::nullopt;
    case Provider::kSsh:
      inventory_path = execution.inventory;
      break;
    case Provider::kCluster: {
      ClusterState state;
      state.state_dir = ClusterStateDir(execution);
      inventory_path = state.inventory_path();
      if (!std::filesystem::exists(inventory_path)) return std::nullopt;
      break;
    }
  }
  HostSlots hosts;
  hosts.source = inventory_path;
  for (const InventoryHost& host : LoadInventory(inventory_path).hosts) hosts.slots += host.slots;
  return hosts;
}

}  // namespace dmlbench
