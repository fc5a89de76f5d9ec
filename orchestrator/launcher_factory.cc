#include "orchestrator/launcher_factory.h"

#include "orchestrator/local_launcher.h"

namespace dmlbench {

std::unique_ptr<Launcher> MakeLauncher(const ExecutionOptions& execution, const LauncherPaths& paths) {
  if (execution.provider == "local") {
    LocalLauncherOptions options;
    options.trainer = paths.trainer;
    options.mpirun = paths.mpirun;
    return std::make_unique<LocalLauncher>(options);
  }
  throw LaunchError("provider '" + execution.provider + "' is not available in this build");
}

}  // namespace dmlbench
