#include "orchestrator/cli/launcher_factory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/sha256.h"
#include "orchestrator/launch/cluster/cluster_state.h"

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/cluster_launcher.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/slurm/slurm_launcher.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {
namespace {

// The emulated cluster's state directory: where its inventory lives.
std::string ClusterStateDir(const ExecutionOptions& execution) {
  const std::string state_dir = execution.inventory.empty()
                                    ? std::string(kClusterStateDir)
                                    : std::filesystem::path(execution.inventory).parent_path().string();
  return state_dir.empty() ? "." : state_dir;
}

// <this user's cache directory>/dmlbench/<name>: $XDG_CACHE_HOME when set
// to an absolute path, else ~/.cache. A directory of this user's, never a
// shared one such as /tmp.
std::string UserCacheDir(const std::string& name) {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && *cache == '/') return std::string(cache) + "/dmlbench/" + name;
  return ExpandLocalPath("~/.cache/dmlbench/" + name, "");
}

// Where this machine keeps the SSH hosts' lock files.
std::string HostLockDir() { return UserCacheDir("host-locks"); }

// "alice@10.0.0.1:22.lock"; characters a file name cannot hold become '_'.
std::string HostLockName(const InventoryHost& host) {
  std::string name = (host.user.empty() ? "" : host.user + "@") + host.address + ":" +
                     (host.port > 0 ? std::to_string(host.port) : "config");
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name + ".lock";
}

}  // namespace

std::unique_ptr<HostPoolLock> LockHostPool(const ExecutionOptions& execution, const std::string& db_path) {
  const std::string holder = SweepHolderText(db_path);
  switch (execution.provider) {
    case Provider::kLocal:
      return nullptr;
    case Provider::kSlurm:  // the scheduler gives each allocation its nodes alone
      return nullptr;
    case Provider::kSsh: {
      const Inventory inventory = LoadInventory(execution.inventory);
      std::vector<std::string> files;
      std::string names;
      for (const InventoryHost& host : inventory.hosts) {
        files.push_back(HostLockDir() + "/" + HostLockName(host));
        names += (names.empty() ? "" : ", ") + host.name;
      }
      return std::make_unique<HostPoolLock>(files, holder, "the hosts of " + execution.inventory + " (" + names + ")");
    }
    case Provider::kCluster: {
      const std::string state_dir = ClusterStateDir(execution);
      // A cluster that is not up is refused by its launcher, with the command that starts it.
      if (!std::filesystem::is_directory(state_dir)) return nullptr;
      return std::make_unique<HostPoolLock>(std::vector<std::string>{state_dir + "/sweep.lock"}, holder,
                                            "the emulated cluster in " + state_dir);
    }
  }
  return nullptr;
}

std::unique_ptr<Launcher> MakeLauncher(const ExecutionOptions& execution, const LauncherPaths& paths) {
  switch (execution.provider) {
    case Provider::kLocal: {
      LocalLauncherOptions options;
      options.trainer = paths.trainer;
      options.mpirun = paths.mpirun;
      // This user's, on this machine: decoded by the first run, reused by the next.
      options.dataset_cache_dir = UserCacheDir("dataset-cache");
      return std::make_unique<LocalLauncher>(options);
    }
    case Provider::kSsh:
      return MakeSshLauncher(execution.inventory, paths.trainer, paths.dataset_dir);
    case Provider::kCluster:
      return MakeClusterLauncher(ClusterStateDir(execution), paths.trainer, paths.dataset_dir, paths.mpirun);
    case Provider::kSlurm: {
      SlurmLauncherOptions options;
      options.slurm = execution.slurm;
      options.trainer = paths.trainer;
      options.mpirun = paths.mpirun;
      // In the work directory the SSH provider uses by default, under this
      // user's home as the nodes see it (the same path on a cluster's nodes;
      // each emulated host its own).
      options.dataset_cache_dir = ExpandLocalPath("~/.cache/dmlbench/dataset-cache", "");
      if (!paths.db.empty()) options.job_name = SlurmJobName(paths.db);
      return std::make_unique<SlurmLauncher>(options);
    }
  }
  throw LaunchError("provider '" + std::string(Text(execution.provider)) + "' is not available in this build");
}

namespace {

std::string MachineName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

// `name` when short enough, else its start, the count of what was cut and a
// hash of the whole, together kMaxSystemNameLength characters at most.
std::string Bounded(const std::string& name) {
  if (name.size() <= kMaxSystemNameLength) return name;
  const std::string tail = "... #" + Sha256Hex(name).substr(0, 12);
  return name.substr(0, kMaxSystemNameLength - tail.size()) + tail;
}

}  // namespace

std::string SystemOf(const ExecutionOptions& execution) {
  if (!execution.system.empty()) return execution.system;
  switch (execution.provider) {
    case Provider::kLocal:
      return Bounded("local/" + MachineName());
    case Provider::kSlurm:
      return Bounded("slurm/" + MachineName() + "/" +
                     (execution.slurm.partition.empty() ? "default" : execution.slurm.partition));
    case Provider::kSsh: {
      const Inventory inventory = LoadInventory(execution.inventory);
      if (!inventory.system.empty()) return inventory.system;
      std::vector<std::string> names;
      for (const InventoryHost& host : inventory.hosts) names.push_back(host.name);
      std::sort(names.begin(), names.end());
      std::string joined;
      for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
      return Bounded("ssh/" + joined);
    }
    case Provider::kCluster: {
      const std::string state_dir = ClusterStateDir(execution);
      std::string name = "main";
      if (std::filesystem::exists(state_dir + "/inventory.toml")) {
        const Inventory inventory = LoadInventory(state_dir + "/inventory.toml");
        if (!inventory.system.empty()) return inventory.system;
        name = LoadClusterState(state_dir).name;
      }
      return Bounded("cluster/" + MachineName() + "/" + name);
    }
  }
  return "";
}

std::optional<HostSlots> SlotsOf(const ExecutionOptions& execution) {
  std::string inventory_path;
  switch (execution.provider) {
    case Provider::kLocal:
    case Provider::kSlurm:  // Slurm places the ranks; it refuses a run larger than its nodes
      return std::nullopt;
    case Provider::kSsh:
      inventory_path = execution.inventory;
      break;
    case Provider::kCluster: {
      ClusterState state;
      state.state_dir = ClusterStateDir(execution);
      inventory_path = state.inventory_path();
      if (!std::filesystem::exists(inventory_path)) return std::nullopt;
      break;
    }
  }
  HostSlots hosts;
  hosts.source = inventory_path;
  for (const InventoryHost& host : LoadInventory(inventory_path).hosts) hosts.slots += host.slots;
  return hosts;
}

}  // namespace dmlbench
