#include "orchestrator/cli/launcher_factory.h"

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
    case Provider::kCluster:
      return MakeClusterLauncher(kClusterStateDir, paths.trainer, paths.dataset_dir);
  }
  throw LaunchError("provider '" + std::string(Text(execution.provider)) + "' is not available in this build");
}

}  // namespace dmlbench
