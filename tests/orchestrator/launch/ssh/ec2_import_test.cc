// Tests of orchestrator/launch/ssh/ec2_import on a describe-instances fixture.
#include "orchestrator/launch/ssh/ec2_import.h"

#include <gtest/gtest.h>

#include "orchestrator/launch/ssh/inventory.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

const std::string kFixture =
    std::string(DMLBENCH_SOURCE_DIR) + "/tests/orchestrator/fixtures/ec2-describe-instances.json";

Inventory Import(const Ec2ImportOptions& options) {
  const Ec2Import imported =
      ImportEc2Inventory(testing::SshdFixture::ReadFile(kFixture), "instances.json", options);
  EXPECT_TRUE(imported.skipped.empty());
  return ParseInventory(imported.inventory_toml, "imported.toml");
}

std::string ErrorOf(const std::string& json, const Ec2ImportOptions& options = {}) {
  try {
    ImportEc2Inventory(json, "instances.json", options);
  } catch (const Ec2ImportError& error) {
    return error.what();
  }
  return "imported";
}

TEST(Ec2ImportTest, RunningInstancesWithPublicAddressesAndPlacementTags) {
  const Inventory inventory = Import({});
  ASSERT_EQ(inventory.hosts.size(), 3u);
  const InventoryHost& first = inventory.hosts[0];
  EXPECT_EQ(first.name, "worker-i-0a1b2c3d4e5f60001");
  EXPECT_EQ(first.address, "54.0.0.11");
  EXPECT_EQ(first.user, "");
  EXPECT_EQ(first.slots, 1);
  EXPECT_EQ(first.tags, (std::map<std::string, std::string>{
                            {"provider", "ec2"},
                            {"instance_id", "i-0a1b2c3d4e5f60001"},
                            {"instance_type", "c5.large"},
                            {"availability_zone", "us-east-1a"},
                            {"region", "us-east-1"},
                            {"placement_group", "dmlbench-pg"}}));
  EXPECT_EQ(inventory.hosts[1].name, "worker-i-0a1b2c3d4e5f60002");
  const InventoryHost& ps = inventory.hosts[2];
  EXPECT_EQ(ps.name, "ps-0");
  EXPECT_EQ(ps.address, "34.0.0.7");
  EXPECT_EQ(ps.tags.at("instance_type"), "m5.xlarge");
  EXPECT_EQ(ps.tags.at("region"), "eu-west-1");
  EXPECT_EQ(ps.tags.count("placement_group"), 0u);
  EXPECT_EQ(inventory.host_key_policy, HostKeyPolicy::kStrict);
}

TEST(Ec2ImportTest, PrivateAddressesAndUser) {
  const Inventory inventory = Import({true, "ec2-user"});
  ASSERT_EQ(inventory.hosts.size(), 3u);
  EXPECT_EQ(inventory.hosts[0].address, "10.0.1.11");
  EXPECT_EQ(inventory.hosts[2].address, "10.0.2.7");
  EXPECT_EQ(inventory.hosts[0].user, "ec2-user");
}

TEST(Ec2ImportTest, InstanceWithoutNameTagIsNamedByItsId) {
  const std::string json = R"({"Reservations": [{"Instances": [{"InstanceId": "i-1",
      "InstanceType": "t3.micro", "PublicIpAddress": "1.2.3.4", "State": {"Name": "running"}}]}]})";
  const Inventory inventory = ParseInventory(ImportEc2Inventory(json, "x.json", {}).inventory_toml, "x.toml");
  ASSERT_EQ(inventory.hosts.size(), 1u);
  EXPECT_EQ(inventory.hosts[0].name, "i-1");
  EXPECT_EQ(inventory.hosts[0].tags.count("region"), 0u);
}

TEST(Ec2ImportTest, InstancesWithoutTheAddressAreLeftOutAndNamed) {
  const std::string json = R"({"Reservations": [{"Instances": [
      {"InstanceId": "i-1", "PublicIpAddress": "1.2.3.4", "State": {"Name": "running"}},
      {"InstanceId": "i-2", "State": {"Name": "running"}, "Tags": [{"Key": "Name", "Value": "ps"}]},
      {"InstanceId": "i-3", "State": {"Name": "running"}}]}]})";
  const Ec2Import imported = ImportEc2Inventory(json, "x.json", {});
  EXPECT_EQ(imported.skipped, (std::vector<std::string>{
                                  "instance i-2 (ps) has no public IP address (use --private)",
                                  "instance i-3 has no public IP address (use --private)"}));
  EXPECT_NE(imported.inventory_toml.find("# Left out, without that address: i-2, i-3\n"), std::string::npos);
  const Inventory inventory = ParseInventory(imported.inventory_toml, "x.toml");
  ASSERT_EQ(inventory.hosts.size(), 1u);
  EXPECT_EQ(inventory.hosts[0].address, "1.2.3.4");
}

// Error paths of ec2_import.cc follow.

TEST(Ec2ImportTest, NoPublicAddress) {
  EXPECT_EQ(ErrorOf(R"({"Reservations": [{"Instances": [{"InstanceId": "i-9",
      "PrivateIpAddress": "10.0.0.9", "State": {"Name": "running"}}]}]})"),
            "instances.json: no running instance has a public IP address (use --private); without one: i-9");
}

TEST(Ec2ImportTest, NoPrivateAddress) {
  EXPECT_EQ(ErrorOf(R"({"Reservations": [{"Instances": [{"InstanceId": "i-9",
      "State": {"Name": "running"}}]}]})", {true, ""}),
            "instances.json: no running instance has a private IP address; without one: i-9");
}

TEST(Ec2ImportTest, NoRunningInstance) {
  EXPECT_EQ(ErrorOf(R"({"Reservations": [{"Instances": [{"InstanceId": "i-9",
      "PublicIpAddress": "1.2.3.4", "State": {"Name": "stopped"}}]}]})"),
            "instances.json: no running instances");
}

TEST(Ec2ImportTest, NotDescribeInstancesOutput) {
  EXPECT_EQ(ErrorOf(R"({"Instances": []})"),
            "instances.json: not `aws ec2 describe-instances` output (no \"Reservations\" array)");
}

TEST(Ec2ImportTest, InvalidJson) {
  EXPECT_EQ(ErrorOf("{"),
            "instances.json: not valid JSON: [json.exception.parse_error.101] parse error at line 1, "
            "column 2: syntax error while parsing object key - unexpected end of input; expected "
            "string literal");
}

}  // namespace
}  // namespace dmlbench
