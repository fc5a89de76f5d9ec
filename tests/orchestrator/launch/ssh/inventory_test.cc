// Tests of orchestrator/launch/ssh/inventory: the schema of schemas/inventory.md.
#include "orchestrator/launch/ssh/inventory.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

const char* kMinimal = R"(format_version = 1
[[host]]
name = "a"
address = "10.0.0.1"
)";

std::string ErrorOf(const std::string& text) {
  try {
    ParseInventory(text, "inv/hosts.toml");
  } catch (const InventoryError& error) {
    return error.what();
  }
  return "parsed";
}

TEST(InventoryTest, ReadsEveryKey) {
  const Inventory inventory = ParseInventory(R"(format_version = 1
known_hosts = "keys/known_hosts"
host_key_policy = "accept-new"
connect_timeout_s = 2.5
ssh_config = ""
work_dir = "/srv/dmlbench"
mpi_args = ["--mca", "btl", "tcp,self"]
max_concurrent_runs = 2

[[host]]
name = "worker-1"
address = "10.0.0.11"
port = 2222
user = "admin"
identity_file = "~/.ssh/id_ed25519"
slots = 4
tags = { provider = "ec2", instance_type = "c5.large" }

[[host]]
name = "worker-2"
address = "10.0.0.12"

[emulated_cluster]
prefix = "dmlb-1"
hosts = ["a", "b"]
)", "inv/hosts.toml");
  const std::string home = std::getenv("HOME");
  EXPECT_EQ(inventory.known_hosts, "inv/keys/known_hosts");
  EXPECT_EQ(inventory.host_key_policy, HostKeyPolicy::kAcceptNew);
  EXPECT_DOUBLE_EQ(inventory.connect_timeout_s, 2.5);
  EXPECT_EQ(inventory.ssh_config, "");
  EXPECT_EQ(inventory.work_dir, "/srv/dmlbench");
  EXPECT_EQ(inventory.mpi_args, (std::vector<std::string>{"--mca", "btl", "tcp,self"}));
  EXPECT_EQ(inventory.max_concurrent_runs, 2);
  ASSERT_EQ(inventory.hosts.size(), 2u);
  const InventoryHost& first = inventory.hosts[0];
  EXPECT_EQ(first.name, "worker-1");
  EXPECT_EQ(first.address, "10.0.0.11");
  EXPECT_EQ(first.port, 2222);
  EXPECT_EQ(first.user, "admin");
  EXPECT_EQ(first.identity_file, home + "/.ssh/id_ed25519");
  EXPECT_EQ(first.slots, 4);
  EXPECT_EQ(first.tags, (std::map<std::string, std::string>{{"provider", "ec2"}, {"instance_type", "c5.large"}}));
  const InventoryHost& second = inventory.hosts[1];
  EXPECT_EQ(second.port, 0);
  EXPECT_EQ(second.user, "");
  EXPECT_EQ(second.identity_file, "");
  EXPECT_EQ(second.slots, 1);
  EXPECT_EQ(inventory.emulated_cluster_toml, "hosts = [ 'a', 'b' ]\nprefix = 'dmlb-1'");
}

TEST(InventoryTest, DefaultsFollowTheSchema) {
  const Inventory inventory = ParseInventory(kMinimal, "hosts.toml");
  const std::string home = std::getenv("HOME");
  EXPECT_EQ(inventory.known_hosts, home + "/.ssh/known_hosts");
  EXPECT_EQ(inventory.ssh_config, home + "/.ssh/config");
  EXPECT_EQ(inventory.host_key_policy, HostKeyPolicy::kStrict);
  EXPECT_DOUBLE_EQ(inventory.connect_timeout_s, 10);
  EXPECT_EQ(inventory.work_dir, "~/.cache/dmlbench");
  EXPECT_EQ(inventory.max_concurrent_runs, 1);
  EXPECT_EQ(inventory.emulated_cluster_toml, "");
  EXPECT_EQ(inventory.system, "");
}

TEST(InventoryTest, SystemNamesTheHostsAsASystem) {
  EXPECT_EQ(ParseInventory(std::string("system = \"lab rack 3\"\n") + kMinimal, "hosts.toml").system, "lab rack 3");
  EXPECT_EQ(ErrorOf(std::string("system = \" \"\n") + kMinimal),
            "inv/hosts.toml:1:10: system must be 1 to 128 printable characters, not starting or ending with a space, "
            "got \" \"");
}

TEST(InventoryTest, ExpandLocalPath) {
  const std::string home = std::getenv("HOME");
  EXPECT_EQ(ExpandLocalPath("~", "base"), home);
  EXPECT_EQ(ExpandLocalPath("~/k", "base"), home + "/k");
  EXPECT_EQ(ExpandLocalPath("/abs/k", "base"), "/abs/k");
  EXPECT_EQ(ExpandLocalPath("rel/k", "base"), "base/rel/k");
  EXPECT_EQ(ExpandLocalPath("rel/k", ""), "rel/k");
  EXPECT_EQ(ExpandLocalPath("", "base"), "");
}

// Error paths of inventory.cc follow; each message is compared whole.

TEST(InventoryTest, PasswordIsRefusedAtTopLevel) {
  EXPECT_EQ(ErrorOf(std::string("password = \"x\"\n") + kMinimal),
            "inv/hosts.toml:1:1: 'password' is not supported: use identity_file or the ssh-agent");
}

TEST(InventoryTest, PasswordIsRefusedInAHost) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "password = \"hunter2\"\n"),
            "inv/hosts.toml:5:1: 'password' is not supported: use identity_file or the ssh-agent");
}

TEST(InventoryTest, PasswordIsRefusedInTags) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "tags = { password = \"x\" }\n"),
            "inv/hosts.toml:5:10: 'password' is not supported: use identity_file or the ssh-agent");
}

// An address or user that ssh would read as an option ran a command
// ("-oProxyCommand=..."); one with white space splits a hostfile line.
TEST(InventoryTest, AddressThatIsAnOptionIsRefused) {
  EXPECT_EQ(ErrorOf("format_version = 1\n[[host]]\nname = \"a\"\naddress = \"-oProxyCommand=touch x\"\n"),
            "inv/hosts.toml:4:11: address must not begin with '-' (ssh would read it as an option), got "
            "\"-oProxyCommand=touch x\"");
}

TEST(InventoryTest, UserThatIsAnOptionIsRefused) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "user = \"-F/dev/null\"\n"),
            "inv/hosts.toml:5:8: user must not begin with '-' (ssh would read it as an option), got \"-F/dev/null\"");
}

TEST(InventoryTest, AddressWithWhiteSpaceOrControlCharactersIsRefused) {
  EXPECT_EQ(ErrorOf("format_version = 1\n[[host]]\nname = \"a\"\naddress = \"10.0.0.1 slots=64\"\n"),
            "inv/hosts.toml:4:11: address must not hold white space or control characters, got "
            "\"10.0.0.1 slots=64\"");
  EXPECT_EQ(ErrorOf("format_version = 1\n[[host]]\nname = \"a\"\naddress = \"h\\u001b[2Jx\"\n"),
            "inv/hosts.toml:4:11: address must not hold white space or control characters, got "
            "\"h\\u001b[2Jx\"");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "user = \"bob\\tx\"\n"),
            "inv/hosts.toml:5:8: user must not hold white space or control characters, got \"bob\\tx\"");
}

TEST(InventoryTest, TomlSyntaxError) {
  EXPECT_EQ(ErrorOf("format_version = \n"),
            "inv/hosts.toml:1:18: Error while parsing key-value pair: expected value, saw '\\n'");
}

TEST(InventoryTest, WrongFormatVersion) {
  EXPECT_EQ(ErrorOf("format_version = 2\n[[host]]\nname = \"a\"\naddress = \"b\"\n"),
            "inv/hosts.toml:1:18: format_version must be 1, got 2");
}

TEST(InventoryTest, MissingFormatVersion) {
  EXPECT_EQ(ErrorOf("[[host]]\nname = \"a\"\naddress = \"b\"\n"),
            "inv/hosts.toml:1:1: format_version is missing (expected 1)");
}

TEST(InventoryTest, NoHosts) {
  EXPECT_EQ(ErrorOf("format_version = 1\n"), "inv/hosts.toml:1:1: no [[host]] entries");
}

TEST(InventoryTest, UnknownTopLevelKey) {
  EXPECT_EQ(ErrorOf(std::string("knownhosts = \"x\"\n") + kMinimal),
            "inv/hosts.toml:1:1: unknown key 'knownhosts' in the top level, did you mean 'known_hosts'?");
}

TEST(InventoryTest, UnknownHostKey) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "adress = \"x\"\n"),
            "inv/hosts.toml:5:1: unknown key 'adress' in [[host]], did you mean 'address'?");
}

TEST(InventoryTest, BadHostKeyPolicy) {
  EXPECT_EQ(ErrorOf(std::string("host_key_policy = \"yes\"\n") + kMinimal),
            "inv/hosts.toml:1:19: host_key_policy must be one of \"strict\", \"accept-new\", got \"yes\"");
}

TEST(InventoryTest, NonPositiveTimeout) {
  EXPECT_EQ(ErrorOf(std::string("connect_timeout_s = 0\n") + kMinimal),
            "inv/hosts.toml:1:21: connect_timeout_s must be a finite number greater than 0, got 0");
}

TEST(InventoryTest, TimeoutOfTheWrongType) {
  EXPECT_EQ(ErrorOf(std::string("connect_timeout_s = \"10\"\n") + kMinimal),
            "inv/hosts.toml:1:21: connect_timeout_s must be a number, got string \"10\"");
}

TEST(InventoryTest, PortOutOfRange) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "port = 70000\n"),
            "inv/hosts.toml:5:8: port must be between 1 and 65535, got 70000");
}

TEST(InventoryTest, SlotsMustBePositive) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "slots = 0\n"),
            "inv/hosts.toml:5:9: slots must be between 1 and 1024, got 0");
}

TEST(InventoryTest, MpiArgsMustBeStrings) {
  EXPECT_EQ(ErrorOf(std::string("mpi_args = [\"--mca\", 1]\n") + kMinimal),
            "inv/hosts.toml:1:22: mpi_args must be a string, got integer 1");
}

TEST(InventoryTest, HostWithoutName) {
  EXPECT_EQ(ErrorOf("format_version = 1\n[[host]]\naddress = \"b\"\n"),
            "inv/hosts.toml:2:1: [[host]] needs a 'name'");
}

TEST(InventoryTest, HostWithoutAddress) {
  EXPECT_EQ(ErrorOf("format_version = 1\n[[host]]\nname = \"a\"\n"),
            "inv/hosts.toml:2:1: host 'a' needs an 'address'");
}

TEST(InventoryTest, DuplicateHostName) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "[[host]]\nname = \"a\"\naddress = \"c\"\n"),
            "inv/hosts.toml:5:1: duplicate host name 'a' (first at line 2)");
}

TEST(InventoryTest, TagsMustBeStrings) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "tags = { slots = 4 }\n"),
            "inv/hosts.toml:5:18: tags.slots must be a string, got integer 4");
}

TEST(InventoryTest, HostMustBeAnArrayOfTables) {
  EXPECT_EQ(ErrorOf("format_version = 1\nhost = \"a\"\n"),
            "inv/hosts.toml:2:8: host must be an array of tables ([[host]]), got string \"a\"");
}

TEST(InventoryTest, MissingFile) {
  try {
    LoadInventory("no/such/hosts.toml");
    FAIL() << "loaded a missing file";
  } catch (const InventoryError& error) {
    EXPECT_STREQ(error.what(), "no/such/hosts.toml: cannot open inventory file");
  }
}

}  // namespace
}  // namespace dmlbench
