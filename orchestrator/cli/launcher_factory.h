// LauncherFactory: turns an experiment's `[execution]` provider into the
// Launcher that runs it: local (LocalLauncher), ssh (the inventory's hosts),
// cluster (the emulated cluster `dmlbench cluster up` started) or slurm (job
// steps of a Slurm allocation). It only constructs; the
// launchers own their hosts. Safe to call from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_
#define DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_

#include <memory>
#include <optional>
#include <string>

#include "orchestrator/launch/host_pool_lock.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/plan/plan.h"

namespace dmlbench {

// Where the programs and data a launcher needs are on this machine.
struct LauncherPaths {
  std::string trainer;      // dmlbench-trainer
  std::string mpirun = "mpirun";
  std::string dataset_dir;  // IDX files of `fashion-mnist` runs; "" when no run needs them
                            // (ssh and cluster copy it to every host)
  std::string db;           // the database of the sweep (slurm: the name of its jobs)
};

// Throws LaunchError for a provider this build cannot run.
std::unique_ptr<Launcher> MakeLauncher(const ExecutionOptions& execution, const LauncherPaths& paths);

// Holds the hosts `execution` runs on for one sweep (launch/host_pool_lock.h):
// one lock file per SSH host under $XDG_CACHE_HOME/dmlbench/host-locks (else
// ~/.cache/...), named by user, address and port; the emulated cluster's
// sweep.lock in its state directory; nothing for this machine (nullptr).
// `db_path` is written into the locks to name this sweep. Throws LaunchError
// when another sweep holds any of them, InventoryError for a bad inventory.
std::unique_ptr<HostPoolLock> LockHostPool(const ExecutionOptions& execution, const std::string& db_path);

// The slots of the hosts `execution` runs on, read from their inventory
// without contacting any host: the ssh inventory, or the inventory of the
// emulated cluster when one is up. nullopt for this machine (it
// oversubscribes) and for a cluster that is not up. Throws InventoryError.
std::optional<HostSlots> SlotsOf(const ExecutionOptions& execution);

// The name of the system `execution` measures on, part of every run's key
// (DESIGN.md section 5), read without contacting any host: the matrix's
// [execution] system, else the inventory's `system`, else the provider's
// default: "local/<this machine>", "ssh/<the inventory's host names>",
// "cluster/<this machine>/<the cluster's name>" ("main" when no cluster is
// up), "slurm/<this machine>/<partition>" ("default" for Slurm's). A default
// longer than kMaxSystemNameLength keeps its start and ends with a hash of
// the whole. Throws InventoryError for a bad inventory.
std::string SystemOf(const ExecutionOptions& execution);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLI_LAUNCHER_FACTORY_H_
