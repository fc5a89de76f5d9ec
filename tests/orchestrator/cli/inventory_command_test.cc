// Tests of orchestrator/cli/inventory_command: `inventory check` and
// `inventory probe` against a real sshd (and real mpirun), and `inventory
// import-ec2` on the describe-instances fixture.
#include "orchestrator/cli/commands.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

struct Outcome {
  int status = 0;
  std::string out;
  std::string err;
};

// The build tree's dmlbench-linkprobe, beside the trainer.
const std::string kProbe = (std::filesystem::path(DMLBENCH_TRAINER).parent_path() / "dmlbench-linkprobe").string();

Outcome RunCli(std::vector<std::string> args) {
  CLI::App app("dmlbench");
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--db", global.db);
  AddInventoryCommands(app, global);
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

ino_t Inode(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

TEST(SshCliTest, ProbeStoresTheLinkBetweenTwoHostsUnshapedUnderTheInventorysName) {
  SshdFixture sshd;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  const std::string db = sshd.dir() + "/results.db";
  const Outcome first =
      RunCli({"inventory", "probe", inventory, "--probe", kProbe, "--seconds-per-size", "0.02", "--db", db});
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out.rfind("ssh-hosts (a,b, unshaped): alpha ", 0), 0u) << first.out;
  EXPECT_NE(first.out.find(" MB/s  23 sizes stored in " + db + "\n"), std::string::npos) << first.out;
  const std::string remote = sshd.dir() + "/remote-work/dmlbench-linkprobe";
  EXPECT_EQ(Sha256FileHex(remote), Sha256FileHex(kProbe));
  const ino_t uploaded = Inode(remote);

  // Again from b to a, named: the probe on the hosts is up to date and stays.
  const Outcome second = RunCli({"--db", db, "inventory", "probe", inventory, "--probe", kProbe,
                                 "--seconds-per-size", "0.02", "--hosts", "b,a", "--profile", "loopback"});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out.rfind("loopback (b,a, unshaped): alpha ", 0), 0u) << second.out;
  EXPECT_EQ(Inode(remote), uploaded);

  // What the model looks up for a run of this inventory: bandwidth and
  // latency 0 (unshaped), one fit per probe, calibration data.
  Store store(db);
  const QueryResult rows = store.Query(
      "SELECT profile, hosts, count(*), min(message_bytes), max(message_bytes), max(bandwidth_bits_per_s), "
      "max(latency_s), min(alpha_s) > 0, min(bandwidth_bytes_per_s) > 0, count(DISTINCT alpha_s), "
      "count(DISTINCT time_unix_s), min(split) FROM link_probes GROUP BY profile ORDER BY profile");
  ASSERT_EQ(rows.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& row = rows.rows[i];
    EXPECT_EQ(std::get<std::string>(row[0]), i == 0 ? "loopback" : "ssh-hosts");
    EXPECT_EQ(std::get<std::string>(row[1]), i == 0 ? "b,a" : "a,b");
    EXPECT_EQ(std::get<std::int64_t>(row[2]), 23);
    EXPECT_EQ(std::get<std::int64_t>(row[3]), 1);
    EXPECT_EQ(std::get<std::int64_t>(row[4]), 4 << 20);
    EXPECT_EQ(std::get<double>(row[5]), 0);
    EXPECT_EQ(std::get<double>(row[6]), 0);
    EXPECT_EQ(std::get<std::int64_t>(row[7]), 1) << "alpha must be positive";
    EXPECT_EQ(std::get<std::int64_t>(row[8]), 1) << "B must be positive";
    EXPECT_EQ(std::get<std::int64_t>(row[9]), 1);
    EXPECT_EQ(std::get<std::int64_t>(row[10]), 1);
    EXPECT_EQ(std::get<std::string>(row[11]), "calibration");
  }
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

TEST(SshCliTest, ProbeNamesAnUnreachableHeadAndTheCause) {
  SshdFixture sshd;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  sshd.StopHost(0);
  const Outcome outcome = RunCli({"--db", sshd.dir() + "/results.db", "inventory", "probe", inventory, "--probe", kProbe});
  EXPECT_EQ(outcome.status, 1);
  // Every host that cannot be used is reported: b, too, cannot reach a.
  EXPECT_EQ(outcome.err.rfind("dmlbench: error: 2 of 2 hosts cannot be used:\n  host 'a' (" +
                                  std::string(getpwuid(getuid())->pw_name) + "@127.0.0.2:" +
                                  std::to_string(sshd.port()) + "): connect failed: Connection refused\n",
                              0),
            0u)
      << outcome.err;
  EXPECT_NE(outcome.err.find("\n  host 'b' cannot reach host 'a' over ssh as mpirun will ("), std::string::npos)
      << outcome.err;
}

TEST(SshCliTest, ProbeNamesAPeerTheHeadCannotReach) {
  SshdFixture sshd;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  sshd.StopHost(1);
  const Outcome outcome = RunCli({"--db", sshd.dir() + "/results.db", "inventory", "probe", inventory, "--probe", kProbe});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err.rfind("dmlbench: error: 2 of 2 hosts cannot be used:\n"
                              "  host 'a' cannot reach host 'b' over ssh as mpirun will (",
                              0),
            0u)
      << outcome.err;
  EXPECT_NE(outcome.err.find("\n  host 'b' (" + std::string(getpwuid(getuid())->pw_name) + "@127.0.0.3:" +
                             std::to_string(sshd.port()) + "): connect failed: Connection refused\n"),
            std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find(" 127.0.0.3): ssh: connect to host 127.0.0.3 port " + std::to_string(sshd.port()) +
                             ": Connection refused; "),
            std::string::npos)
      << outcome.err;
}

TEST(SshCliTest, ProbeReportsAHostTheInventoryLacks) {
  SshdFixture sshd;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  const Outcome outcome = RunCli({"--db", sshd.dir() + "/results.db", "inventory", "probe", inventory, "--probe",
                                  kProbe, "--hosts", "a,z"});
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "dmlbench: error: " + inventory + " has no host 'z' (its hosts: a, b)\n");
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
