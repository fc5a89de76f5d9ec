// Netns: the commands the emulated cluster runs on this machine (ip, tc,
// ssh-keygen, sshd), behind the CommandRunner seam, and the named network
// namespaces they manage. Owns no state: the kernel holds the namespaces.
// ClusterError is the one exception type of orchestrator/launch/cluster/.
// Run() may be called from several threads at once (cluster up sets hosts up
// in parallel); implementations must allow it.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_NETNS_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_NETNS_H_

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"

namespace dmlbench {

// Every failure of the emulated cluster. what() is the whole one-line message.
class ClusterError : public Error {
 public:
  using Error::Error;
};

struct CommandResult {
  int exit_code = -1;       // of the program; 127 when it could not be executed
  std::string output;       // standard output and standard error, interleaved
};

// Where a command runs: this machine's namespaces unless told otherwise.
struct CommandPlace {
  std::string netns;          // "" = the caller's network namespace
  std::string cgroup_procs;   // "" = the caller's cgroup; else a cgroup.procs file to join first
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (an absolute path or a name looked up in PATH) to completion.
  virtual CommandResult Run(const std::vector<std::string>& argv,
                            const CommandPlace& place = {}) = 0;
};

// Forks and executes; enters `place` in the child before exec.
std::unique_ptr<CommandRunner> MakeSystemCommandRunner();

// Runs and throws ClusterError "`ip netns add x` failed (exit 1): <output>"
// (output trimmed to its last line) unless the exit code is 0.
std::string RunChecked(CommandRunner& runner, const std::vector<std::string>& argv,
                       const CommandPlace& place = {});

// Namespaces whose name starts with `prefix`, from `ip netns list`.
std::vector<std::string> ListNamespaces(CommandRunner& runner, const std::string& prefix);

// Pids of the processes inside namespace `name` (`ip netns pids`).
std::vector<int> NamespacePids(CommandRunner& runner, const std::string& name);

// Creates namespace `name` with its loopback up.
void AddNamespace(CommandRunner& runner, const std::string& name);

// Kills every process in the namespace (SIGKILL, waiting up to 2 s for them
// to go) and deletes it. A namespace that does not exist is not an error.
void DeleteNamespace(CommandRunner& runner, const std::string& name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_NETNS_H_
