#include "orchestrator/launch/ssh/ec2_import.h"

#include <map>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace dmlbench {
namespace {

struct Instance {
  std::string id;
  std::string name;   // Name tag, "" if none
  std::string address;
  std::string type;
  std::string zone;
  std::string group;
};

std::string StringAt(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Ec2Import ImportEc2Inventory(const std::string& json_text, const std::string& source_name,
                             const Ec2ImportOptions& options) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& error) {
    throw Ec2ImportError(source_name + ": not valid JSON: " + error.what());
  }
  if (!root.is_object() || !root.contains("Reservations") || !root["Reservations"].is_array()) {
    throw Ec2ImportError(source_name +
                         ": not `aws ec2 describe-instances` output (no \"Reservations\" array)");
  }
  const std::string wanted = options.private_address ? "private IP address" : "public IP address (use --private)";
  Ec2Import result;
  std::string without;  // instance ids, for the error when none is left
  std::vector<Instance> instances;
  for (const nlohmann::json& reservation : root["Reservations"]) {
    if (!reservation.contains("Instances") || !reservation["Instances"].is_array()) continue;
    for (const nlohmann::json& item : reservation["Instances"]) {
      if (!item.contains("State") || StringAt(item["State"], "Name") != "running") continue;
      Instance instance;
      instance.id = StringAt(item, "InstanceId");
      instance.type = StringAt(item, "InstanceType");
      if (item.contains("Placement")) {
        instance.zone = StringAt(item["Placement"], "AvailabilityZone");
        instance.group = StringAt(item["Placement"], "GroupName");
      }
      if (item.contains("Tags") && item["Tags"].is_array()) {
        for (const nlohmann::json& tag : item["Tags"]) {
          if (StringAt(tag, "Key") == "Name") instance.name = StringAt(tag, "Value");
        }
      }
      instance.address = StringAt(item, options.private_address ? "PrivateIpAddress" : "PublicIpAddress");
      if (instance.address.empty()) {
        result.skipped.push_back("instance " + instance.id + (instance.name.empty() ? "" : " (" + instance.name + ")") +
                                 " has no " + wanted);
        without += (without.empty() ? "" : ", ") + instance.id;
        continue;
      }
      instances.push_back(instance);
    }
  }
  if (instances.empty() && !without.empty()) {
    throw Ec2ImportError(source_name + ": no running instance has a " + wanted + "; without one: " + without);
  }
  if (instances.empty()) throw Ec2ImportError(source_name + ": no running instances");

  std::map<std::string, int> name_count;
  for (const Instance& instance : instances) ++name_count[instance.name];
  toml::array hosts;
  for (const Instance& instance : instances) {
    std::string name = instance.name.empty() ? instance.id : instance.name;
    if (!instance.name.empty() && name_count[instance.name] > 1) name += "-" + instance.id;
    toml::table tags{{"provider", "ec2"}, {"instance_id", instance.id}, {"instance_type", instance.type}};
    if (!instance.zone.empty()) {
      tags.insert("availability_zone", instance.zone);
      // A zone is its region plus one letter ("us-east-1a").
      tags.insert("region", instance.zone.substr(0, instance.zone.size() - 1));
    }
    if (!instance.group.empty()) tags.insert("placement_group", instance.group);
    toml::table host{{"name", name}, {"address", instance.address}, {"slots", 1}};
    if (!options.user.empty()) host.insert("user", options.user);
    host.insert("tags", std::move(tags));
    hosts.push_back(std::move(host));
  }
  toml::table inventory{{"format_version", 1},
                        {"known_hosts", "~/.ssh/known_hosts"},
                        {"host_key_policy", "strict"},
                        {"host", std::move(hosts)}};
  std::ostringstream out;
  out << "# From " << source_name << " (aws ec2 describe-instances), "
      << (options.private_address ? "private" : "public") << " addresses.\n";
  if (!without.empty()) out << "# Left out, without that address: " << without << "\n";
  out << "# Add the hosts' keys to known_hosts, or set host_key_policy = \"accept-new\" once.\n"
      << toml::toml_formatter(inventory) << "\n";
  result.inventory_toml = out.str();
  return result;
}

}  // namespace dmlbench
