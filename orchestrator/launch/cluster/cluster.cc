#include "orchestrator/launch/cluster/cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/cluster_slurm.h"
#include "orchestrator/launch/cluster/host_setup.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/cluster/privileges.h"
#include "orchestrator/launch/cluster/subnet_lock.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxHosts = 64;
constexpr double kUsableCoreFraction = 0.9;
constexpr int kFirstHostOctet = 10;          // host i (1-based) is .10+i

// How long `up` waits for another `up` choosing its subnet: that takes
// well under a second (a bridge and its address).
constexpr double kSubnetLockWaitS = 60;

bool SameShaping(const NetworkProfile& a, const NetworkProfile& b) {
  return a.bandwidth_bits_per_s == b.bandwidth_bits_per_s && a.latency_s == b.latency_s;
}

// Shapes every host's link from `now` to `profile`, the hosts in parallel
// (each tc mostly waits on its process's start and the kernel's lock);
// throws the first host's failure once every host is done.
void ShapeHostLinks(const ClusterState& state, const NetworkProfile& profile, const NetworkProfile& now,
                    CommandRunner& runner) {
  std::vector<std::exception_ptr> errors(state.hosts.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < state.hosts.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        ShapeHostLink(runner, state.hosts[i].veth, state.hosts[i].name, profile, now);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& failure : errors) {
    if (failure) std::rethrow_exception(failure);
  }
}

// "qdisc netem 1: root ... delay 100us ... qdisc tbf 10: parent 1:1 rate 1Gbit ..."
// -> "rate 1Gbit delay 100us"; "unshaped" without either.
std::string ShapingSummary(const std::string& tc_output) {
  std::istringstream words(tc_output);
  std::string word, rate, delay;
  while (words >> word) {
    if (word == "rate" && rate.empty()) words >> rate;
    if (word == "delay" && delay.empty()) words >> delay;
  }
  std::string summary;
  if (!rate.empty()) summary += "rate " + rate;
  if (!delay.empty()) summary += std::string(summary.empty() ? "" : " ") + "delay " + delay;
  return summary.empty() ? "unshaped" : summary;
}

std::string Pad(std::string text, std::size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text + " ";
}

// Whether `link` is one of cluster `name`'s: its bridge or a host's veth.
bool IsClusterLink(const std::string& name, const std::string& link) {
  return link == ClusterBridgeName(name) || link.rfind(ClusterPrefix(name), 0) == 0;
}

void ThrowIfCancelled(const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load()) {
    throw ClusterInterrupted("cluster up interrupted; everything it had made is removed");
  }
}

// Refuses an up whose state directory belongs to another cluster, without
// privileges, or whose objects exist already. Returns the state directory,
// absolute.
std::string CheckUpAllowed(const ClusterOptions& options, CommandRunner& runner) {
  ValidateClusterOptions(options);
  const std::string state_dir = fs::absolute(options.state_dir).lexically_normal().string();
  const std::string owner = ClusterNameIn(state_dir);
  if (!owner.empty() && owner != options.name) {
    throw ClusterError("state directory " + state_dir + " belongs to cluster " + owner +
                       ": bring up cluster " + options.name + " with another --state-dir, or take " + owner +
                       " down first");
  }
  CheckClusterPrivileges(options.cgroup_root);
  const std::vector<std::string> existing = ClusterLeftovers(options.name, options.cgroup_root, runner);
  if (!existing.empty()) {
    throw ClusterError("cluster " + options.name + " already exists (" + existing.front() +
                       "): run `dmlbench cluster down` first");
  }
  return state_dir;
}

// The state up is to make, before its subnet and hosts are chosen.
ClusterState PlannedState(const ClusterOptions& options, const std::string& state_dir) {
  ClusterState state;
  state.name = options.name;
  state.state_dir = state_dir;
  state.runtime_dir = ClusterRuntimeDir(options.name);
  state.host_home = HostUserHome();
  state.work_dir = (fs::path(state.host_home) / "dmlbench").string();
  state.bridge = ClusterBridgeName(options.name);
  state.cgroup = DetectCgroupLayout(options.cgroup_root);
  state.cpu_cores = options.cpu_cores;
  state.pin_cpus = options.pin_cpus;
  state.base_network = options.network;
  state.network = options.network;
  return state;
}

// Undoes a half-made up unless dismissed: removes everything of the
// cluster (ClusterDown) except the logs of hosts whose sshd failed, which
// stay as <state_dir>/<host>.sshd.log. Borrows the options, the state and
// the runner, which must outlive it. The destructor never throws.
class UpRollback {
 public:
  UpRollback(const ClusterOptions& options, const ClusterState& state, CommandRunner& runner)
      : options_(options), state_(state), runner_(runner),
        sshd_failed_(static_cast<std::size_t>(options.hosts), 0) {}
  ~UpRollback() {
    if (!dismissed_) RollBack();
  }
  UpRollback(const UpRollback&) = delete;
  UpRollback& operator=(const UpRollback&) = delete;

  // Up succeeded: nothing is undone.
  void Dismiss() { dismissed_ = true; }
  // Per host: its sshd failed (set from the host's own thread).
  std::vector<char>& sshd_failed() { return sshd_failed_; }

 private:
  void RollBack() noexcept {
    std::vector<std::pair<std::string, std::string>> logs;  // kept path, text
    for (std::size_t i = 0; i < state_.hosts.size() && i < sshd_failed_.size(); ++i) {
      if (!sshd_failed_[i]) continue;
      const std::string text = ReadTextFile((fs::path(state_.host_dir(state_.hosts[i])) / "sshd.log").string());
      if (!text.empty()) logs.emplace_back(KeptLogPath(state_.state_dir, state_.hosts[i].name), text);
    }
    try {
      ClusterDown(options_.name, state_.state_dir, options_.cgroup_root, runner_);
    } catch (const std::exception&) {
      // The first failure is the one worth reporting.
    }
    for (const auto& [path, text] : logs) {
      std::error_code error;
      fs::create_directories(state_.state_dir, error);
      try {
        WriteClusterFile(path, text);
      } catch (const ClusterError&) {
        // The message already holds the log's end.
      }
    }
  }

  const ClusterOptions& options_;
  const ClusterState& state_;
  CommandRunner& runner_;
  std::vector<char> sshd_failed_;
  bool dismissed_ = false;
};

// The state and runtime directories, and the cluster's user key.
void MakeDirectories(const ClusterState& state, CommandRunner& runner) {
  std::error_code error;
  for (const std::string& dir : {state.state_dir, state.runtime_dir}) {
    fs::create_directories(dir, error);
    if (error) throw ClusterError("cannot create " + dir + ": " + error.message());
  }
  fs::permissions(state.runtime_dir, fs::perms::owner_all, error);
  RunChecked(runner, {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "dmlbench-cluster-" + state.name, "-f",
                      state.identity_file()});
}

// Chooses a free /24, makes the bridge that claims it, and names the hosts
// on it.
void AddBridgeOnAFreeSubnet(ClusterState& state, int hosts, CommandRunner& runner, const InterruptCheck& interrupted) {
  const SubnetLock lock(SubnetLockPath(), kSubnetLockWaitS, std::cerr, interrupted);
  const Subnet subnet = ChooseSubnet(RunChecked(runner, {"ip", "-o", "-4", "addr", "show"}),
                                     RunChecked(runner, {"ip", "-4", "route", "show", "table", "all"}),
                                     static_cast<int>(std::hash<std::string>()(state.name) % 256));
  state.subnet = subnet.Cidr();
  state.head_address = subnet.Address(1);
  AddBridge(runner, state.bridge, subnet);
  for (int i = 1; i <= hosts; ++i) {
    state.hosts.push_back(ClusterHostNamed(state.name, i, subnet.Address(kFirstHostOctet + i)));
  }
}

// Sets the hosts up in parallel (their commands mostly wait on the kernel
// and on process start-up) and returns the known_hosts file's text. Throws
// the first host's failure once every host is done.
std::string SetUpHosts(const ClusterState& state, const std::string& sshd, CommandRunner& runner,
                       const InterruptCheck& interrupted, std::vector<char>& sshd_failed) {
  std::vector<std::string> host_keys(state.hosts.size());
  std::vector<std::exception_ptr> errors(state.hosts.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < state.hosts.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        host_keys[i] = SetUpHost(state, i, sshd, runner, interrupted, sshd_failed[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  interrupted();
  for (const std::exception_ptr& failure : errors) {
    if (failure) std::rethrow_exception(failure);
  }
  std::string known_hosts;
  for (const std::string& line : host_keys) known_hosts += line;
  return known_hosts;
}

// Up's steps, each undone by `rollback` when a later one fails.
ClusterState BringUp(const ClusterOptions& options, ClusterState state, CommandRunner& runner,
                     const std::atomic<bool>* cancel) {
  UpRollback rollback(options, state, runner);
  const InterruptCheck interrupted = [cancel] { ThrowIfCancelled(cancel); };
  MakeDirectories(state, runner);
  interrupted();
  AddBridgeOnAFreeSubnet(state, options.hosts, runner, interrupted);
  // sshd refuses to start without its privilege separation directory.
  std::error_code error;
  fs::create_directories("/run/sshd", error);
  const std::string known_hosts = SetUpHosts(state, options.sshd, runner, interrupted, rollback.sshd_failed());
  WriteClusterFile(state.known_hosts_path(), known_hosts);
  WriteClusterState(state);
  WaitForSshd(state, interrupted, rollback.sshd_failed());
  if (options.slurm) StartClusterSlurm(state, runner, interrupted);
  rollback.Dismiss();
  return state;
}

}  // namespace

void ValidateClusterOptions(const ClusterOptions& options) {
  ValidateClusterName(options.name);
  if (options.hosts < 1 || options.hosts > kMaxHosts) {
    throw ClusterError("hosts must be between 1 and " + std::to_string(kMaxHosts) + ", got " +
                       std::to_string(options.hosts));
  }
  const double cores = static_cast<double>(std::thread::hardware_concurrency());
  if (!(options.cpu_cores >= 0 && options.cpu_cores <= cores)) {
    std::ostringstream message;
    message << "cpu share must be between 0 and " << cores << " cores, got " << options.cpu_cores;
    throw ClusterError(message.str());
  }
  // The kernel cannot run a quota below a millisecond, nor a period above
  // kMaxCpuPeriodUs we accept.
  if (options.cpu_cores > 0 && options.cpu_cores * kMaxCpuPeriodUs < kMinCpuQuotaUs) {
    std::ostringstream message;
    message << "cpu share must be 0 (uncapped) or at least 0.01 cores, got " << options.cpu_cores;
    throw ClusterError(message.str());
  }
  // Shares the machine cannot give at once are not shares: every timing
  // would measure contention. Leave a tenth for the orchestrator, mpirun
  // and the kernel's network work.
  const double total = options.cpu_cores * options.hosts;
  if (total > kUsableCoreFraction * cores) {
    std::ostringstream message;
    message << options.hosts << " hosts of " << options.cpu_cores << " cores need " << total << " cores, but this "
            << "machine has " << cores << " (at most " << kUsableCoreFraction * cores
            << " can be given to hosts): use fewer hosts or a smaller --cpu";
    throw ClusterError(message.str());
  }
}

ClusterState ClusterUp(const ClusterOptions& options, CommandRunner& runner, const std::atomic<bool>* cancel) {
  const std::string state_dir = CheckUpAllowed(options, runner);
  ClusterState state = PlannedState(options, state_dir);
  try {
    return BringUp(options, std::move(state), runner, cancel);
  } catch (const ClusterError&) {
    throw;
  } catch (const std::exception& e) {
    throw ClusterError(std::string("cluster up failed: ") + e.what());
  }
}

bool ReshapeCluster(ClusterState& state, const NetworkProfile& network, CommandRunner& runner) {
  const bool own = network.bandwidth_bits_per_s == 0 && network.latency_s == 0;
  const NetworkProfile wanted = own ? state.base_network : network;
  if (SameShaping(wanted, state.network)) {
    state.network.name = wanted.name;
    return false;
  }
  // The record is what the links have (or UnknownShaping(), which never
  // takes the in-place change of ShapeCommands).
  const NetworkProfile now = state.network;
  state.network = UnknownShaping();
  WriteClusterState(state);
  ShapeHostLinks(state, wanted, now, runner);
  state.network = wanted;
  WriteClusterState(state);
  return true;
}

std::string ClusterStatus(const ClusterState& state, CommandRunner& runner) {
  std::ostringstream out;
  out << "cluster " << state.name << ": " << state.hosts.size() << " hosts on " << state.subnet
      << " (bridge " << state.bridge << " " << state.head_address << "), cgroup "
      << (state.cgroup.version == CgroupVersion::kV1 ? "v1" : "v2") << ", profile "
      << ProfileLabel(state.network) << ", "
      << (HostsPinned(state) ? "host i on CPU i mod the CPUs" : "hosts on any CPU")
      << "\n";
  out << "inventory " << state.inventory_path() << "\n";
  out << Pad("host", 14) << Pad("address", 13) << Pad("sshd", 12) << Pad("cpu", 6)
      << Pad("upload (eth0)", 28) << "download (" << "bridge side)\n";
  const std::vector<std::string> namespaces = ListNamespaces(runner, ClusterPrefix(state.name));
  for (const ClusterHost& host : state.hosts) {
    const bool present = std::find(namespaces.begin(), namespaces.end(), host.name) != namespaces.end();
    std::string sshd = "missing";
    std::string cpu = "?";
    std::string upload = "?";
    std::string download = "?";
    if (present) {
      int pid = 0;
      std::istringstream(ReadTextFile((fs::path(state.state_dir) / host.name / "sshd.pid").string())) >> pid;
      if (pid > 0 && kill(pid, 0) == 0) sshd = "pid " + std::to_string(pid);
      try {
        const double cores = CpuCgroupCores(state.cgroup, host.cgroup);
        cpu = cores == 0 ? "all" : CoresText(cores);
      } catch (const ClusterError&) {
        cpu = "missing";
      }
      upload = ShapingSummary(RunChecked(runner, {"tc", "-n", host.name, "qdisc", "show", "dev", "eth0"}));
      download = ShapingSummary(RunChecked(runner, {"tc", "qdisc", "show", "dev", host.veth}));
    }
    out << Pad(host.name, 14) << Pad(host.address, 13) << Pad(sshd, 12) << Pad(cpu, 6) << Pad(upload, 28)
        << download << "\n";
  }
  out << ClusterSlurmStatus(state, runner);
  return out.str();
}

std::vector<std::string> ClusterLeftovers(const std::string& name, const std::string& cgroup_root,
                                          CommandRunner& runner) {
  std::vector<std::string> found;
  for (const std::string& ns : ListNamespaces(runner, ClusterPrefix(name))) found.push_back("namespace " + ns);
  for (const std::string& link : ListLinks(runner, ClusterBridgeName(name))) {
    if (IsClusterLink(name, link)) found.push_back("link " + link);
  }
  try {
    const CgroupLayout layout = DetectCgroupLayout(cgroup_root);
    for (const std::string& group : ListCpuCgroups(layout, ClusterPrefix(name))) {
      found.push_back("cgroup " + (fs::path(layout.cpu_root) / group).string());
    }
  } catch (const ClusterError&) {
    // No CPU controller: no cgroup can be left over.
  }
  for (const std::string& daemon : ClusterSlurmDaemons(ClusterRuntimeDir(name))) found.push_back(daemon);
  std::error_code error;
  if (fs::exists(ClusterRuntimeDir(name), error)) found.push_back("runtime directory " + ClusterRuntimeDir(name));
  return found;
}

void ClusterDown(const std::string& name, const std::string& state_dir, const std::string& cgroup_root,
                 CommandRunner& runner) {
  ValidateClusterName(name);
  std::error_code error;
  const std::string state = state_dir.empty() ? "" : fs::absolute(state_dir, error).lexically_normal().string();
  const std::string owner = state.empty() ? "" : ClusterNameIn(state);
  if (!owner.empty() && owner != name) {
    throw ClusterError("state directory " + state + " belongs to cluster " + owner + ", not " + name +
                       ": to take " + owner + " down, use --name " + owner + " (or leave --name out)");
  }
  // The ssh connections kept open into the hosts (ControlMaster) end first;
  // clusters made before the runtime dir kept them in the state dir.
  const std::string runtime_dir = ClusterRuntimeDir(name);
  for (const std::string& dir : {runtime_dir, state}) {
    if (dir.empty()) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      const std::string path = entry.path().string();
      if (path.rfind(ControlPathPrefix(dir), 0) != 0) continue;
      runner.Run({"ssh", "-o", "ControlPath=" + path, "-O", "exit", "host"});
    }
  }
  // Namespaces first: deleting one kills its processes (sshd, slurmd,
  // orted, ranks), and with the last of them its mounts, and takes the
  // host's end of its veth pair, and with it the pair. Then the Slurm
  // controller that had those slurmds as nodes, and its munged.
  for (const std::string& ns : ListNamespaces(runner, ClusterPrefix(name))) DeleteNamespace(runner, ns);
  StopClusterSlurm(runtime_dir);
  for (const std::string& link : ListLinks(runner, ClusterBridgeName(name))) {
    if (IsClusterLink(name, link)) DeleteLink(runner, link);
  }
  try {
    const CgroupLayout layout = DetectCgroupLayout(cgroup_root);
    for (const std::string& group : ListCpuCgroups(layout, ClusterPrefix(name))) RemoveCpuCgroup(layout, group);
  } catch (const ClusterError&) {
    // No CPU controller: no cgroup was made.
  }
  // Nothing is mounted on this machine (the hosts' mounts lived in their
  // own namespaces), so removing files removes only files.
  fs::remove_all(runtime_dir, error);
  if (state.empty()) return;
  const fs::path dir(state);
  for (const char* file : {"inventory.toml", "inventory.toml.tmp", "known_hosts", "known_hosts.tmp",
                           "id_ed25519", "id_ed25519.pub"}) {
    fs::remove(dir / file, error);
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(ClusterPrefix(name), 0) == 0 || file == "work") fs::remove_all(entry.path(), error);
  }
  fs::remove(dir, error);
}

std::string CopyToHosts(const ClusterState& state, const std::vector<ClusterHost>& hosts,
                        const std::string& local_path) {
  // Hosts made before they had disks of their own see this machine's files.
  if (state.host_home.empty()) return local_path;
  const std::string file = fs::path(local_path).filename().string();
  const fs::path relative = fs::path(state.work_dir).lexically_relative(state.host_home);
  for (const ClusterHost& host : hosts) {
    const fs::path dir = fs::path(state.host_dir(host)) / "home" / relative;
    const fs::path temporary = dir / (file + ".tmp");
    std::error_code error;
    fs::create_directories(dir, error);
    if (!error) fs::copy_file(local_path, temporary, fs::copy_options::overwrite_existing, error);
    if (!error) fs::rename(temporary, dir / file, error);
    if (error) throw ClusterError("cannot copy " + local_path + " to host " + host.name + ": " + error.message());
  }
  return state.work_dir + "/" + file;
}

QuotaLift::QuotaLift(const ClusterState& state, int hosts) : state_(state), hosts_(hosts) {
  if (state_.cpu_cores <= 0) return;
  for (int i = 0; i < hosts_; ++i) CreateCpuCgroup(state_.cgroup, state_.hosts[i].cgroup, 0);
  lifted_ = true;
}

QuotaLift::~QuotaLift() {
  try {
    Restore();
  } catch (const ClusterError&) {
  }
}

void QuotaLift::Restore() {
  if (!lifted_) return;
  lifted_ = false;
  restored_unix_s_ = UnixNow();
  for (int i = 0; i < hosts_; ++i) CreateCpuCgroup(state_.cgroup, state_.hosts[i].cgroup, state_.cpu_cores);
}

}  // namespace dmlbench
