#include "orchestrator/launch/ssh/inventory.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {
namespace {

constexpr int kFormatVersion = 1;

const std::vector<std::string_view> kTopLevelKeys = {
    "format_version", "known_hosts", "host_key_policy", "connect_timeout_s", "ssh_config",
    "work_dir",       "mpi_args",    "max_concurrent_runs", "host",          "emulated_cluster", "system"};
const std::vector<std::string_view> kHostKeys = {"name", "address", "port", "user", "identity_file", "slots",
                                                 "tags"};
const std::vector<std::string_view> kHostKeyPolicies = {"strict", "accept-new"};

class Reader : public TomlReader {
 public:
  Reader(std::string path, std::string text) : TomlReader(std::move(path), std::move(text)) {
    base_dir_ = std::filesystem::path(this->path()).parent_path().string();
  }

  Inventory Read() const {
    const toml::table root = Parse();
    for (const auto& [key, node] : root) RefusePassword(key);
    CheckKeys(root, kTopLevelKeys, "the top level");
    Inventory inventory;
    inventory.source_path = path();
    inventory.known_hosts = ExpandLocalPath("~/.ssh/known_hosts", base_dir_);
    inventory.ssh_config = ExpandLocalPath("~/.ssh/config", base_dir_);
    CheckFormatVersion(root, kFormatVersion);
    if (const toml::node* node = root.get("known_hosts")) {
      inventory.known_hosts = ExpandLocalPath(ReadName(*node, "known_hosts"), base_dir_);
    }
    if (const toml::node* node = root.get("host_key_policy")) {
      inventory.host_key_policy = ReadChoice(*node, "host_key_policy", kHostKeyPolicies) == "strict"
                                      ? HostKeyPolicy::kStrict
                                      : HostKeyPolicy::kAcceptNew;
    }
    if (const toml::node* node = root.get("connect_timeout_s")) {
      inventory.connect_timeout_s = ReadNumber(*node, "connect_timeout_s", 0, /*inclusive=*/false);
    }
    if (const toml::node* node = root.get("ssh_config")) {
      inventory.ssh_config = ExpandLocalPath(ReadString(*node, "ssh_config"), base_dir_);
    }
    if (const toml::node* node = root.get("work_dir")) inventory.work_dir = ReadName(*node, "work_dir");
    if (const toml::node* node = root.get("mpi_args")) inventory.mpi_args = ReadStrings(*node, "mpi_args");
    if (const toml::node* node = root.get("max_concurrent_runs")) {
      inventory.max_concurrent_runs = static_cast<int>(ReadInteger(*node, "max_concurrent_runs", 1, 1024));
    }
    if (const toml::node* node = root.get("system")) {
      inventory.system = ReadString(*node, "system");
      if (!IsValidSystemName(inventory.system)) {
        Fail(*node, "system must be 1 to " + std::to_string(kMaxSystemNameLength) +
                        " printable characters, not starting or ending with a space, got " + Quoted(inventory.system));
      }
    }
    std::map<std::string, toml::source_region> seen;
    for (const toml::table* host : TableArray(root, "host")) inventory.hosts.push_back(Host(*host, seen));
    if (const toml::table* cluster = OptionalTable(root, "emulated_cluster")) {
      std::ostringstream out;
      out << toml::toml_formatter(*cluster);
      inventory.emulated_cluster_toml = out.str();
    }
    if (inventory.hosts.empty()) Fail(root.source(), "no [[host]] entries");
    return inventory;
  }

 protected:
  [[noreturn]] void Throw(const std::string& message, const std::string& excerpt) const override {
    throw InventoryError(message, excerpt);
  }

 private:
  // A password is never read, whatever table it is in.
  void RefusePassword(const toml::key& key) const {
    if (key.str() == "password") {
      Fail(key.source(), "'password' is not supported: use identity_file or the ssh-agent");
    }
  }

  // A value that reaches ssh and mpirun's hostfile as one word: not empty,
  // not an option ("-oProxyCommand=..." would run a command), no white space
  // or control characters (a hostfile line is split at them).
  std::string ReadCommandWord(const toml::node& node, std::string_view name) const {
    std::string value = ReadName(node, name);
    if (value.front() == '-') {
      Fail(node, std::string(name) + " must not begin with '-' (ssh would read it as an option), got " + Quoted(value));
    }
    for (const char c : value) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte <= 0x20 || byte == 0x7f) {
        Fail(node, std::string(name) + " must not hold white space or control characters, got " + Quoted(value));
      }
    }
    return value;
  }

  InventoryHost Host(const toml::table& table, std::map<std::string, toml::source_region>& seen) const {
    for (const auto& [key, node] : table) RefusePassword(key);
    CheckKeys(table, kHostKeys, "[[host]]");
    InventoryHost host;
    const toml::node* name = table.get("name");
    if (name == nullptr) Fail(table.source(), "[[host]] needs a 'name'");
    host.name = ReadName(*name, "name");
    const toml::node* address = table.get("address");
    if (address == nullptr) Fail(table.source(), "host '" + host.name + "' needs an 'address'");
    host.address = ReadCommandWord(*address, "address");
    if (const toml::node* node = table.get("port")) host.port = static_cast<int>(ReadInteger(*node, "port", 1, 65535));
    if (const toml::node* node = table.get("user")) host.user = ReadCommandWord(*node, "user");
    if (const toml::node* node = table.get("identity_file")) {
      host.identity_file = ExpandLocalPath(ReadString(*node, "identity_file"), base_dir_);
    }
    if (const toml::node* node = table.get("slots")) host.slots = static_cast<int>(ReadInteger(*node, "slots", 1, 1024));
    if (const toml::table* tags = OptionalTable(table, "tags")) {
      for (const auto& [tag_key, tag_value] : *tags) {
        RefusePassword(tag_key);
        host.tags[std::string(tag_key.str())] = ReadString(tag_value, "tags." + std::string(tag_key.str()));
      }
    }
    const auto [first, inserted] = seen.emplace(host.name, table.source());
    if (!inserted) {
      Fail(table.source(), "duplicate host name '" + host.name + "' (first at line " +
                               std::to_string(first->second.begin.line) + ")");
    }
    return host;
  }

  std::string base_dir_;
};

std::string HomeDirectory() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  if (const passwd* entry = getpwuid(getuid()); entry != nullptr) return entry->pw_dir;
  return "/";
}

}  // namespace

std::string ExpandLocalPath(const std::string& path, const std::string& base_dir) {
  if (path.empty()) return path;
  if (path == "~") return HomeDirectory();
  if (path.rfind("~/", 0) == 0) return HomeDirectory() + path.substr(1);
  if (path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

Inventory ParseInventory(const std::string& text, const std::string& path) {
  return Reader(path, text).Read();
}

Inventory LoadInventory(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InventoryError(path + ": cannot open inventory file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseInventory(text.str(), path);
}

}  // namespace dmlbench
