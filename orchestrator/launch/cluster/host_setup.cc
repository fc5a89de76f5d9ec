#include "orchestrator/launch/cluster/host_setup.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <thread>

#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/links.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

constexpr double kSshdStartTimeoutS = 5;
constexpr int kLogTailLines = 5;             // of a failed sshd's log, in the error

// Runs in a host's new mount namespace (private propagation: nothing goes
// back to this machine) and becomes its sshd. $1 is the host's directory in
// the state dir, which appears at $2, a path without spaces in the runtime
// dir; its home/ is mounted over the hosts' user's home $3; /tmp and /dev/shm
// start empty. A bind mount holds the directory itself, not its path, so
// the state dir may lie under /tmp or the home. $4 -f $5 -E $6 is sshd,
// pinned to CPU $7 unless $7 is empty (HostCpu).
constexpr char kHostStartScript[] =
    "set -e\n"
    "mount --bind \"$1\" \"$2\"\n"
    "mount --bind \"$1/home\" \"$3\"\n"
    "mount -t tmpfs -o mode=1777,nosuid,nodev dmlbench-tmp /tmp\n"
    "mount -t tmpfs -o mode=1777,nosuid,nodev dmlbench-shm /dev/shm\n"
    "if [ -n \"$7\" ]; then exec taskset -c \"$7\" \"$4\" -f \"$5\" -E \"$6\"; fi\n"
    "exec \"$4\" -f \"$5\" -E \"$6\"\n";

// A host's directory as the host itself sees it (kHostStartScript's $2).
std::string InsideHostDir(const ClusterState& state, const ClusterHost& host) {
  return (fs::path(state.runtime_dir) / host.name).string();
}

bool PortOpen(const std::string& address, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &peer.sin_addr);
  const bool open = connect(fd, reinterpret_cast<const sockaddr*>(&peer), sizeof peer) == 0;
  close(fd);
  return open;
}

// The last `count` non-empty lines of `text`, each on a line of its own
// and indented: how an sshd's log ends.
std::string IndentedTail(const std::string& text, int count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  std::string tail;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0; i < lines.size();
       ++i) {
    tail += "\n  " + lines[i];
  }
  return tail;
}

// "sshd of <host> <what>", with the end of its log (kept on rollback), or
// of `output` when the log is empty.
std::string SshdProblem(const ClusterState& state, const ClusterHost& host, const std::string& what,
                        const std::string& output) {
  const std::string log = ReadTextFile((fs::path(state.host_dir(host)) / "sshd.log").string());
  std::string message = "sshd of " + host.name + " " + what;
  if (!log.empty()) {
    message += "; the end of its log (kept in " + KeptLogPath(state.state_dir, host.name) + "):" +
               IndentedTail(log, kLogTailLines);
  } else if (!IndentedTail(output, 1).empty()) {
    message += ":" + IndentedTail(output, kLogTailLines);
  }
  return message;
}

}  // namespace

std::string HostUserHome() {
  const passwd* root = getpwnam("root");
  const std::string home = root != nullptr && root->pw_dir != nullptr ? root->pw_dir : "";
  std::error_code error;
  if (home.empty() || home.front() != '/' || home == "/" || !fs::is_directory(home, error)) {
    throw ClusterError("the hosts log in as root, whose home must be a directory other than /, got \"" + home +
                       "\"");
  }
  return home;
}

bool HostsPinned(const ClusterState& state) {
  return state.pin_cpus && state.cpu_cores > 0 && state.cpu_cores <= 1;
}

std::string HostCpu(const ClusterState& state, std::size_t index) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return HostsPinned(state) ? std::to_string(index % cpus) : "";
}

std::string KeptLogPath(const std::string& state_dir, const std::string& host) {
  return (fs::path(state_dir) / (host + ".sshd.log")).string();
}

std::string SshdConfig(const std::string& inside, const std::string& address) {
  const fs::path dir(inside);
  return "# sshd of one emulated host; written by `dmlbench cluster up`.\n"
         "ListenAddress " + address + "\n"
         "Port 22\n"
         "HostKey " + (dir / "ssh_host_ed25519_key").string() + "\n"
         "AuthorizedKeysFile .ssh/authorized_keys\n"
         "PidFile " + (dir / "sshd.pid").string() + "\n"
         "PermitRootLogin prohibit-password\n"
         "PasswordAuthentication no\n"
         "KbdInteractiveAuthentication no\n"
         "UsePAM no\n"
         "StrictModes no\n"
         "UseDNS no\n"
         "MaxStartups 100\n"
         "MaxSessions 100\n"
         "Subsystem sftp internal-sftp\n";
}

std::string WriteHostFiles(const ClusterState& state, const ClusterHost& host, CommandRunner& runner) {
  const fs::path dir = state.host_dir(host);
  std::error_code error;
  fs::remove_all(dir, error);
  fs::remove(KeptLogPath(state.state_dir, host.name), error);
  fs::create_directories(dir / "home" / ".ssh", error);
  if (error) throw ClusterError("cannot create " + (dir / "home").string() + ": " + error.message());
  fs::permissions(dir / "home", fs::perms::owner_all, error);
  fs::permissions(dir / "home" / ".ssh", fs::perms::owner_all, error);
  const fs::path host_key = dir / "ssh_host_ed25519_key";
  RunChecked(runner, {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", host.name, "-f", host_key.string()});
  WriteClusterFile(dir / "sshd_config", SshdConfig(InsideHostDir(state, host), host.address));
  WriteClusterFile(dir / "home" / ".ssh" / "authorized_keys", ReadTextFile(state.identity_file() + ".pub"));
  std::istringstream public_key(ReadTextFile(host_key.string() + ".pub"));
  std::string type, key;
  public_key >> type >> key;
  return host.address + " " + type + " " + key + "\n";
}

std::string SetUpHost(const ClusterState& state, std::size_t index, const std::string& sshd,
                      CommandRunner& runner, const InterruptCheck& interrupted, char& sshd_failed) {
  const ClusterHost& host = state.hosts[index];
  interrupted();
  AddNamespace(runner, host.name);
  interrupted();
  AddHostLink(runner, state.bridge, host.veth, host.name, host.address);
  PinCongestionControl(runner, host.name, state.subnet, host.address);
  interrupted();
  ShapeHostLink(runner, host.veth, host.name, state.network);
  CreateCpuCgroup(state.cgroup, host.cgroup, state.cpu_cores);
  interrupted();
  const std::string known_host = WriteHostFiles(state, host, runner);
  const std::string inside = InsideHostDir(state, host);
  std::error_code error;
  fs::create_directories(inside, error);  // on this machine, only what the host's mount covers
  if (error) throw ClusterError("cannot create " + inside + ": " + error.message());
  interrupted();
  // Started in the host's namespace and cgroup: Open MPI's daemon and the
  // ranks it starts through this sshd inherit both, and its mounts.
  const CommandResult started =
      runner.Run({"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", kHostStartScript,
                  "dmlbench-host", state.host_dir(host), inside, state.host_home, sshd, inside + "/sshd_config",
                  inside + "/sshd.log", HostCpu(state, index)},
                 {host.name, CgroupProcsFile(state.cgroup, host.cgroup)});
  if (started.exit_code != 0) {
    sshd_failed = 1;
    throw ClusterError(
        SshdProblem(state, host, "did not start (exit " + std::to_string(started.exit_code) + ")", started.output));
  }
  return known_host;
}

void WaitForSshd(const ClusterState& state, const InterruptCheck& interrupted, std::vector<char>& sshd_failed) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int>(kSshdStartTimeoutS * 1000));
  for (std::size_t i = 0; i < state.hosts.size(); ++i) {
    const ClusterHost& host = state.hosts[i];
    while (!PortOpen(host.address, 22)) {
      interrupted();
      if (std::chrono::steady_clock::now() > deadline) {
        sshd_failed[i] = 1;
        throw ClusterError(SshdProblem(state, host,
                                       "does not accept connections on " + host.address + ":22 after " +
                                           std::to_string(static_cast<int>(kSshdStartTimeoutS)) + " s",
                                       ""));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace dmlbench
