// SSH launcher: the Launcher (orchestrator/launch/launcher.h) over an
// inventory's host pool. Prepare() provisions every host in parallel; Launch()
// takes free hosts with enough slots and runs `mpirun` on the first over SSH;
// each rank's output, written on its own host, is fetched over SFTP into the
// spec's output directory afterwards. It does not touch the database.
// Thread-safe: Launch() may run concurrently on disjoint hosts.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LAUNCHER_H_

#include <memory>
#include <string>

#include "orchestrator/launch/launcher.h"

namespace dmlbench {

// inventory_path: the inventory TOML (errors: InventoryError, at construction).
// trainer_path: the local dmlbench-trainer binary uploaded to every host.
// dataset_dir: local directory whose regular files (the IDX files) are
//   uploaded to every host; "" = none (runs use --synthetic). A run whose
//   LaunchSpec::dataset_dir is non-empty gets `--dataset <remote copy>`.
// Throws InventoryError for a bad inventory, Sha256Error for an unreadable
// trainer or dataset file. Prepare() throws LaunchError with the message of
// the SshError or ProvisionError behind it (it names the host and the cause).
// A host that fails during Launch() is marked down and the LaunchResult has
// host_failure set, so a retry runs on the remaining hosts.
std::unique_ptr<Launcher> MakeSshLauncher(const std::string& inventory_path,
                                          const std::string& trainer_path,
                                          const std::string& dataset_dir = "");

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LAUNCHER_H_
