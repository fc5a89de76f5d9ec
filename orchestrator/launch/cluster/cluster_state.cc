#include "orchestrator/launch/cluster/cluster_state.h"

#include <filesystem>
#include <optional>
#include <sstream>

#include <toml++/toml.h>

#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/ssh/inventory.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// A socket path has at most 107 bytes; ssh's %C is 40.
constexpr std::size_t kMaxSocketPath = 107;
constexpr std::size_t kControlHashLength = 40;

toml::table ProfileTable(const NetworkProfile& profile) {
  return toml::table{{"name", profile.name},
                     {"bandwidth_bits_per_s", profile.bandwidth_bits_per_s},
                     {"latency_s", profile.latency_s}};
}

NetworkProfile ProfileFrom(toml::node_view<const toml::node> node) {
  NetworkProfile profile;
  profile.name = node["name"].value_or(std::string());
  profile.bandwidth_bits_per_s = node["bandwidth_bits_per_s"].value_or(0.0);
  profile.latency_s = node["latency_s"].value_or(0.0);
  return profile;
}

// The options every ssh to a host runs with, mpirun's included.
std::string SshOptions(const ClusterState& state) {
  // One ssh connection per host is kept open between runs (ControlMaster):
  // a new one costs its host's sshd a key exchange, about a second of a
  // 0.15-core share, for every daemon mpirun starts.
  // Open MPI splits these arguments at spaces, hence paths in the runtime
  // dir; hosts run ssh with them too (tree spawn, the peer check), and see
  // the same runtime dir. No ssh configuration of this machine's user
  // applies (-F none).
  std::string options = "-F none -i " + state.identity_file() + " -o UserKnownHostsFile=" +
                        state.known_hosts_path() +
                        " -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR";
  if (ControlPathPrefix(state.runtime_dir).size() + kControlHashLength < kMaxSocketPath) {
    options += " -o ControlMaster=auto -o ControlPersist=600 -o ControlPath=" +
               ControlPathPrefix(state.runtime_dir) + "%C";
  }
  return options;
}

toml::array MpiArgs(const ClusterState& state) {
  // Every namespace has the same hostname and shares memory with the others,
  // so only TCP over the cluster's links may carry MPI traffic. Each host
  // also sees all of this machine's cores: Open MPI binds a run of two ranks
  // by core, so each host's daemon pinned its rank to core 0 and both ranks
  // shared one core (the link probe measured 1 ms for a 10 us link). The
  // scheduler shares the cores instead, and the hosts' cgroups cap them.
  return toml::array{"--allow-run-as-root",
                     "--bind-to", "none",
                     "--mca", "pml", "ob1",
                     "--mca", "btl", "tcp,self",
                     "--mca", "btl_tcp_if_include", state.subnet,
                     "--mca", "oob_tcp_if_include", state.subnet,
                     "--mca", "plm_rsh_args", SshOptions(state)};
}

toml::array HostTables(const ClusterState& state) {
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
  return hosts;
}

// [emulated_cluster]: what LoadClusterState reads back.
toml::table ClusterTable(const ClusterState& state) {
  return toml::table{{"name", state.name},
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
}

// The [emulated_cluster] table of `table` into `state` (its name first:
// without one, the inventory is not a cluster's).
void ReadClusterTable(const toml::table& table, const fs::path& path, ClusterState& state) {
  state.name = table["name"].value_or(std::string());
  if (state.name.empty()) {
    throw ClusterError(path.string() + ": no [emulated_cluster] table: not written by `dmlbench cluster up`");
  }
  // Clusters made before the runtime dir kept their keys in the state dir,
  // and their hosts shared this machine's files.
  state.runtime_dir = table["runtime_dir"].value_or(state.state_dir);
  state.host_home = table["host_home"].value_or(std::string());
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
}

}  // namespace

std::string ClusterState::inventory_path() const { return (fs::path(state_dir) / "inventory.toml").string(); }
std::string ClusterState::known_hosts_path() const { return (fs::path(runtime_dir) / "known_hosts").string(); }
std::string ClusterState::identity_file() const { return (fs::path(runtime_dir) / "id_ed25519").string(); }
std::string ClusterState::host_dir(const ClusterHost& host) const { return (fs::path(state_dir) / host.name).string(); }

NetworkProfile UnknownShaping() { return {"unknown", -1, -1}; }

void ValidateClusterName(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 6 &&
                  name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos;
  if (!ok) throw ClusterError("cluster name must be 1-6 characters of a-z and 0-9, got \"" + name + "\"");
}

std::string ClusterPrefix(const std::string& name) { return std::string(kClusterPrefix) + name + "-"; }
std::string ClusterBridgeName(const std::string& name) { return std::string(kClusterPrefix) + name; }

ClusterHost ClusterHostNamed(const std::string& name, int i, const std::string& address) {
  const std::string host = ClusterPrefix(name) + "h" + std::to_string(i);
  return {host, address, ClusterPrefix(name) + std::to_string(i), host};
}

std::string ClusterRuntimeDir(const std::string& name) { return (fs::path(kClusterRuntimeRoot) / name).string(); }
std::string ControlPathPrefix(const std::string& dir) { return (fs::path(dir) / "ssh-").string(); }

std::string CoresText(double cores) {
  std::ostringstream text;
  text << cores;
  return text.str();
}

std::string ClusterStateText(const ClusterState& state) {
  toml::table inventory{{"format_version", 1},
                        {"known_hosts", state.known_hosts_path()},
                        {"host_key_policy", "strict"},
                        {"connect_timeout_s", 10},
                        {"ssh_config", ""},  // the machine user's ~/.ssh/config is not the cluster's
                        {"work_dir", state.work_dir},
                        {"mpi_args", MpiArgs(state)},
                        {"host", HostTables(state)},
                        {"emulated_cluster", ClusterTable(state)}};
  std::ostringstream text;
  text << "# Emulated cluster " << state.name << ", written by `dmlbench cluster up`.\n"
       << "# [emulated_cluster] is its state; `dmlbench cluster down` removes it all.\n"
       << inventory << "\n";
  return text.str();
}

void WriteClusterFile(const std::string& path, const std::string& text) {
  if (const std::optional<WriteFailure> failure = ReplaceTextFile(path, text)) {
    throw ClusterError("cannot write " + failure->path + ": " + failure->reason);
  }
}

void WriteClusterState(const ClusterState& state) { WriteClusterFile(state.inventory_path(), ClusterStateText(state)); }

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
  ReadClusterTable(table, path, state);
  state.work_dir = inventory.work_dir;
  for (std::size_t i = 0; i < inventory.hosts.size(); ++i) {
    ClusterHost host = ClusterHostNamed(state.name, static_cast<int>(i) + 1, inventory.hosts[i].address);
    host.name = inventory.hosts[i].name;  // as the inventory names it
    state.hosts.push_back(host);
  }
  return state;
}

std::string ClusterNameIn(const std::string& state_dir) {
  std::error_code error;
  if (!fs::exists(fs::path(state_dir) / "inventory.toml", error)) return "";
  return LoadClusterState(state_dir).name;
}

}  // namespace dmlbench
