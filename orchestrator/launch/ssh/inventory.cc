#include "orchestrator/launch/ssh/inventory.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

namespace dmlbench {
namespace {

constexpr int kFormatVersion = 1;

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    base_dir_ = std::filesystem::path(path).parent_path().string();
  }

  [[noreturn]] void Fail(const toml::source_region& where, const std::string& message) const {
    std::ostringstream out;
    out << path_ << ':' << where.begin.line << ':' << where.begin.column << ": " << message;
    throw InventoryError(out.str());
  }

  static std::string TypeName(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "an array";
      case toml::node_type::table: return "a table";
      default: return "a date/time";
    }
  }

  std::string String(const toml::node& node, std::string_view key) const {
    if (const auto* value = node.as_string()) return value->get();
    Fail(node.source(), "'" + std::string(key) + "' must be a string, got " + TypeName(node));
  }

  std::int64_t Integer(const toml::node& node, std::string_view key, std::int64_t min,
                       std::int64_t max) const {
    const auto* value = node.as_integer();
    if (value == nullptr) {
      Fail(node.source(), "'" + std::string(key) + "' must be an integer, got " + TypeName(node));
    }
    if (value->get() < min || value->get() > max) {
      Fail(node.source(), "'" + std::string(key) + "' must be between " + std::to_string(min) +
                              " and " + std::to_string(max) + ", got " +
                              std::to_string(value->get()));
    }
    return value->get();
  }

  double PositiveNumber(const toml::node& node, std::string_view key) const {
    double number = 0;
    if (const auto* integer = node.as_integer()) {
      number = static_cast<double>(integer->get());
    } else if (const auto* floating = node.as_floating_point()) {
      number = floating->get();
    } else {
      Fail(node.source(), "'" + std::string(key) + "' must be a number, got " + TypeName(node));
    }
    if (!(number > 0)) {
      std::ostringstream shown;
      shown << number;
      Fail(node.source(), "'" + std::string(key) + "' must be greater than 0, got " + shown.str());
    }
    return number;
  }

  // A password is never read, whatever table it is in.
  void RefusePassword(const toml::key& key) const {
    if (key.str() == "password") {
      Fail(key.source(), "'password' is not supported: use identity_file or the ssh-agent");
    }
  }

  InventoryHost Host(const toml::table& table, std::map<std::string, toml::source_region>& seen) const {
    InventoryHost host;
    bool has_name = false;
    bool has_address = false;
    for (const auto& [key, node] : table) {
      RefusePassword(key);
      const std::string_view name = key.str();
      if (name == "name") {
        host.name = String(node, name);
        if (host.name.empty()) Fail(node.source(), "'name' must not be empty");
        has_name = true;
      } else if (name == "address") {
        host.address = String(node, name);
        if (host.address.empty()) Fail(node.source(), "'address' must not be empty");
        has_address = true;
      } else if (name == "port") {
        host.port = static_cast<int>(Integer(node, name, 1, 65535));
      } else if (name == "user") {
        host.user = String(node, name);
      } else if (name == "identity_file") {
        host.identity_file = ExpandLocalPath(String(node, name), base_dir_);
      } else if (name == "slots") {
        host.slots = static_cast<int>(Integer(node, name, 1, 1024));
      } else if (name == "tags") {
        const auto* tags = node.as_table();
        if (tags == nullptr) Fail(node.source(), "'tags' must be a table, got " + TypeName(node));
        for (const auto& [tag_key, tag_value] : *tags) {
          RefusePassword(tag_key);
          host.tags[std::string(tag_key.str())] =
              String(tag_value, "tags." + std::string(tag_key.str()));
        }
      } else {
        Fail(key.source(), "unknown key '" + std::string(name) + "' in [[host]]");
      }
    }
    if (!has_name) Fail(table.source(), "[[host]] needs a 'name'");
    if (!has_address) Fail(table.source(), "host '" + host.name + "' needs an 'address'");
    const auto [first, inserted] = seen.emplace(host.name, table.source());
    if (!inserted) {
      Fail(table.source(), "duplicate host name '" + host.name + "' (first at line " +
                               std::to_string(first->second.begin.line) + ")");
    }
    return host;
  }

  Inventory Read(const std::string& text) const {
    toml::table root;
    try {
      root = toml::parse(text, path_);
    } catch (const toml::parse_error& error) {
      Fail(error.source(), std::string(error.description()));
    }
    Inventory inventory;
    inventory.source_path = path_;
    inventory.known_hosts = ExpandLocalPath("~/.ssh/known_hosts", base_dir_);
    inventory.ssh_config = ExpandLocalPath("~/.ssh/config", base_dir_);
    bool has_version = false;
    std::map<std::string, toml::source_region> seen;
    for (const auto& [key, node] : root) {
      RefusePassword(key);
      const std::string_view name = key.str();
      if (name == "format_version") {
        const auto* value = node.as_integer();
        if (value == nullptr || value->get() != kFormatVersion) {
          std::ostringstream got;
          if (value != nullptr) {
            got << value->get();
          } else {
            got << TypeName(node);
          }
          Fail(node.source(), "format_version must be 1, got " + got.str());
        }
        has_version = true;
      } else if (name == "known_hosts") {
        inventory.known_hosts = ExpandLocalPath(String(node, name), base_dir_);
        if (inventory.known_hosts.empty()) Fail(node.source(), "'known_hosts' must not be empty");
      } else if (name == "host_key_policy") {
        const std::string policy = String(node, name);
        if (policy == "strict") {
          inventory.host_key_policy = HostKeyPolicy::kStrict;
        } else if (policy == "accept-new") {
          inventory.host_key_policy = HostKeyPolicy::kAcceptNew;
        } else {
          Fail(node.source(), "host_key_policy must be \"strict\" or \"accept-new\", got \"" +
                                  policy + "\"");
        }
      } else if (name == "connect_timeout_s") {
        inventory.connect_timeout_s = PositiveNumber(node, name);
      } else if (name == "ssh_config") {
        inventory.ssh_config = ExpandLocalPath(String(node, name), base_dir_);
      } else if (name == "work_dir") {
        inventory.work_dir = String(node, name);
        if (inventory.work_dir.empty()) Fail(node.source(), "'work_dir' must not be empty");
      } else if (name == "mpi_args") {
        const auto* args = node.as_array();
        if (args == nullptr) Fail(node.source(), "'mpi_args' must be an array of strings, got " + TypeName(node));
        for (const auto& arg : *args) inventory.mpi_args.push_back(String(arg, "mpi_args"));
      } else if (name == "max_concurrent_runs") {
        inventory.max_concurrent_runs = static_cast<int>(Integer(node, name, 1, 1024));
      } else if (name == "host") {
        const auto* hosts = node.as_array();
        if (hosts == nullptr || !hosts->is_array_of_tables()) {
          Fail(node.source(), "'host' must be an array of tables ([[host]])");
        }
        for (const auto& host : *hosts) inventory.hosts.push_back(Host(*host.as_table(), seen));
      } else if (name == "emulated_cluster") {
        const auto* table = node.as_table();
        if (table == nullptr) Fail(node.source(), "'emulated_cluster' must be a table, got " + TypeName(node));
        std::ostringstream out;
        out << toml::toml_formatter(*table);
        inventory.emulated_cluster_toml = out.str();
      } else {
        Fail(key.source(), "unknown key '" + std::string(name) + "'");
      }
    }
    if (!has_version) Fail(root.source(), "format_version is missing (expected 1)");
    if (inventory.hosts.empty()) Fail(root.source(), "no [[host]] entries");
    return inventory;
  }

 private:
  std::string path_;
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
  return Reader(path).Read(text);
}

Inventory LoadInventory(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InventoryError(path + ": cannot open inventory file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseInventory(text.str(), path);
}

}  // namespace dmlbench
