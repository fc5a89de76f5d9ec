#include "orchestrator/cli/launcher_factory.h"

#include <filesystem>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/cluster_launcher.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {

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
    case Provider::kCluster: {
      // The cluster's inventory lives in its state directory.
      const std::string state_dir = execution.inventory.empty()
                                        ? std::string(kClusterStateDir)
                                        : std::filesystem::path(execution.inventory).parent_path().string();
      return MakeClusterLauncher(state_dir.empty() ? "." : state_dir, paths.trainer, paths.dataset_dir, paths.mpirun);
    }
  }
  throw LaunchError("provider '" + std::string(Text(execution.provider)) + "' is not available in this build");
}

}  // namespace dmlbench
