// Tests of orchestrator/cli/inventory_command: `inventory check` against a real sshd
// and `inventory import-ec2` on the describe-instances fixture.
#include "orchestrator/cli/commands.h"

#include <pwd.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "orchestrator/launch/ssh/inventory.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

struct Outcome {
  int status = 0;
  std::string out;
  std::string err;
};

Outcome RunCli(std::vector<std::string> args) {
  CLI::App app("dmlbench");
  AddInventoryCommands(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  Outcome outcome;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  outcome.status = ParseAndRun(app, [&] { app.parse(args); }, std::cerr);
  outcome.out = ::testing::internal::GetCapturedStdout();
  outcome.err = ::testing::internal::GetCapturedStderr();
  return outcome;
}

TEST(SshCliTest, CheckPrintsTheFactsOfEveryHost) {
  SshdFixture sshd;
  const Outcome outcome =
      RunCli({"inventory", "check", sshd.WriteInventory("hosts.toml"), "--trainer", DMLBENCH_TRAINER});
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("a (127.0.0.2): ready in "), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find(" 1 file(s) uploaded to " + sshd.dir() + "/remote-work\n"), std::string::npos);
  EXPECT_NE(outcome.out.find("b (127.0.0.3): ready in "), std::string::npos);
  EXPECT_NE(outcome.out.find("  mpi       mpirun (Open MPI) "), std::string::npos);
  EXPECT_NE(outcome.out.find("\n2 host(s) ready\n"), std::string::npos);
}

TEST(SshCliTest, ImportEc2WritesAnInventory) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string output = sshd.dir() + "/ec2.toml";
  const Outcome outcome = RunCli({"inventory", "import-ec2",
                                  std::string(DMLBENCH_SOURCE_DIR) +
                                      "/tests/orchestrator/fixtures/ec2-describe-instances.json",
                                  "-o", output, "--private", "--user", "ubuntu"});
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  const Inventory inventory = LoadInventory(output);
  ASSERT_EQ(inventory.hosts.size(), 3u);
  EXPECT_EQ(inventory.hosts[0].address, "10.0.1.11");
  EXPECT_EQ(inventory.hosts[0].user, "ubuntu");
}

TEST(SshCliTest, ImportEc2SkipsAnInstanceWithoutAnAddressAndNamesIt) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string path = sshd.dir() + "/instances.json";
  std::ofstream(path) << R"({"Reservations": [{"Instances": [
      {"InstanceId": "i-1", "PublicIpAddress": "1.2.3.4", "State": {"Name": "running"}},
      {"InstanceId": "i-2", "PrivateIpAddress": "10.0.0.2", "State": {"Name": "running"},
       "Tags": [{"Key": "Name", "Value": "worker"}]},
      {"InstanceId": "i-3", "PublicIpAddress": "1.2.3.6", "State": {"Name": "running"}}]}]})";
  const std::string output = sshd.dir() + "/ec2.toml";
  const Outcome outcome = RunCli({"inventory", "import-ec2", path, "-o", output});
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_EQ(outcome.err, "dmlbench: warning: " + path +
                             ": instance i-2 (worker) has no public IP address (use --private); skipped\n");
  const Inventory inventory = LoadInventory(output);
  ASSERT_EQ(inventory.hosts.size(), 2u);
  EXPECT_EQ(inventory.hosts[0].name, "i-1");
  EXPECT_EQ(inventory.hosts[1].name, "i-3");
}

// Error paths of inventory_command.cc follow.

TEST(SshCliTest, CheckReportsABadInventory) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string path = sshd.dir() + "/bad.toml";
  std::ofstream(path) << "format_version = 1\npassword = \"x\"\n";
  const Outcome outcome = RunCli({"inventory", "check", path});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "dmlbench: error: " + path +
                             ":2:1: 'password' is not supported: use identity_file or the ssh-agent\n"
                             "password = \"x\"\n"
                             "^\n");
}

TEST(SshCliTest, CheckReportsAnUnreachableHost) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string path = sshd.WriteInventory("hosts.toml");
  sshd.Stop();
  const Outcome outcome = RunCli({"inventory", "check", path});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "dmlbench: error: host 'a' (" + std::string(getpwuid(getuid())->pw_name) +
                             "@127.0.0.2:" + std::to_string(sshd.port()) +
                             "): connect failed: Connection refused\n");
}

TEST(SshCliTest, ImportEc2ReportsAMissingFile) {
  const Outcome outcome = RunCli({"inventory", "import-ec2", "no/such.json"});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "dmlbench: error: cannot read no/such.json\n");
}

TEST(SshCliTest, ImportEc2ReportsBadJson) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string path = sshd.dir() + "/x.json";
  std::ofstream(path) << "{\"Reservations\": []}";
  const Outcome outcome = RunCli({"inventory", "import-ec2", path});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "dmlbench: error: " + path + ": no running instances\n");
}

}  // namespace
}  // namespace dmlbench
