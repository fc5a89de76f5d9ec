// ClusterCli: the `dmlbench cluster up|status|down|probe` commands. Adds
// them to the program's CLI11 app; each runs from its CLI11 callback,
// prints its result on standard output and, on failure, one line
// "dmlbench: error: <message>" on standard error with exit status 1.
// Reads the app's `--db` option (probe). Not thread-safe (a CLI).
#ifndef DMLBENCH_ORCHESTRATOR_CLUSTER_CLUSTER_CLI_H_
#define DMLBENCH_ORCHESTRATOR_CLUSTER_CLUSTER_CLI_H_

#include <CLI/CLI.hpp>

namespace dmlbench {

// `app` must already have a "--db" option (the results database).
void AddClusterCommands(CLI::App& app);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLUSTER_CLUSTER_CLI_H_
