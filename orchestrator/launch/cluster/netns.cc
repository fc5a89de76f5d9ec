#include "orchestrator/launch/cluster/netns.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"

namespace dmlbench {
namespace {

// Commands of the cluster are short (ip, tc, ssh-keygen, sshd daemonising);
// one that hangs this long is stopped.
constexpr double kCommandTimeoutS = 120;

class SystemCommandRunner : public CommandRunner {
 public:
  CommandResult Run(const std::vector<std::string>& argv, const CommandPlace& place) override {
    if (argv.empty()) throw ClusterError("empty command");
    ChildOptions options;
    options.merge_stderr = true;
    // Daemons started here (sshd) must not keep the caller's files open.
    options.close_other_fds = true;
    options.die_with_parent = false;
    if (!place.netns.empty()) options.netns_file = "/run/netns/" + place.netns;
    options.cgroup_procs_file = place.cgroup_procs;
    CommandOutput output = RunCommand(argv, kCommandTimeoutS, options);
    CommandResult result;
    result.output = std::move(output.out);
    result.exit_code = output.exit_code;
    if (output.exit_code == -1) {
      result.output += "timed out after " + std::to_string(static_cast<int>(kCommandTimeoutS)) + " s\n";
    }
    return result;
  }
};

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  const std::size_t newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

}  // namespace

std::unique_ptr<CommandRunner> MakeSystemCommandRunner() {
  return std::make_unique<SystemCommandRunner>();
}

std::string RunChecked(CommandRunner& runner, const std::vector<std::string>& argv,
                       const CommandPlace& place) {
  CommandResult result = runner.Run(argv, place);
  if (result.exit_code != 0) {
    std::string message = "`" + ShellJoin(argv) + "` failed (exit " +
                          std::to_string(result.exit_code) + ")";
    const std::string last = LastLine(result.output);
    if (!last.empty()) message += ": " + last;
    throw ClusterError(message);
  }
  return std::move(result.output);
}

std::vector<std::string> ListNamespaces(CommandRunner& runner, const std::string& prefix) {
  std::istringstream lines(RunChecked(runner, {"ip", "netns", "list"}));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(lines, line)) {
    // "name" or "name (id: 3)"
    const std::string name = line.substr(0, line.find(' '));
    if (!name.empty() && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

std::vector<int> NamespacePids(CommandRunner& runner, const std::string& name) {
  std::istringstream lines(RunChecked(runner, {"ip", "netns", "pids", name}));
  std::vector<int> pids;
  int pid = 0;
  while (lines >> pid) pids.push_back(pid);
  return pids;
}

void AddNamespace(CommandRunner& runner, const std::string& name) {
  RunChecked(runner, {"ip", "netns", "add", name});
  RunChecked(runner, {"ip", "-n", name, "link", "set", "lo", "up"});
}

void DeleteNamespace(CommandRunner& runner, const std::string& name) {
  const std::vector<std::string> names = ListNamespaces(runner, name);
  if (std::find(names.begin(), names.end(), name) == names.end()) return;
  // A namespace outlives its name while processes hold it: stop them first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    const std::vector<int> pids = NamespacePids(runner, name);
    if (pids.empty()) break;
    for (int pid : pids) kill(pid, SIGKILL);
    if (std::chrono::steady_clock::now() > deadline) {
      throw ClusterError("processes in namespace " + name + " survive SIGKILL (first: pid " +
                         std::to_string(pids.front()) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  RunChecked(runner, {"ip", "netns", "delete", name});
}

}  // namespace dmlbench
