// Ec2Import: turns the JSON that `aws ec2 describe-instances` prints into an
// inventory (schemas/inventory.md): running instances only, their public or
// private address, instance type, region/zone and placement group as tags.
// Does not call AWS or connect to the instances. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_EC2_IMPORT_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_EC2_IMPORT_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"

namespace dmlbench {

// Input that is not describe-instances output, or no running instance with
// the requested address. what(): "instances.json: no running instance has a
// public IP address (use --private); without one: i-0abc".
class Ec2ImportError : public Error {
 public:
  using Error::Error;
};

struct Ec2ImportOptions {
  bool private_address = false;  // PrivateIpAddress instead of PublicIpAddress
  std::string user;              // login user of the image (e.g. "ec2-user", "ubuntu"); "" = ssh config
};

struct Ec2Import {
  std::string inventory_toml;
  // One line per running instance left out for want of the requested
  // address: "instance i-0abc (worker) has no public IP address (use --private)".
  std::vector<std::string> skipped;
};

// Inventory TOML for every running instance with the requested address, in
// the order of the input; the others are listed in `skipped` (and in the
// TOML's header comment). Hosts are named by their Name tag (made unique
// with the instance id when several share it) or else by instance id.
// `source_name` is used in messages.
Ec2Import ImportEc2Inventory(const std::string& json_text, const std::string& source_name,
                             const Ec2ImportOptions& options);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_EC2_IMPORT_H_
