// LauncherFactory: turns an experiment's `[execution]` provider into the
// Launcher that runs it: local (LocalLauncher), ssh (the inventory's hosts)
// or cluster (the emulated cluster `dmlbench cluster up` started). It only constructs; the
// launchers own their hosts. Safe to call from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_
#define DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_

#include <memory>
#include <string>

#include "orchestrator/launch/launcher.h"
#include "orchestrator/matrix/matrix.h"

namespace dmlbench {

// Where the programs and data a launcher needs are on this machine.
struct LauncherPaths {
  std::string trainer;      // dmlbench-trainer
  std::string mpirun = "mpirun";
  std::string dataset_dir;  // IDX files of `fashion-mnist` runs; "" when no run needs them
                            // (ssh and cluster copy it to every host)
};

// Throws LaunchError for a provider this build cannot run.
std::unique_ptr<Launcher> MakeLauncher(const ExecutionOptions& execution, const LauncherPaths& paths);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_
