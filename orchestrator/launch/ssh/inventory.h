// Inventory: reads a host inventory (TOML, format in schemas/inventory.md)
// into typed structs — the one place inventory TOML becomes options. Local
// paths are resolved here (~ and relative to the file); remote paths are left
// for the remote shell. Does not connect anywhere. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_INVENTORY_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_INVENTORY_H_

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

// Any invalid inventory. what() is the whole message, located:
// "hosts.toml:7:1: 'password' is not supported: use identity_file or the ssh-agent".
class InventoryError : public LocatedError {
 public:
  explicit InventoryError(const std::string& message, std::string excerpt = "")
      : LocatedError(message, std::move(excerpt)) {}
};

enum class HostKeyPolicy {
  kStrict,     // an unknown host key is refused
  kAcceptNew,  // an unknown host key is appended to known_hosts; changed keys still refused
};

struct InventoryHost {
  std::string name;           // unique within the inventory
  std::string address;        // IP, DNS name or a Host alias of the ssh config
  int port = 0;               // 0 = from the ssh config, else 22
  std::string user;           // "" = from the ssh config, else the local user name
  std::string identity_file;  // absolute local path; "" = ssh-agent / ssh config keys
  int slots = 1;              // MPI ranks this host may run
  std::map<std::string, std::string> tags;  // free tags (provider, instance_type, ...)
};

struct Inventory {
  std::string source_path;                 // as given
  std::string known_hosts;                 // absolute local path
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  double connect_timeout_s = 10;
  std::string ssh_config;                  // absolute local path; "" = none
  std::string work_dir = "~/.cache/dmlbench";  // remote; "~/" is the remote home
  std::vector<std::string> mpi_args;       // extra mpirun arguments, each one word
  int max_concurrent_runs = 1;             // Launch() calls at once, on disjoint hosts
  std::string system;                      // the name of these hosts as a system (runs' keys); "" = default
  std::vector<InventoryHost> hosts;        // in file order, at least one
  // The [emulated_cluster] table, untouched by this reader, as TOML text
  // (re-emitted by toml++; parses back to the same values); "" when absent.
  std::string emulated_cluster_toml;
};

// Reads and validates. Throws InventoryError.
Inventory LoadInventory(const std::string& path);
// Same, from text in memory; `path` names the file in messages and is the
// base of relative local paths.
Inventory ParseInventory(const std::string& text, const std::string& path);

// "~" and "~/x" become the local home directory; a relative path is taken
// relative to base_dir; "" stays "".
std::string ExpandLocalPath(const std::string& path, const std::string& base_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_INVENTORY_H_
