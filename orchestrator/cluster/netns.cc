#include "orchestrator/cluster/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

namespace dmlbench {
namespace {

class SystemCommandRunner : public CommandRunner {
 public:
  CommandResult Run(const std::vector<std::string>& argv, const CommandPlace& place) override {
    if (argv.empty()) throw ClusterError("empty command");
    // Everything the child needs is prepared before fork.
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const std::string netns_path = place.netns.empty() ? "" : "/run/netns/" + place.netns;

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      throw ClusterError(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    const pid_t pid = fork();
    if (pid < 0) {
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      throw ClusterError(std::string("cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) ExecChild(args, netns_path, place.cgroup_procs, pipe_fds[1]);

    close(pipe_fds[1]);
    CommandResult result;
    char buffer[4096];
    for (;;) {
      const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
      if (n > 0) {
        result.output.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    close(pipe_fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
  }

 private:
  [[noreturn]] static void ExecChild(const std::vector<char*>& args, const std::string& netns_path,
                                     const std::string& cgroup_procs, int out_fd) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (!cgroup_procs.empty()) {
      const int fd = open(cgroup_procs.c_str(), O_WRONLY);
      const std::string pid = std::to_string(getpid());
      if (fd < 0 || write(fd, pid.data(), pid.size()) < 0) {
        const std::string message = "cannot join cgroup " + cgroup_procs + ": " + std::strerror(errno) + "\n";
        (void)!write(STDERR_FILENO, message.data(), message.size());
        _exit(126);
      }
      close(fd);
    }
    if (!netns_path.empty()) {
      const int fd = open(netns_path.c_str(), O_RDONLY);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        const std::string message = "cannot enter " + netns_path + ": " + std::strerror(errno) + "\n";
        (void)!write(STDERR_FILENO, message.data(), message.size());
        _exit(126);
      }
      close(fd);
    }
    // Daemons started here (sshd) must not keep the caller's files open.
    close_range(3, ~0U, 0);
    execvp(args[0], args.data());
    const std::string message = std::string("cannot execute ") + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, message.data(), message.size());
    _exit(127);
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

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      line += a;
    } else {
      line += '\'';
      for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

std::string RunChecked(CommandRunner& runner, const std::vector<std::string>& argv,
                       const CommandPlace& place) {
  CommandResult result = runner.Run(argv, place);
  if (result.exit_code != 0) {
    std::string message = "`" + CommandLine(argv) + "` failed (exit " +
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
