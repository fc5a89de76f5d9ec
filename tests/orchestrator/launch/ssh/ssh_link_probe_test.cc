// Tests of orchestrator/launch/ssh/ssh_link_probe: the profile name, the
// choice of hosts, the remote command and the whole probe against fake
// shells that answer as hosts do. Against a real sshd and mpirun:
// tests/orchestrator/cli/inventory_command_test.cc and ssh_run_test.cc.
#include "orchestrator/launch/ssh/ssh_link_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "common/sha256.h"

namespace dmlbench {
namespace {

constexpr double kAlphaS = 50e-6;
constexpr double kBytesPerS = 1e9;

// What dmlbench-linkprobe prints for a link of exactly kAlphaS and
// kBytesPerS, 1 B .. 4 MiB, with a line of Open MPI's between.
std::string ExactProbeOutput() {
  std::string out;
  for (std::int64_t m = 1; m <= (4 << 20); m *= 2) {
    char line[256];
    std::snprintf(line, sizeof line,
                  R"({"event":"link_probe","format_version":1,"message_bytes":%lld,"median_one_way_s":%.17g,)"
                  R"("repetitions":10})" "\n",
                  static_cast<long long>(m), kAlphaS + static_cast<double>(m) / kBytesPerS);
    out += line;
    if (m == 1024) out += "[a:01234] 1 more process has sent help message help-mpi-btl-base.txt\n";
  }
  return out;
}

// Two (or more) fake hosts: each answers provisioning, the peer check and
// the probe as a host would, and writes what it was asked into one log.
struct FakeHosts {
  std::map<std::string, std::string> mpirun = {{"a", "mpirun (Open MPI) 4.1.4\n"}, {"b", "mpirun (Open MPI) 4.1.4\n"}};
  std::string remote_probe_sha256;  // what sha256sum reports for the hosts' copy; "" = none there
  ExecResult probe{0, false, ExactProbeOutput(), ""};
  std::vector<std::string> log;     // "a: <command>", "a: upload <remote path>"
  std::mutex log_mutex;             // provisioning talks to the hosts from one thread each
  void Log(std::string entry) {
    std::lock_guard<std::mutex> hold(log_mutex);
    log.push_back(std::move(entry));
  }
  ConnectFunction Connect();
};

class FakeShell final : public RemoteShell {
 public:
  FakeShell(std::string name, FakeHosts& hosts) : name_(std::move(name)), hosts_(hosts) {}
  const std::string& host_name() const override { return name_; }
  ExecResult Exec(const std::string& command, double) override {
    hosts_.Log(name_ + ": " + command);
    if (command.find("@@pwd") != std::string::npos) {
      const std::string hashes =
          hosts_.remote_probe_sha256.empty() ? "" : hosts_.remote_probe_sha256 + "  dmlbench-linkprobe\n";
      return {0, false,
              "@@pwd\n/w\n@@sha256\n" + hashes + "@@facts\nmodel name\t: Test CPU\n2\nMemTotal: 1000 kB\n" +
                  "Linux 6.1.0 x86_64\n@@mpirun\n" + hosts_.mpirun[name_],
              ""};
    }
    if (command.find("BatchMode=yes") != std::string::npos) return {0, false, "ok 0\n", ""};  // one peer
    if (command.find(" mpirun -H ") != std::string::npos) return hosts_.probe;
    return {0, false, "", ""};
  }
  void Upload(const std::string&, const std::string& remote_path) override {
    hosts_.Log(name_ + ": upload " + remote_path);
  }
  void WriteFile(const std::string& remote_path, std::string_view) override {
    hosts_.Log(name_ + ": write " + remote_path);
  }

 private:
  std::string name_;
  FakeHosts& hosts_;
};

ConnectFunction FakeHosts::Connect() {
  return [this](const InventoryHost& host) { return std::unique_ptr<RemoteShell>(new FakeShell(host.name, *this)); };
}

InventoryHost Host(const std::string& name) {
  InventoryHost host;
  host.name = name;
  host.address = name + ".example";
  return host;
}

Inventory LabInventory() {
  Inventory inventory;
  inventory.source_path = "conf/lab.toml";
  inventory.work_dir = "~/w";
  inventory.mpi_args = {"--mca", "plm_rsh_args", "-p 2222 -i /k y"};
  inventory.hosts = {Host("a"), Host("b"), Host("c")};
  return inventory;
}

// A local stand-in for dmlbench-linkprobe, removed at the end.
class LocalProbe {
 public:
  LocalProbe()
      : path_((std::filesystem::temp_directory_path() / ("dmlb-ssh-probe-" + std::to_string(getpid()))).string()) {
    std::ofstream(path_) << "#!/bin/sh\n";
  }
  ~LocalProbe() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

SshLinkProbeOptions Options(const LocalProbe& probe) {
  SshLinkProbeOptions options;
  options.probe_binary = probe.path();
  return options;
}

bool Logged(const FakeHosts& hosts, const std::string& entry) {
  return std::find(hosts.log.begin(), hosts.log.end(), entry) != hosts.log.end();
}

TEST(SshLinkProbeTest, DefaultProfileIsSshAndTheInventoryFileName) {
  Inventory inventory;
  inventory.source_path = "conf/lab.toml";
  EXPECT_EQ(DefaultProbeProfile(inventory), "ssh-lab");
  inventory.source_path = "/home/u/ec2.us-east-1.toml";
  EXPECT_EQ(DefaultProbeProfile(inventory), "ssh-ec2.us-east-1");
  inventory.source_path = "hosts";
  EXPECT_EQ(DefaultProbeProfile(inventory), "ssh-hosts");
}

TEST(SshLinkProbeTest, TheFirstTwoHostsByDefault) {
  const std::vector<InventoryHost> hosts = ProbeHosts(LabInventory(), {});
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].name, "a");
  EXPECT_EQ(hosts[1].name, "b");
}

TEST(SshLinkProbeTest, NamedHostsInTheirOrder) {
  const std::vector<InventoryHost> hosts = ProbeHosts(LabInventory(), {"c", "a"});
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].name, "c");
  EXPECT_EQ(hosts[1].name, "a");
}

TEST(SshLinkProbeTest, CommandRunsOneRankPerHostWithEveryWordQuoted) {
  Inventory inventory = LabInventory();
  SshLinkProbeOptions options;
  options.sizes = {1 << 20, 0.25};
  options.timeout_s = 60;
  EXPECT_EQ(ProbeCommand(inventory, {Host("a"), Host("b")}, "/home/u/work dir", options),
            "timeout -k 10 60 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
            "OMPI_MCA_rtc_hwloc_vmhole=none mpirun -H a.example,b.example -np 2 --mca plm_rsh_args "
            "'-p 2222 -i /k y' '/home/u/work dir/dmlbench-linkprobe' --max-bytes 1048576 "
            "--max-seconds-per-size 0.25 </dev/null");
}

TEST(SshLinkProbeTest, ProvisionsBothHostsProbesFromTheFirstAndFits) {
  const LocalProbe probe;
  FakeHosts hosts;
  const LinkProbeResult result = ProbeSshLink(LabInventory(), Options(probe), hosts.Connect());
  EXPECT_EQ(result.profile, "ssh-lab");
  EXPECT_EQ(result.network.name, "");
  EXPECT_EQ(result.network.bandwidth_bits_per_s, 0);
  EXPECT_EQ(result.network.latency_s, 0);
  EXPECT_EQ(result.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(result.points.size(), 23u);
  EXPECT_NEAR(result.fit.alpha_s, kAlphaS, 1e-9);
  EXPECT_NEAR(result.fit.bandwidth_bytes_per_s / kBytesPerS, 1, 1e-6);
  EXPECT_GT(result.time_unix_s, 1.7e9);
  // The probe went to both hosts (not to c), then ran on a only.
  EXPECT_TRUE(Logged(hosts, "a: upload /w/dmlbench-linkprobe.tmp-a"));
  EXPECT_TRUE(Logged(hosts, "b: upload /w/dmlbench-linkprobe.tmp-b"));
  int probes = 0;
  for (const std::string& entry : hosts.log) {
    EXPECT_NE(entry.rfind("c: ", 0), 0u) << entry;
    if (entry.find(" mpirun -H ") != std::string::npos) {
      ++probes;
      EXPECT_EQ(entry.rfind("a: timeout -k 10 300 env ", 0), 0u) << entry;
      EXPECT_NE(entry.find(" /w/dmlbench-linkprobe --max-bytes 4194304 --max-seconds-per-size 0.5 "),
                std::string::npos)
          << entry;
    }
  }
  EXPECT_EQ(probes, 1);
  // Rows as the model looks them up for a run of this inventory: unshaped.
  const std::vector<LinkProbeRow> rows = LinkProbeRows(result);
  ASSERT_EQ(rows.size(), 23u);
  EXPECT_EQ(rows[0].profile, "ssh-lab");
  EXPECT_EQ(rows[0].bandwidth_bits_per_s, 0);
  EXPECT_EQ(rows[0].latency_s, 0);
  EXPECT_EQ(rows[0].hosts, "a,b");
}

TEST(SshLinkProbeTest, AnUpToDateProbeIsNotUploaded) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.remote_probe_sha256 = Sha256FileHex(probe.path());
  ProbeSshLink(LabInventory(), Options(probe), hosts.Connect());
  for (const std::string& entry : hosts.log) EXPECT_EQ(entry.find(": upload "), std::string::npos) << entry;
}

TEST(SshLinkProbeTest, TheProfileAndHostsOptionsAreUsed) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.mpirun["c"] = hosts.mpirun["a"];
  SshLinkProbeOptions options = Options(probe);
  options.profile = "ec2-c5-pg1";
  options.hosts = {"c", "b"};
  const LinkProbeResult result = ProbeSshLink(LabInventory(), options, hosts.Connect());
  EXPECT_EQ(result.profile, "ec2-c5-pg1");
  EXPECT_EQ(result.hosts, (std::vector<std::string>{"c", "b"}));
  for (const std::string& entry : hosts.log) {
    if (entry.find(" mpirun -H ") != std::string::npos) {
      EXPECT_EQ(entry.rfind("c: ", 0), 0u) << entry;
      EXPECT_NE(entry.find(" -H c.example,b.example "), std::string::npos) << entry;
    }
  }
}

// Error paths of ssh_link_probe.cc follow.

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SshLinkProbeTest, AnUnknownHostIsNamedWithTheInventorysHosts) {
  EXPECT_EQ(ErrorOf([] { ProbeHosts(LabInventory(), {"a", "x"}); }),
            "conf/lab.toml has no host 'x' (its hosts: a, b, c)");
}

TEST(SshLinkProbeTest, ExactlyTwoHostsAreProbed) {
  EXPECT_EQ(ErrorOf([] { ProbeHosts(LabInventory(), {"a", "b", "c"}); }),
            "the link probe needs 2 hosts, got 3: a, b, c");
  EXPECT_EQ(ErrorOf([] { ProbeHosts(LabInventory(), {"a"}); }), "the link probe needs 2 hosts, got 1: a");
}

TEST(SshLinkProbeTest, OneHostTwiceIsRefused) {
  EXPECT_EQ(ErrorOf([] { ProbeHosts(LabInventory(), {"b", "b"}); }),
            "the link probe needs 2 different hosts, got 'b' twice");
}

TEST(SshLinkProbeTest, AnInventoryOfOneHostIsRefused) {
  Inventory inventory = LabInventory();
  inventory.hosts.resize(1);
  EXPECT_EQ(ErrorOf([&] { ProbeHosts(inventory, {}); }), "the link probe needs 2 hosts, conf/lab.toml has 1");
}

TEST(SshLinkProbeTest, TwoHostsAtOneAddressAreRefused) {
  Inventory inventory = LabInventory();
  inventory.hosts[1].address = "a.example";
  EXPECT_EQ(ErrorOf([&] { ProbeHosts(inventory, {}); }),
            "hosts 'a' and 'b' have the same address a.example: mpirun would start both ranks on one machine");
}

TEST(SshLinkProbeTest, TheEmulatedClustersInventoryIsRefused) {
  const LocalProbe probe;
  FakeHosts hosts;
  Inventory inventory = LabInventory();
  inventory.emulated_cluster_toml = "name = \"main\"\n";
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(inventory, Options(probe), hosts.Connect()); }),
            "conf/lab.toml is the emulated cluster's inventory: its links are shaped per run; probe them with "
            "`dmlbench cluster probe`");
  EXPECT_TRUE(hosts.log.empty());
}

TEST(SshLinkProbeTest, AMissingLocalProbeIsReported) {
  FakeHosts hosts;
  SshLinkProbeOptions options;
  options.probe_binary = "/nonexistent/dmlbench-linkprobe";
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(LabInventory(), options, hosts.Connect()); }),
            "the link probe program /nonexistent/dmlbench-linkprobe does not exist: build dmlbench-linkprobe or "
            "name it with --probe");
  EXPECT_TRUE(hosts.log.empty());
}

TEST(SshLinkProbeTest, AHostWithoutMpirunIsNamed) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.mpirun["b"] = "";
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(LabInventory(), Options(probe), hosts.Connect()); }),
            "host 'b': mpirun not found on the remote PATH; install Open MPI (the same version on every host)");
}

TEST(SshLinkProbeTest, AFailedProbeSaysHowMpirunEnded) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.probe = {1, false, "",
                 "--------------------------------------------------------------------------\n"
                 "mpirun was unable to launch the specified application as it could not access\n"
                 "or execute an executable:\n\n"
                 "Executable: /w/dmlbench-linkprobe\n"
                 "Node: b.example\n\n"
                 "while attempting to start process rank 1.\n"
                 "--------------------------------------------------------------------------\n"};
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(LabInventory(), Options(probe), hosts.Connect()); }),
            "link probe between hosts 'a' and 'b' failed (mpirun on 'a' exited with status 1): mpirun was unable "
            "to launch the specified application as it could not access / or execute an executable: / Executable: "
            "/w/dmlbench-linkprobe / Node: b.example / while attempting to start process rank 1.");
}

TEST(SshLinkProbeTest, ATimedOutProbeIsReported) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.probe = {124, false, "", ""};
  SshLinkProbeOptions options = Options(probe);
  options.timeout_s = 30;
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(LabInventory(), options, hosts.Connect()); }),
            "link probe between hosts 'a' and 'b' timed out after 30 s");
}

TEST(SshLinkProbeTest, AProbeWithoutLinesCannotBeFitted) {
  const LocalProbe probe;
  FakeHosts hosts;
  hosts.probe = {0, false, "", ""};
  EXPECT_EQ(ErrorOf([&] { ProbeSshLink(LabInventory(), Options(probe), hosts.Connect()); }),
            "link probe between hosts 'a' and 'b': cannot fit alpha and B: need at least 2 message sizes, got 0");
}

}  // namespace
}  // namespace dmlbench
