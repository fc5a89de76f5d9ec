// SshCli: the `dmlbench inventory` commands — `check FILE` (connect,
// provision, print host facts) and `import-ec2 JSON` (inventory from
// `aws ec2 describe-instances` output). Only adds subcommands to the given
// CLI11 app; failures print one line on stderr and exit with status 1.
#ifndef DMLBENCH_ORCHESTRATOR_SSH_SSH_CLI_H_
#define DMLBENCH_ORCHESTRATOR_SSH_SSH_CLI_H_

#include <CLI/CLI.hpp>

namespace dmlbench {

void AddInventoryCommands(CLI::App& app);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_SSH_SSH_CLI_H_
