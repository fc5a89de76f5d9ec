#include "orchestrator/launch/cluster/cluster_slurm.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/cgroup.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

constexpr double kIdleTimeoutS = 20;
constexpr double kStopTimeoutS = 5;
constexpr int kLogTailLines = 5;

// Runs in a host's network namespace and cgroup, in a new mount and UTS
// namespace, and becomes its slurmd: the host's own home ($1/home over the
// user's home $2), an empty /tmp and /dev/shm, the host's name as hostname
// and node name ($3). $4 -f $5 is slurmd, pinned to CPU $6 unless $6 is
// empty (HostCpu); what it says before its log opens goes to $7.
constexpr char kSlurmdStartScript[] =
    "set -e\n"
    "mount --bind \"$1/home\" \"$2\"\n"
    "mount -t tmpfs -o mode=1777,nosuid,nodev dmlbench-tmp /tmp\n"
    "mount -t tmpfs -o mode=1777,nosuid,nodev dmlbench-shm /dev/shm\n"
    "hostname \"$3\"\n"
    "if [ -n \"$6\" ]; then exec taskset -c \"$6\" \"$4\" -f \"$5\" -N \"$3\" </dev/null >>\"$7\" 2>&1; fi\n"
    "exec \"$4\" -f \"$5\" -N \"$3\" </dev/null >>\"$7\" 2>&1\n";

// Slurm's daemons live in sbin, which a user's PATH may lack.
std::string Daemon(const std::string& name) {
  const std::string found = ResolveProgram(name);
  return found.empty() ? "/usr/sbin/" + name : found;
}

// A TCP port no address of this machine has bound now (the controller's).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  const bool bound = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (fd >= 0) close(fd);
  if (!bound) throw ClusterError("no free TCP port for slurmctld");
  return ntohs(address.sin_port);
}

std::string LogTail(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(ReadTextFile(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  std::string tail;
  for (std::size_t i = lines.size() > kLogTailLines ? lines.size() - kLogTailLines : 0; i < lines.size(); ++i) {
    tail += "\n  " + lines[i];
  }
  return tail.empty() ? "" : "; the end of " + path + ":" + tail;
}

// A Slurm command of this cluster (SLURM_CONF set) on this machine.
CommandResult RunSlurmCommand(CommandRunner& runner, const std::string& runtime_dir,
                              const std::vector<std::string>& argv) {
  std::vector<std::string> words = {"env", "SLURM_CONF=" + ClusterSlurmConf(runtime_dir)};
  words.insert(words.end(), argv.begin(), argv.end());
  return runner.Run(words);
}

// Polls `ready` every 50 ms for up to `timeout_s`; asks `interrupted` between.
bool WaitFor(const std::function<bool()>& ready, double timeout_s, const InterruptCheck& interrupted) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

// The pid in `pid_file` if that process runs and its command line names
// `dir`; else 0.
pid_t DaemonPid(const std::string& pid_file, const std::string& dir) {
  pid_t pid = 0;
  std::istringstream(ReadTextFile(pid_file)) >> pid;
  if (pid <= 0 || kill(pid, 0) != 0) return 0;
  std::string command_line = ReadTextFile("/proc/" + std::to_string(pid) + "/cmdline");
  return command_line.find(dir) == std::string::npos ? 0 : pid;
}

// The node name (host name) and state of each line of `sinfo -N -h -o "%N %T"`.
std::string NodeStates(const std::string& sinfo) {
  std::istringstream lines(sinfo);
  std::string states;
  for (std::string node, state; lines >> node >> state;) {
    states += (states.empty() ? "" : ", ") + node + " " + state;
  }
  return states;
}

}  // namespace

std::string ClusterSlurmDir(const std::string& runtime_dir) { return (fs::path(runtime_dir) / "slurm").string(); }

std::string ClusterSlurmConf(const std::string& runtime_dir) {
  return (fs::path(ClusterSlurmDir(runtime_dir)) / "etc" / "slurm.conf").string();
}

std::string ClusterSlurmConfText(const ClusterState& state, int controller_port) {
  const std::string b = ClusterSlurmDir(state.runtime_dir);
  std::ostringstream conf;
  conf << "# Slurm of emulated cluster " << state.name << "; written by `dmlbench cluster up --slurm`.\n"
       << "ClusterName=dmlb-" << state.name << "\n"
       // The controller runs on this machine, which the hosts reach on the bridge.
       << "SlurmctldHost=localhost(" << state.head_address << ")\n"
       << "SlurmctldPort=" << controller_port << "\nSlurmdPort=" << kClusterSlurmdPort << "\n"
       << "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
       << "AuthInfo=socket=" << b << "/run/munge.sock\n"
       << "StateSaveLocation=" << b << "/ctld\nSlurmdSpoolDir=" << b << "/spool/%n\nTmpFS=" << b << "/tmp/%n\n"
       << "SlurmctldPidFile=" << b << "/run/slurmctld.pid\nSlurmdPidFile=" << b << "/run/slurmd-%n.pid\n"
       << "SlurmctldLogFile=" << b << "/log/slurmctld.log\nSlurmdLogFile=" << b << "/log/slurmd-%n.log\n"
       // The hosts' cgroups are the cluster's: Slurm moves no process.
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
       << "MpiDefault=pmix\nReturnToService=2\n"
       << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
       << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << b << "/log/jobcomp.txt\n"
       // One CPU per node as configured, whatever the machine has.
       << "SlurmdParameters=config_overrides\n";
  for (const ClusterHost& host : state.hosts) {
    conf << "NodeName=" << host.name << " NodeAddr=" << host.address << " CPUs=1 Feature=emulated State=UNKNOWN\n";
  }
  conf << "PartitionName=" << kClusterSlurmPartition << " Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  return conf.str();
}

void StartClusterSlurm(const ClusterState& state, CommandRunner& runner, const InterruptCheck& interrupted) {
  const std::string b = ClusterSlurmDir(state.runtime_dir);
  std::error_code error;
  for (const char* sub : {"etc", "munge", "run", "log", "ctld"}) fs::create_directories(fs::path(b) / sub, error);
  for (const ClusterHost& host : state.hosts) {
    fs::create_directories(fs::path(b) / "spool" / host.name, error);
    fs::create_directories(fs::path(b) / "tmp" / host.name, error);
  }
  if (error) throw ClusterError("cannot create " + b + ": " + error.message());
  // munged refuses a socket in a directory others cannot search, and a key
  // others can read: the runtime directory becomes searchable (not
  // listable); the cluster's private key in it stays its owner's alone.
  chmod(state.runtime_dir.c_str(), 0711);
  chmod(b.c_str(), 0755);
  chmod((b + "/run").c_str(), 0755);
  chmod((b + "/munge").c_str(), 0700);
  WriteClusterFile(ClusterSlurmConf(state.runtime_dir), ClusterSlurmConfText(state, FreePort()));
  const std::string conf = ClusterSlurmConf(state.runtime_dir);

  RunChecked(runner, {Daemon("mungekey"), "-c", "-k", b + "/munge/munge.key"});
  RunChecked(runner, {Daemon("munged"), "-S", b + "/run/munge.sock", "--key-file=" + b + "/munge/munge.key",
                      "--log-file=" + b + "/log/munged.log", "--pid-file=" + b + "/run/munged.pid",
                      "--seed-file=" + b + "/munge/munged.seed"});
  interrupted();
  const CommandResult controller = runner.Run(
      {"/bin/sh", "-c", "exec \"$0\" -i -f \"$1\" </dev/null >>\"$2\" 2>&1", Daemon("slurmctld"), conf,
       b + "/log/slurmctld.start.log"});
  const auto answers = [&] { return RunSlurmCommand(runner, state.runtime_dir, {"scontrol", "ping"}).exit_code == 0; };
  if (controller.exit_code != 0 || !WaitFor(answers, kIdleTimeoutS, interrupted)) {
    throw ClusterError("slurmctld of cluster " + state.name + " does not answer" + LogTail(b + "/log/slurmctld.log") +
                       LogTail(b + "/log/slurmctld.start.log"));
  }
  for (std::size_t i = 0; i < state.hosts.size(); ++i) {
    const ClusterHost& host = state.hosts[i];
    interrupted();
    const CommandResult started =
        runner.Run({"unshare", "--mount", "--uts", "--propagation", "private", "--", "/bin/sh", "-c",
                    kSlurmdStartScript, "dmlbench-slurmd", state.host_dir(host), state.host_home, host.name,
                    Daemon("slurmd"), conf, HostCpu(state, i), b + "/log/slurmd-" + host.name + ".start.log"},
                   {host.name, CgroupProcsFile(state.cgroup, host.cgroup)});
    if (started.exit_code != 0) {
      throw ClusterError("slurmd of " + host.name + " did not start (exit " + std::to_string(started.exit_code) +
                         ")" + LogTail(b + "/log/slurmd-" + host.name + ".start.log") + started.output);
    }
  }
  for (const ClusterHost& host : state.hosts) {
    const auto idle = [&] {
      return RunSlurmCommand(runner, state.runtime_dir, {"sinfo", "-h", "-n", host.name, "-o", "%T"}).output == "idle\n";
    };
    if (!WaitFor(idle, kIdleTimeoutS, interrupted)) {
      throw ClusterError("slurm node " + host.name + " does not become idle" +
                         LogTail(b + "/log/slurmd-" + host.name + ".log") + LogTail(b + "/log/slurmctld.log"));
    }
  }
}

void StopClusterSlurm(const std::string& runtime_dir) {
  const std::string b = ClusterSlurmDir(runtime_dir);
  // The controller before munged, which it needs to shut down cleanly.
  for (const char* daemon : {"slurmctld", "munged"}) {
    const std::string pid_file = b + "/run/" + daemon + ".pid";
    const pid_t pid = DaemonPid(pid_file, b);
    if (pid == 0) continue;
    kill(pid, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopTimeoutS);
    while (kill(pid, 0) == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (kill(pid, 0) == 0) kill(pid, SIGKILL);
    for (int i = 0; i < 100 && kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<std::string> ClusterSlurmDaemons(const std::string& runtime_dir) {
  const std::string b = ClusterSlurmDir(runtime_dir);
  std::vector<std::string> running;
  for (const char* daemon : {"slurmctld", "munged"}) {
    const pid_t pid = DaemonPid(b + "/run/" + daemon + ".pid", b);
    if (pid != 0) running.push_back(std::string(daemon) + " pid " + std::to_string(pid));
  }
  return running;
}

std::string ClusterSlurmStatus(const ClusterState& state, CommandRunner& runner) {
  const std::string conf = ClusterSlurmConf(state.runtime_dir);
  std::error_code error;
  if (!fs::exists(conf, error)) return "";
  const CommandResult nodes =
      RunSlurmCommand(runner, state.runtime_dir, {"sinfo", "-N", "-h", "-o", "%N %T"});
  return "slurm SLURM_CONF=" + conf + ", partition " + kClusterSlurmPartition + ": " +
         (nodes.exit_code == 0 ? NodeStates(nodes.output) : "the controller does not answer") + "\n";
}

}  // namespace dmlbench
