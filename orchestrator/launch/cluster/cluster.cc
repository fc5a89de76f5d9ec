#include "orchestrator/launch/cluster/cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <toml++/toml.h>

#include "orchestrator/core/clock.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/ssh/inventory.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxHosts = 64;
constexpr double kUsableCoreFraction = 0.9;
constexpr int kFirstHostOctet = 10;          // host i (1-based) is .10+i
constexpr double kSshdStartTimeoutS = 5;
constexpr int kLogTailLines = 5;             // of a failed sshd's log, in the error
constexpr std::uint64_t kCapNetAdmin = 1ull << 12;
constexpr std::uint64_t kCapSysAdmin = 1ull << 21;

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

// The CPU a host of at most one core is pinned to: host i on CPU i mod the
// machine's CPUs; "" (not pinned) for uncapped hosts and shares above a
// core. A quota is per cgroup, but the kernel hands it to each CPU's run
// queue in slices: a host whose ranks moved between the 2 CPUs used both
// CPUs' slices within one period, and a 1-worker epoch of 0.15 core varied
// from 0.090 to 0.156 s over six runs; pinned, 0.108 to 0.129 s. A real
// host's share is of its own cores, too. Everything its sshd starts
// inherits the pin (the trainer runs with --bind-to none). `up --no-pin`
// leaves every host free to run on any CPU: with 4 hosts of 0.4 core on 2
// CPUs, ring, mpi and p2p ran no faster so (README, Benchmarks).
bool HostsPinned(const ClusterState& state) {
  return state.pin_cpus && state.cpu_cores > 0 && state.cpu_cores <= 1;
}
std::string HostCpu(const ClusterState& state, std::size_t index) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return HostsPinned(state) ? std::to_string(index % cpus) : "";
}

std::string Prefix(const std::string& name) { return std::string(kClusterPrefix) + name + "-"; }
std::string RuntimeDir(const std::string& name) { return (fs::path(kClusterRuntimeRoot) / name).string(); }
// Where the log of a host whose sshd failed is kept once up has rolled back.
std::string KeptLogPath(const std::string& state_dir, const std::string& host) {
  return (fs::path(state_dir) / (host + ".sshd.log")).string();
}
// A host's directory as the host itself sees it (kHostStartScript's $2).
std::string InsideHostDir(const ClusterState& state, const ClusterHost& host) {
  return (fs::path(state.runtime_dir) / host.name).string();
}
std::string BridgeName(const std::string& name) { return std::string(kClusterPrefix) + name; }
std::string HostName(const std::string& name, int i) { return Prefix(name) + "h" + std::to_string(i); }
std::string VethName(const std::string& name, int i) { return Prefix(name) + std::to_string(i); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::out | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw ClusterError("cannot write " + temporary.string() + ": " + std::strerror(errno));
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) throw ClusterError("cannot write " + path.string() + ": " + error.message());
}

// Serialises subnet choice between clusters being brought up at once: the
// bridge address that claims the /24 exists before the lock is released.
class SubnetLock {
 public:
  SubnetLock() {
    const fs::path path = fs::temp_directory_path() / "dmlbench-cluster-subnet.lock";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0) {
      throw ClusterError("cannot lock " + path.string() + ": " + std::strerror(errno));
    }
  }
  ~SubnetLock() { close(fd_); }
  SubnetLock(const SubnetLock&) = delete;
  SubnetLock& operator=(const SubnetLock&) = delete;

 private:
  int fd_ = -1;
};

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

// `inside` is the host's directory as the host sees it: a path without
// spaces, which sshd_config could not hold unquoted.
std::string SshdConfig(const fs::path& inside, const std::string& address) {
  return "# sshd of one emulated host; written by `dmlbench cluster up`.\n"
         "ListenAddress " + address + "\n"
         "Port 22\n"
         "HostKey " + (inside / "ssh_host_ed25519_key").string() + "\n"
         "AuthorizedKeysFile .ssh/authorized_keys\n"
         "PidFile " + (inside / "sshd.pid").string() + "\n"
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

toml::table ProfileTable(const NetworkProfile& profile) {
  return toml::table{{"name", profile.name},
                     {"bandwidth_bits_per_s", profile.bandwidth_bits_per_s},
                     {"latency_s", profile.latency_s}};
}

NetworkProfile ProfileFrom(toml::node_view<toml::node> node) {
  NetworkProfile profile;
  profile.name = node["name"].value_or(std::string());
  profile.bandwidth_bits_per_s = node["bandwidth_bits_per_s"].value_or(0.0);
  profile.latency_s = node["latency_s"].value_or(0.0);
  return profile;
}

bool SameShaping(const NetworkProfile& a, const NetworkProfile& b) {
  return a.bandwidth_bits_per_s == b.bandwidth_bits_per_s && a.latency_s == b.latency_s;
}

std::string CoresText(double cores) {
  std::ostringstream text;
  text << cores;
  return text.str();
}

// Where the ssh connections mpirun keeps open live: <runtime_dir>/ssh-<hash>.
std::string ControlPathPrefix(const std::string& dir) { return (fs::path(dir) / "ssh-").string(); }

// The inventory (schemas/inventory.md) with this module's state in its
// [emulated_cluster] table.
std::string InventoryText(const ClusterState& state) {
  // One ssh connection per host is kept open between runs (ControlMaster):
  // a new one costs its host's sshd a key exchange, about a second of a
  // 0.15-core share, for every daemon mpirun starts.
  // (A socket path has at most 107 bytes; %C is 40.) Open MPI splits these
  // arguments at spaces, hence paths in the runtime dir; hosts run ssh with
  // them too (tree spawn, the peer check), and see the same runtime dir.
  // No ssh configuration of this machine's user applies (-F none).
  std::string ssh_options = "-F none -i " + state.identity_file() + " -o UserKnownHostsFile=" +
                            state.known_hosts_path() +
                            " -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR";
  if (ControlPathPrefix(state.runtime_dir).size() + 40 < 107) {
    ssh_options += " -o ControlMaster=auto -o ControlPersist=600 -o ControlPath=" +
                   ControlPathPrefix(state.runtime_dir) + "%C";
  }
  // Every namespace has the same hostname and shares memory with the others,
  // so only TCP over the cluster's links may carry MPI traffic. Each host
  // also sees all of this machine's cores: Open MPI binds a run of two ranks
  // by core, so each host's daemon pinned its rank to core 0 and both ranks
  // shared one core (the link probe measured 1 ms for a 10 us link). The
  // scheduler shares the cores instead, and the hosts' cgroups cap them.
  toml::array mpi_args{"--allow-run-as-root",
                       "--bind-to", "none",
                       "--mca", "pml", "ob1",
                       "--mca", "btl", "tcp,self",
                       "--mca", "btl_tcp_if_include", state.subnet,
                       "--mca", "oob_tcp_if_include", state.subnet,
                       "--mca", "plm_rsh_args", ssh_options};
  toml::array hosts;
  for (const ClusterHost& host : state.hosts) {
    hosts.push_back(toml::table{{"name", host.name},
                                {"address", host.address},
                                {"port", 22},
                                {"user", "root"},
                                {"identity_file", state.identity_file()},
                                {"slots", 1},
                                {"tags", toml::table{{"provider", "cluster"},
                                                     {"cluster", state.name},
                                                     {"cpu_cores", CoresText(state.cpu_cores)}}}});
  }
  toml::table cluster{{"name", state.name},
                      {"runtime_dir", state.runtime_dir},
                      {"host_home", state.host_home},
                      {"subnet", state.subnet},
                      {"bridge", state.bridge},
                      {"head_address", state.head_address},
                      {"cgroup_version", state.cgroup.version == CgroupVersion::kV1 ? "v1" : "v2"},
                      {"cgroup_cpu_root", state.cgroup.cpu_root},
                      {"cpu_cores", state.cpu_cores},
                      {"pin_cpus", state.pin_cpus},
                      {"base_network", ProfileTable(state.base_network)},
                      {"network", ProfileTable(state.network)}};
  toml::table inventory{{"format_version", 1},
                        {"known_hosts", state.known_hosts_path()},
                        {"host_key_policy", "strict"},
                        {"connect_timeout_s", 10},
                        {"ssh_config", ""},  // the machine user's ~/.ssh/config is not the cluster's
                        {"work_dir", state.work_dir},
                        {"mpi_args", mpi_args},
                        {"host", hosts},
                        {"emulated_cluster", cluster}};
  std::ostringstream text;
  text << "# Emulated cluster " << state.name << ", written by `dmlbench cluster up`.\n"
       << "# [emulated_cluster] is its state; `dmlbench cluster down` removes it all.\n"
       << inventory << "\n";
  return text.str();
}

std::string CurrentCaps() {
  std::istringstream lines(ReadFile("/proc/self/status"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("CapEff:", 0) == 0) return line.substr(7);
  }
  return "0";
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
  const std::string log = ReadFile(fs::path(state.host_dir(host)) / "sshd.log");
  std::string message = "sshd of " + host.name + " " + what;
  if (!log.empty()) {
    message += "; the end of its log (kept in " + KeptLogPath(state.state_dir, host.name) + "):" +
               IndentedTail(log, kLogTailLines);
  } else if (!IndentedTail(output, 1).empty()) {
    message += ":" + IndentedTail(output, kLogTailLines);
  }
  return message;
}

void ThrowIfCancelled(const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load()) {
    throw ClusterInterrupted("cluster up interrupted; everything it had made is removed");
  }
}

// The home of the user the hosts are logged into (root), as on this machine:
// each host mounts its own over it.
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

// A host's files, made afresh: host key, sshd_config and a home holding only
// the cluster's authorized key. Returns its known_hosts line.
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
  WriteFile(dir / "sshd_config", SshdConfig(InsideHostDir(state, host), host.address));
  WriteFile(dir / "home" / ".ssh" / "authorized_keys", ReadFile(state.identity_file() + ".pub"));
  std::istringstream public_key(ReadFile(host_key.string() + ".pub"));
  std::string type, key;
  public_key >> type >> key;
  return host.address + " " + type + " " + key + "\n";
}

// One host: namespace, link (shaped), cgroup, files, and sshd in a mount
// namespace of its own (kHostStartScript). Returns its known_hosts line.
// Sets `keep_log` when its sshd failed.
std::string SetUpHost(const ClusterState& state, std::size_t index, const std::string& sshd,
                      CommandRunner& runner, const std::atomic<bool>* cancel, char& keep_log) {
  const ClusterHost& host = state.hosts[index];
  ThrowIfCancelled(cancel);
  AddNamespace(runner, host.name);
  ThrowIfCancelled(cancel);
  AddHostLink(runner, state.bridge, host.veth, host.name, host.address);
  PinCongestionControl(runner, host.name, state.subnet, host.address);
  ThrowIfCancelled(cancel);
  ShapeHostLink(runner, host.veth, host.name, state.network);
  CreateCpuCgroup(state.cgroup, host.cgroup, state.cpu_cores);
  ThrowIfCancelled(cancel);
  const std::string known_host = WriteHostFiles(state, host, runner);
  const std::string inside = InsideHostDir(state, host);
  std::error_code error;
  fs::create_directories(inside, error);  // on this machine, only what the host's mount covers
  if (error) throw ClusterError("cannot create " + inside + ": " + error.message());
  ThrowIfCancelled(cancel);
  // Started in the host's namespace and cgroup: Open MPI's daemon and the
  // ranks it starts through this sshd inherit both, and its mounts.
  const CommandResult started =
      runner.Run({"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", kHostStartScript,
                  "dmlbench-host", state.host_dir(host), inside, state.host_home, sshd, inside + "/sshd_config",
                  inside + "/sshd.log", HostCpu(state, index)},
                 {host.name, CgroupProcsFile(state.cgroup, host.cgroup)});
  if (started.exit_code != 0) {
    keep_log = 1;
    throw ClusterError(
        SshdProblem(state, host, "did not start (exit " + std::to_string(started.exit_code) + ")", started.output));
  }
  return known_host;
}

// Waits until every sshd accepts connections.
void WaitForSshd(const ClusterState& state, const std::atomic<bool>* cancel, std::vector<char>& keep_logs) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int>(kSshdStartTimeoutS * 1000));
  for (std::size_t i = 0; i < state.hosts.size(); ++i) {
    const ClusterHost& host = state.hosts[i];
    while (!PortOpen(host.address, 22)) {
      ThrowIfCancelled(cancel);
      if (std::chrono::steady_clock::now() > deadline) {
        keep_logs[i] = 1;
        throw ClusterError(SshdProblem(state, host,
                                       "does not accept connections on " + host.address + ":22 after " +
                                           std::to_string(static_cast<int>(kSshdStartTimeoutS)) + " s",
                                       ""));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

// Removes what a failed or interrupted up made, except the logs of hosts
// whose sshd failed: those stay as <state_dir>/<host>.sshd.log.
void RollBack(const ClusterOptions& options, const ClusterState& state, const std::vector<char>& keep_logs,
              CommandRunner& runner) {
  std::vector<std::pair<std::string, std::string>> logs;  // kept path, text
  for (std::size_t i = 0; i < state.hosts.size() && i < keep_logs.size(); ++i) {
    if (!keep_logs[i]) continue;
    const std::string text = ReadFile(fs::path(state.host_dir(state.hosts[i])) / "sshd.log");
    if (!text.empty()) logs.emplace_back(KeptLogPath(state.state_dir, state.hosts[i].name), text);
  }
  try {
    ClusterDown(options.name, state.state_dir, options.cgroup_root, runner);
  } catch (const std::exception&) {
    // The first failure is the one worth reporting.
  }
  for (const auto& [path, text] : logs) {
    std::error_code error;
    fs::create_directories(state.state_dir, error);
    try {
      WriteFile(path, text);
    } catch (const ClusterError&) {
      // The message already holds the log's end.
    }
  }
}

}  // namespace

std::string ClusterState::inventory_path() const { return (fs::path(state_dir) / "inventory.toml").string(); }
std::string ClusterState::known_hosts_path() const { return (fs::path(runtime_dir) / "known_hosts").string(); }
std::string ClusterState::identity_file() const { return (fs::path(runtime_dir) / "id_ed25519").string(); }
std::string ClusterState::host_dir(const ClusterHost& host) const { return (fs::path(state_dir) / host.name).string(); }

std::string PrivilegeProblem(std::uint64_t effective_caps, bool cgroup_writable,
                             const std::string& cgroup_dir) {
  std::vector<std::string> missing;
  if ((effective_caps & kCapNetAdmin) == 0) missing.push_back("CAP_NET_ADMIN (links, tc)");
  if ((effective_caps & kCapSysAdmin) == 0) missing.push_back("CAP_SYS_ADMIN (network namespaces)");
  if (!cgroup_writable) missing.push_back("write access to " + cgroup_dir + " (CPU cgroups)");
  if (missing.empty()) return "";
  std::string message = "the emulated cluster needs root: missing ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) message += i + 1 == missing.size() ? " and " : ", ";
    message += missing[i];
  }
  return message;
}

void CheckClusterPrivileges(const std::string& cgroup_root) {
  std::uint64_t caps = 0;
  std::istringstream(CurrentCaps()) >> std::hex >> caps;
  std::string cgroup_dir = cgroup_root;
  bool writable = false;
  try {
    cgroup_dir = DetectCgroupLayout(cgroup_root).cpu_root;
    writable = access(cgroup_dir.c_str(), W_OK) == 0;
  } catch (const ClusterError&) {
    writable = false;
  }
  const std::string problem = PrivilegeProblem(caps, writable, cgroup_dir);
  if (!problem.empty()) throw ClusterError(problem);
}

void ValidateClusterName(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 6 &&
                  name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos;
  if (!ok) throw ClusterError("cluster name must be 1-6 characters of a-z and 0-9, got \"" + name + "\"");
}

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

std::string ClusterNameIn(const std::string& state_dir) {
  std::error_code error;
  if (!fs::exists(fs::path(state_dir) / "inventory.toml", error)) return "";
  return LoadClusterState(state_dir).name;
}

ClusterState ClusterUp(const ClusterOptions& options, CommandRunner& runner, const std::atomic<bool>* cancel) {
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

  ClusterState state;
  state.name = options.name;
  state.state_dir = state_dir;
  state.runtime_dir = RuntimeDir(options.name);
  state.host_home = HostUserHome();
  state.work_dir = (fs::path(state.host_home) / "dmlbench").string();
  state.bridge = BridgeName(options.name);
  state.cgroup = DetectCgroupLayout(options.cgroup_root);
  state.cpu_cores = options.cpu_cores;
  state.pin_cpus = options.pin_cpus;
  state.base_network = options.network;
  state.network = options.network;
  std::vector<char> keep_logs(static_cast<std::size_t>(options.hosts), 0);  // per host: its sshd failed

  try {
    std::error_code error;
    for (const std::string& dir : {state.state_dir, state.runtime_dir}) {
      fs::create_directories(dir, error);
      if (error) throw ClusterError("cannot create " + dir + ": " + error.message());
    }
    fs::permissions(state.runtime_dir, fs::perms::owner_all, error);
    RunChecked(runner, {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                        "dmlbench-cluster-" + state.name, "-f", state.identity_file()});
    ThrowIfCancelled(cancel);
    {
      SubnetLock lock;
      const Subnet subnet = ChooseSubnet(RunChecked(runner, {"ip", "-o", "-4", "addr", "show"}),
                                         RunChecked(runner, {"ip", "-4", "route", "show", "table", "all"}),
                                         static_cast<int>(std::hash<std::string>()(state.name) % 256));
      state.subnet = subnet.Cidr();
      state.head_address = subnet.Address(1);
      AddBridge(runner, state.bridge, subnet);
      for (int i = 1; i <= options.hosts; ++i) {
        state.hosts.push_back({HostName(state.name, i), subnet.Address(kFirstHostOctet + i),
                               VethName(state.name, i), HostName(state.name, i)});
      }
    }
    // sshd refuses to start without its privilege separation directory.
    fs::create_directories("/run/sshd", error);

    // Hosts are set up in parallel (their commands mostly wait on the
    // kernel and on process start-up); each fills its own known_hosts line.
    std::vector<std::string> host_keys(state.hosts.size());
    std::vector<std::exception_ptr> errors(state.hosts.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < state.hosts.size(); ++i) {
      threads.emplace_back([&, i] {
        try {
          host_keys[i] = SetUpHost(state, i, options.sshd, runner, cancel, keep_logs[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ThrowIfCancelled(cancel);
    for (const std::exception_ptr& failure : errors) {
      if (failure) std::rethrow_exception(failure);
    }
    std::string known_hosts;
    for (const std::string& line : host_keys) known_hosts += line;
    WriteFile(state.known_hosts_path(), known_hosts);
    WriteFile(state.inventory_path(), InventoryText(state));
    WaitForSshd(state, cancel, keep_logs);
  } catch (const std::exception& e) {
    RollBack(options, state, keep_logs, runner);
    if (dynamic_cast<const ClusterError*>(&e) != nullptr) throw;
    throw ClusterError(std::string("cluster up failed: ") + e.what());
  }
  return state;
}

ClusterState LoadClusterState(const std::string& state_dir) {
  const fs::path path = fs::path(state_dir) / "inventory.toml";
  if (!fs::exists(path)) {
    throw ClusterError("no emulated cluster in " + state_dir + " (run `dmlbench cluster up`)");
  }
  Inventory inventory;
  toml::table table;
  try {
    inventory = LoadInventory(path.string());
    table = toml::parse(inventory.emulated_cluster_toml);
  } catch (const InventoryError& e) {
    throw ClusterError(e.what());
  } catch (const toml::parse_error& e) {
    throw ClusterError(path.string() + ": [emulated_cluster]: " + std::string(e.description()));
  }
  ClusterState state;
  state.state_dir = fs::absolute(state_dir).lexically_normal().string();
  state.name = table["name"].value_or(std::string());
  if (state.name.empty()) {
    throw ClusterError(path.string() + ": no [emulated_cluster] table: not written by `dmlbench cluster up`");
  }
  // Clusters made before the runtime dir kept their keys in the state dir,
  // and their hosts shared this machine's files.
  state.runtime_dir = table["runtime_dir"].value_or(state.state_dir);
  state.host_home = table["host_home"].value_or(std::string());
  state.work_dir = inventory.work_dir;
  state.subnet = table["subnet"].value_or(std::string());
  state.bridge = table["bridge"].value_or(std::string());
  state.head_address = table["head_address"].value_or(std::string());
  state.cgroup.version = table["cgroup_version"].value_or(std::string()) == "v2" ? CgroupVersion::kV2
                                                                                 : CgroupVersion::kV1;
  state.cgroup.cpu_root = table["cgroup_cpu_root"].value_or(std::string());
  state.cpu_cores = table["cpu_cores"].value_or(0.0);
  state.pin_cpus = table["pin_cpus"].value_or(true);
  state.base_network = ProfileFrom(table["base_network"]);
  state.network = ProfileFrom(table["network"]);
  for (std::size_t i = 0; i < inventory.hosts.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    state.hosts.push_back({inventory.hosts[i].name, inventory.hosts[i].address,
                           VethName(state.name, index), HostName(state.name, index)});
  }
  return state;
}

bool ReshapeCluster(ClusterState& state, const NetworkProfile& network, CommandRunner& runner) {
  const bool own = network.bandwidth_bits_per_s == 0 && network.latency_s == 0;
  const NetworkProfile& wanted = own ? state.base_network : network;
  if (SameShaping(wanted, state.network)) {
    state.network.name = wanted.name;
    return false;
  }
  for (const ClusterHost& host : state.hosts) ShapeHostLink(runner, host.veth, host.name, wanted);
  state.network = wanted;
  WriteFile(state.inventory_path(), InventoryText(state));
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
  const std::vector<std::string> namespaces = ListNamespaces(runner, Prefix(state.name));
  for (const ClusterHost& host : state.hosts) {
    const bool present = std::find(namespaces.begin(), namespaces.end(), host.name) != namespaces.end();
    std::string sshd = "missing";
    std::string cpu = "?";
    std::string upload = "?";
    std::string download = "?";
    if (present) {
      int pid = 0;
      std::istringstream(ReadFile(fs::path(state.state_dir) / host.name / "sshd.pid")) >> pid;
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
  return out.str();
}

std::vector<std::string> ClusterLeftovers(const std::string& name, const std::string& cgroup_root,
                                          CommandRunner& runner) {
  std::vector<std::string> found;
  for (const std::string& ns : ListNamespaces(runner, Prefix(name))) found.push_back("namespace " + ns);
  for (const std::string& link : ListLinks(runner, BridgeName(name))) {
    if (link == BridgeName(name) || link.rfind(Prefix(name), 0) == 0) found.push_back("link " + link);
  }
  try {
    const CgroupLayout layout = DetectCgroupLayout(cgroup_root);
    for (const std::string& group : ListCpuCgroups(layout, Prefix(name))) {
      found.push_back("cgroup " + (fs::path(layout.cpu_root) / group).string());
    }
  } catch (const ClusterError&) {
    // No CPU controller: no cgroup can be left over.
  }
  std::error_code error;
  if (fs::exists(RuntimeDir(name), error)) found.push_back("runtime directory " + RuntimeDir(name));
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
  const std::string runtime_dir = RuntimeDir(name);
  for (const std::string& dir : {runtime_dir, state}) {
    if (dir.empty()) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      const std::string path = entry.path().string();
      if (path.rfind(ControlPathPrefix(dir), 0) != 0) continue;
      runner.Run({"ssh", "-o", "ControlPath=" + path, "-O", "exit", "host"});
    }
  }
  // Namespaces first: deleting one kills its processes (sshd, orted, ranks),
  // and with the last of them its mounts, and takes the host's end of its
  // veth pair, and with it the pair.
  for (const std::string& ns : ListNamespaces(runner, Prefix(name))) DeleteNamespace(runner, ns);
  for (const std::string& link : ListLinks(runner, BridgeName(name))) {
    if (link == BridgeName(name) || link.rfind(Prefix(name), 0) == 0) DeleteLink(runner, link);
  }
  try {
    const CgroupLayout layout = DetectCgroupLayout(cgroup_root);
    for (const std::string& group : ListCpuCgroups(layout, Prefix(name))) RemoveCpuCgroup(layout, group);
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
    if (file.rfind(Prefix(name), 0) == 0 || file == "work") fs::remove_all(entry.path(), error);
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
  for (int i = 0; i < hosts_; ++i) CreateCpuCgroup(state_.cgroup, state_.hosts[i].cgroup, state_.cpu_cores);
  restored_unix_s_ = UnixNow();
}

}  // namespace dmlbench
