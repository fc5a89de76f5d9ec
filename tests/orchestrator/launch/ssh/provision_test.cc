// Tests of orchestrator/launch/ssh/provision: the logic against a fake RemoteShell,
// then uploads against a real sshd (SshdFixture).
#include "orchestrator/launch/ssh/provision.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

// Answers Exec() from a script (first command whose text contains a key
// wins) and records what it was asked to do.
class FakeShell final : public RemoteShell {
 public:
  FakeShell(std::string name, std::map<std::string, ExecResult> answers)
      : name_(std::move(name)), answers_(std::move(answers)) {}
  const std::string& host_name() const override { return name_; }
  ExecResult Exec(const std::string& command, double) override {
    commands.push_back(command);
    if (on_exec) {
      if (std::optional<ExecResult> answer = on_exec(command)) return *answer;
    }
    for (const auto& [key, answer] : answers_) {
      if (command.find(key) != std::string::npos) return answer;
    }
    return ExecResult{0, false, "", ""};
  }
  void Upload(const std::string& local_path, const std::string& remote_path) override {
    uploads.emplace_back(local_path, remote_path);
  }
  void WriteFile(const std::string& remote_path, std::string_view) override {
    uploads.emplace_back("", remote_path);
  }
  std::vector<std::string> commands;
  std::vector<std::pair<std::string, std::string>> uploads;
  std::function<std::optional<ExecResult>(const std::string& command)> on_exec;  // answers first when it returns one

 private:
  std::string name_;
  std::map<std::string, ExecResult> answers_;
};

const std::string kTrainerHash(64, 'a');
const std::string kDataHash(64, 'b');

ProvisionPlan FakePlan() {
  return ProvisionPlan{"~/w", {{"/local/trainer", "dmlbench-trainer", kTrainerHash},
                               {"/local/data/x.gz", "dataset/x.gz", kDataHash}}};
}

std::string ProbeOutput(const std::string& pwd, const std::string& mpi, const std::string& hashes) {
  return "@@pwd\n" + pwd + "\n@@sha256\n" + hashes +
         "@@facts\nmodel name\t: Test CPU @ 2.0GHz\n8\nMemTotal:       16000 kB\nLinux 6.1.0 x86_64\n" +
         "@@mpirun\n" + mpi;
}

InventoryHost Host(const std::string& name) {
  InventoryHost host;
  host.name = name;
  host.address = name + ".example";
  host.tags = {{"provider", "ec2"}, {"region", "us-east-1"}};
  return host;
}

TEST(ProvisionTest, UploadsOnlyWhatDiffersThenRenamesAndRecordsFacts) {
  FakeShell shell("a", {{"@@pwd", {0, false,
                                   ProbeOutput("/home/u/w", "mpirun (Open MPI) 4.1.4\n",
                                               kTrainerHash + "  dmlbench-trainer\n" +
                                                   std::string(64, 'c') + "  dataset/x.gz\n"),
                                   ""}}});
  const HostProvision result = ProvisionHost(shell, Host("a"), FakePlan());
  EXPECT_EQ(result.work_dir, "/home/u/w");
  EXPECT_EQ(result.uploaded, 1);
  ASSERT_EQ(shell.uploads.size(), 1u);
  EXPECT_EQ(shell.uploads[0].first, "/local/data/x.gz");
  EXPECT_EQ(shell.uploads[0].second, "/home/u/w/dataset/x.gz.tmp-a");
  ASSERT_EQ(shell.commands.size(), 2u);
  // The hashes come from the host's cache of them (its program, between
  // the quotes, is tested against a real sshd below).
  const std::string probe = shell.commands[0];
  const std::string before_hashes =
      "mkdir -p \"$HOME\"/w \"$HOME\"/w/dataset && cd \"$HOME\"/w && { echo @@pwd; pwd; "
      "v=.mpirun-version.$$; { if command -v mpirun >/dev/null 2>&1; then mpirun --version "
      "2>&1 | head -n 1; fi; } >\"$v\" & echo @@sha256; awk -v cache=.sha256-cache -v tmp=.sha256-cache.$$ '";
  const std::string after_hashes =
      "' dmlbench-trainer dataset/x.gz; echo @@outputs; for d in .output-*; do [ -d \"$d\" ] && echo \"$d\"; "
      "done; echo @@facts; grep -m1 '^model name' /proc/cpuinfo; nproc; "
      "grep -m1 '^MemTotal' /proc/meminfo; uname -srm; wait; echo @@mpirun; cat \"$v\"; rm -f "
      "\"$v\"; } </dev/null";
  EXPECT_EQ(probe.substr(0, before_hashes.size()), before_hashes);
  ASSERT_GT(probe.size(), after_hashes.size());
  EXPECT_EQ(probe.substr(probe.size() - after_hashes.size()), after_hashes);
  EXPECT_EQ(shell.commands[1], "mv -f -- /home/u/w/dataset/x.gz.tmp-a /home/u/w/dataset/x.gz");
  const HostFacts& facts = result.facts;
  EXPECT_EQ(facts.name, "a");
  EXPECT_EQ(facts.address, "a.example");
  EXPECT_EQ(facts.cpu_model, "Test CPU @ 2.0GHz");
  EXPECT_EQ(facts.cores, 8);
  EXPECT_EQ(facts.memory_bytes, 16000 * 1024);
  EXPECT_EQ(facts.kernel, "Linux 6.1.0 x86_64");
  EXPECT_EQ(facts.mpi_version, "mpirun (Open MPI) 4.1.4");
  EXPECT_EQ(facts.provider, "ec2");
  EXPECT_EQ(facts.tags_json, R"({"provider":"ec2","region":"us-east-1"})");
}

TEST(ProvisionTest, NothingIsUploadedWhenEveryHashMatches) {
  FakeShell shell("a", {{"@@pwd", {0, false,
                                   ProbeOutput("/w", "mpirun (Open MPI) 4.1.4\n",
                                               kTrainerHash + "  dmlbench-trainer\n" + kDataHash +
                                                   "  dataset/x.gz\n"),
                                   ""}}});
  const HostProvision result = ProvisionHost(shell, Host("a"), FakePlan());
  EXPECT_EQ(result.uploaded, 0);
  EXPECT_TRUE(shell.uploads.empty());
  EXPECT_EQ(shell.commands.size(), 1u);
}

// An orchestrator killed during a job never collected its ranks' output
// from the hosts: the next provisioning removes the directories of
// orchestrators that are gone, and keeps those of one still running.
TEST(ProvisionTest, OutputDirectoriesOfKilledOrchestratorsAreRemoved) {
  const std::string key(64, 'd');
  const std::string gone = ".output-" + key + "-dmlbench-output-" + std::to_string(testing::DeadPid()) + "-abcdef";
  const std::string running = ".output-" + key + "-dmlbench-output-" + std::to_string(::getpid()) + "-ghijkl";
  const std::string probe = ProbeOutput("/w", "mpirun (Open MPI) 4.1.4\n",
                                        kTrainerHash + "  dmlbench-trainer\n" + kDataHash + "  dataset/x.gz\n");
  const std::string listed = "@@outputs\n" + gone + "\n" + running + "\n";
  FakeShell shell("a", {{"@@pwd", {0, false, probe + listed, ""}}});
  ProvisionHost(shell, Host("a"), FakePlan());
  ASSERT_EQ(shell.commands.size(), 2u);
  EXPECT_EQ(shell.commands[1], "rm -rf -- /w/" + gone);
}

TEST(ProvisionTest, PeerCheckUsesMpirunsSshSettings) {
  EXPECT_EQ(PeerCheckCommand({Host("b")},
                             {"--mca", "plm_rsh_args", "-p 2222 -i /k y", "--mca", "btl", "tcp,self"}, 3),
            "{ if out=$(ssh -p 2222 -i /k y -o BatchMode=yes -o ConnectTimeout=3 -- b.example true 2>&1 "
            "</dev/null); then echo 'ok 0'; else echo \"fail 0 $(printf %s \"$out\" | tail -n 1)\"; fi; } & wait");
}

TEST(ProvisionTest, PeerCheckWithAnotherAgentPassesNoOptionEnd) {
  EXPECT_EQ(PeerCheckCommand({Host("b")}, {"--mca", "plm_rsh_agent", "rsh"}, 3),
            "{ if out=$(rsh -o BatchMode=yes -o ConnectTimeout=3 b.example true 2>&1 "
            "</dev/null); then echo 'ok 0'; else echo \"fail 0 $(printf %s \"$out\" | tail -n 1)\"; fi; } & wait");
}

// Every peer at once, each answer numbered: a slow peer delays the others
// by nothing.
TEST(ProvisionTest, PeerCheckReachesEveryPeerAtOnce) {
  EXPECT_EQ(PeerCheckCommand({Host("b"), Host("c")}, {}, 3),
            "{ if out=$(ssh -o BatchMode=yes -o ConnectTimeout=3 -- b.example true 2>&1 </dev/null); then "
            "echo 'ok 0'; else echo \"fail 0 $(printf %s \"$out\" | tail -n 1)\"; fi; } & "
            "{ if out=$(ssh -o BatchMode=yes -o ConnectTimeout=3 -- c.example true 2>&1 </dev/null); then "
            "echo 'ok 1'; else echo \"fail 1 $(printf %s \"$out\" | tail -n 1)\"; fi; } & wait");
}

// The first host reaches every other, each other host the next, the last
// the first: linear in the hosts, every host's sshd entered and every
// host's own ssh used.
TEST(ProvisionTest, PeerCheckTargetsAreTheFirstHostToAllAndARing) {
  EXPECT_TRUE(PeerCheckTargets(0, 1, true).empty());
  EXPECT_EQ(PeerCheckTargets(0, 2, true), std::vector<size_t>{1});
  EXPECT_EQ(PeerCheckTargets(1, 2, true), std::vector<size_t>{0});
  EXPECT_EQ(PeerCheckTargets(0, 4, true), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(PeerCheckTargets(1, 4, true), std::vector<size_t>{2});
  EXPECT_EQ(PeerCheckTargets(2, 4, true), std::vector<size_t>{3});
  EXPECT_EQ(PeerCheckTargets(3, 4, true), std::vector<size_t>{0});
  for (const size_t n : {2, 3, 11, 64}) {
    size_t starts = 0;
    std::vector<bool> entered(n, false);
    for (size_t i = 0; i < n; ++i) {
      const std::vector<size_t> targets = PeerCheckTargets(i, n, true);
      EXPECT_FALSE(targets.empty()) << "host " << i << " of " << n << " uses no ssh of its own";
      for (const size_t j : targets) {
        EXPECT_NE(i, j);
        entered[j] = true;
      }
      starts += targets.size();
    }
    EXPECT_EQ(starts, 2 * (n - 1)) << n << " hosts";
    for (size_t j = 0; j < n; ++j) EXPECT_TRUE(entered[j]) << "nobody reaches host " << j << " of " << n;
  }
}

// On an emulated cluster mpirun runs on the orchestrator's machine: the
// ring alone, one ssh start a host.
TEST(ProvisionTest, PeerCheckTargetsWithMpirunOffTheHostsAreARing) {
  EXPECT_TRUE(PeerCheckTargets(0, 1, false).empty());
  EXPECT_EQ(PeerCheckTargets(0, 2, false), std::vector<size_t>{1});
  EXPECT_EQ(PeerCheckTargets(1, 2, false), std::vector<size_t>{0});
  EXPECT_EQ(PeerCheckTargets(0, 4, false), std::vector<size_t>{1});
  EXPECT_EQ(PeerCheckTargets(3, 4, false), std::vector<size_t>{0});
}

// Error paths of provision.cc follow.

TEST(ProvisionTest, MissingMpirunIsReported) {
  FakeShell shell("a", {{"@@pwd", {0, false, ProbeOutput("/w", "", ""), ""}}});
  try {
    ProvisionHost(shell, Host("a"), FakePlan());
    FAIL() << "provisioned without mpirun";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(),
                 "host 'a': mpirun not found on the remote PATH; install Open MPI (the same "
                 "version on every host)");
  }
}

TEST(ProvisionTest, WorkDirThatCannotBeCreatedIsReported) {
  FakeShell shell("a", {{"@@pwd", {1, false, "",
                                   "mkdir: cannot create directory '/w': Permission denied\n"}}});
  try {
    ProvisionHost(shell, Host("a"), FakePlan());
    FAIL() << "provisioned without a work dir";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(), "host 'a': cannot prepare work dir ~/w: mkdir: cannot create "
                               "directory '/w': Permission denied");
  }
}

TEST(ProvisionTest, ATimeoutShowsWhatTheRemoteCommandWroteOnStderr) {
  // A slow shell start-up file on the host: what it printed tells why.
  FakeShell shell("a", {{"@@pwd", {-1, true, "",
                                   "loading ~/.bashrc\nconda: initialising\n\nconda: still solving\n"
                                   "waiting for conda\n"}}});
  try {
    ProvisionHost(shell, Host("a"), FakePlan());
    FAIL() << "provisioned although the command timed out";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(), "host 'a': cannot prepare work dir ~/w: timed out after 60 s; its standard error "
                               "ends: conda: initialising | conda: still solving | waiting for conda");
  }
  FakeShell silent("a", {{"@@pwd", {-1, true, "", ""}}});
  try {
    ProvisionHost(silent, Host("a"), FakePlan());
    FAIL() << "provisioned although the command timed out";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(),
                 "host 'a': cannot prepare work dir ~/w: timed out after 60 s, with nothing on its standard error");
  }
}

TEST(ProvisionTest, FailedRenameIsReported) {
  FakeShell shell("a", {{"@@pwd", {0, false, ProbeOutput("/w", "mpirun (Open MPI) 4.1.4\n", ""), ""}},
                        {"mv -f", {1, false, "", "mv: cannot move: No space left on device\n"}}});
  try {
    ProvisionHost(shell, Host("a"), FakePlan());
    FAIL() << "provisioned although the rename failed";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(), "host 'a': cannot move uploaded files into place: mv: cannot move: "
                               "No space left on device");
  }
}

// The addresses a peer check command reaches, in order.
std::vector<std::string> Reached(const std::string& command) {
  std::vector<std::string> addresses;
  for (size_t at = command.find(" -- "); at != std::string::npos; at = command.find(" -- ", at + 4)) {
    addresses.push_back(command.substr(at + 4, command.find(' ', at + 4) - at - 4));
  }
  return addresses;
}

// Fake hosts of the given names, all alike; `peer[name]` is what the peer
// check prints on that host (when absent: every peer reached, "ok 0",
// "ok 1", ...); `reached[name]`, if given, gets the addresses it checked.
std::string ProvisionFakes(const std::vector<std::string>& names, const std::map<std::string, std::string>& peer,
                           std::map<std::string, std::vector<std::string>>* reached = nullptr,
                           const std::string& emulated_cluster_toml = "") {
  Inventory inventory;
  for (const std::string& name : names) inventory.hosts.push_back(Host(name));
  inventory.emulated_cluster_toml = emulated_cluster_toml;
  std::mutex mutex;
  try {
    ProvisionHosts(inventory, FakePlan(), [&](const InventoryHost& host) -> std::unique_ptr<RemoteShell> {
      const std::string probe = ProbeOutput("/w", "mpirun (Open MPI) 4.1.4\n", "");
      auto shell = std::make_unique<FakeShell>(host.name, std::map<std::string, ExecResult>{{"@@pwd", {0, false, probe, ""}}});
      shell->on_exec = [&, name = host.name](const std::string& command) -> std::optional<ExecResult> {
        if (command.find("BatchMode") == std::string::npos) return std::nullopt;
        const std::vector<std::string> addresses = Reached(command);
        std::string out;
        for (size_t k = 0; k < addresses.size(); ++k) out += "ok " + std::to_string(k) + "\n";
        std::lock_guard<std::mutex> hold(mutex);
        if (reached != nullptr) (*reached)[name] = addresses;
        const auto given = peer.find(name);
        return ExecResult{0, false, given != peer.end() ? given->second : out, ""};
      };
      return shell;
    });
  } catch (const std::exception& error) {
    return error.what();
  }
  return "provisioned";
}

// Two fake hosts with the given mpirun versions and work dirs; `peer` is
// what the peer check prints on host a.
std::string ProvisionTwo(const std::string& mpi_b, const std::string& pwd_b, const std::string& peer) {
  Inventory inventory;
  inventory.hosts = {Host("a"), Host("b")};
  inventory.mpi_args = {"--mca", "plm_rsh_args", "-p 2222"};
  try {
    ProvisionHosts(inventory, FakePlan(), [&](const InventoryHost& host) {
      const bool is_a = host.name == "a";
      return std::unique_ptr<RemoteShell>(new FakeShell(
          host.name,
          {{"@@pwd", {0, false,
                      ProbeOutput(is_a ? "/w" : pwd_b, is_a ? "mpirun (Open MPI) 4.1.4\n" : mpi_b, ""),
                      ""}},
           {"BatchMode", {0, false, is_a ? peer : "ok 0\n", ""}}}));
    });
  } catch (const std::exception& error) {
    return error.what();
  }
  return "provisioned";
}

TEST(ProvisionTest, SameVersionsAndPathsProvision) {
  EXPECT_EQ(ProvisionTwo("mpirun (Open MPI) 4.1.4\n", "/w", "ok 0\n"), "provisioned");
}

TEST(ProvisionTest, DifferentOpenMpiVersionsAreRefused) {
  EXPECT_EQ(ProvisionTwo("mpirun (Open MPI) 4.1.5\n", "/w", "ok 0\n"),
            "Open MPI differs between hosts: 'a' has 'mpirun (Open MPI) 4.1.4', 'b' has 'mpirun "
            "(Open MPI) 4.1.5'; every host needs the same version");
}

TEST(ProvisionTest, DifferentWorkDirsAreRefused) {
  EXPECT_EQ(ProvisionTwo("mpirun (Open MPI) 4.1.4\n", "/home/other/w", "ok 0\n"),
            "work_dir resolves to /w on 'a' but to /home/other/w on 'b'; mpirun needs one path on "
            "every host: set an absolute work_dir");
}

TEST(ProvisionTest, HostsThatCannotReachEachOtherAreNamed) {
  EXPECT_EQ(ProvisionTwo("mpirun (Open MPI) 4.1.4\n", "/w",
                         "fail 0 ssh: connect to host b.example port 2222: Connection refused\n"),
            "host 'a' cannot reach host 'b' over ssh as mpirun will (ssh -p 2222 b.example): ssh: "
            "connect to host b.example port 2222: Connection refused; the hosts of an MPI job must "
            "reach each other over ssh");
}

TEST(ProvisionTest, APeerThatDoesNotAnswerIsNamed) {
  EXPECT_EQ(ProvisionTwo("mpirun (Open MPI) 4.1.4\n", "/w", ""),
            "host 'a' cannot reach host 'b' over ssh as mpirun will (ssh -p 2222 b.example): no answer; "
            "the hosts of an MPI job must reach each other over ssh");
}

// A check that ran out of time says so: on a host of a small CPU share the
// ssh's can take longer than their budget.
TEST(ProvisionTest, APeerCheckThatTimedOutSaysSo) {
  Inventory inventory;
  inventory.hosts = {Host("a"), Host("b")};
  try {
    ProvisionHosts(inventory, FakePlan(), [&](const InventoryHost& host) {
      return std::unique_ptr<RemoteShell>(new FakeShell(
          host.name, {{"@@pwd", {0, false, ProbeOutput("/w", "mpirun (Open MPI) 4.1.4\n", ""), ""}},
                      {"BatchMode", {-1, host.name == "b", host.name == "a" ? "ok 0\n" : "", ""}}}));
    });
    FAIL() << "provisioned although a peer check timed out";
  } catch (const ProvisionError& error) {
    EXPECT_STREQ(error.what(), "host 'b' cannot reach host 'a' over ssh as mpirun will (ssh a.example): timed "
                               "out after 15 s, with nothing on its standard error; the hosts of an MPI job must "
                               "reach each other over ssh");
  }
}

TEST(ProvisionTest, FourHostsCheckTheFirstToAllAndARing) {
  std::map<std::string, std::vector<std::string>> reached;
  EXPECT_EQ(ProvisionFakes({"a", "b", "c", "d"}, {}, &reached), "provisioned");
  EXPECT_EQ(reached["a"], (std::vector<std::string>{"b.example", "c.example", "d.example"}));
  EXPECT_EQ(reached["b"], std::vector<std::string>{"c.example"});
  EXPECT_EQ(reached["c"], std::vector<std::string>{"d.example"});
  EXPECT_EQ(reached["d"], std::vector<std::string>{"a.example"});
}

TEST(ProvisionTest, FourHostsOfAnEmulatedClusterCheckARing) {
  std::map<std::string, std::vector<std::string>> reached;
  EXPECT_EQ(ProvisionFakes({"a", "b", "c", "d"}, {}, &reached, "name = \"c\"\n"), "provisioned");
  EXPECT_EQ(reached["a"], std::vector<std::string>{"b.example"});
  EXPECT_EQ(reached["b"], std::vector<std::string>{"c.example"});
  EXPECT_EQ(reached["c"], std::vector<std::string>{"d.example"});
  EXPECT_EQ(reached["d"], std::vector<std::string>{"a.example"});
}

// The answers come in the order the ssh's end; each is read by its number.
TEST(ProvisionTest, AnswersInAnyOrderNameTheFailingPair) {
  EXPECT_EQ(ProvisionFakes({"a", "b", "c", "d"}, {{"a", "ok 2\nfail 1 ssh: Could not resolve hostname c.example\nok 0\n"}}),
            "host 'a' cannot reach host 'c' over ssh as mpirun will (ssh c.example): ssh: Could not resolve "
            "hostname c.example; the hosts of an MPI job must reach each other over ssh");
  EXPECT_EQ(ProvisionFakes({"a", "b", "c", "d"}, {{"d", "fail 0 Permission denied (publickey).\n"}}),
            "host 'd' cannot reach host 'a' over ssh as mpirun will (ssh a.example): Permission denied "
            "(publickey).; the hosts of an MPI job must reach each other over ssh");
}

TEST(ProvisionTest, AConnectionFailureIsRethrownAsIs) {
  Inventory inventory;
  inventory.hosts = {Host("a")};
  try {
    ProvisionHosts(inventory, FakePlan(), [](const InventoryHost& host) -> std::unique_ptr<RemoteShell> {
      throw SshError(host.name, "host 'a' (a.example:22): connect failed: Connection refused", 2);
    });
    FAIL() << "provisioned an unreachable host";
  } catch (const SshError& error) {
    EXPECT_STREQ(error.what(), "host 'a' (a.example:22): connect failed: Connection refused");
    EXPECT_EQ(error.host(), "a");
  }
}

// Against a real sshd.

Inventory RealInventory(const SshdFixture& sshd, const std::string& work_dir) {
  Inventory inventory = ParseInventory(sshd.InventoryToml(), sshd.dir() + "/hosts.toml");
  inventory.work_dir = work_dir;
  return inventory;
}

// ssh-keygen's SHA256 fingerprint of a public key file.
std::string Fingerprint(const std::string& public_key_path) {
  FILE* pipe = popen(("ssh-keygen -l -E sha256 -f '" + public_key_path + "'").c_str(), "r");
  char buffer[512] = {};
  const bool read = fgets(buffer, sizeof buffer, pipe) != nullptr;
  pclose(pipe);
  if (!read) return "";
  const std::string line = buffer;  // "256 SHA256:... comment (ED25519)"
  const size_t start = line.find(' ') + 1;
  return line.substr(start, line.find(' ', start) - start);
}

std::vector<HostProvision> ProvisionReal(const Inventory& inventory, const ProvisionPlan& plan) {
  return ProvisionHosts(inventory, plan, [&](const InventoryHost& host) {
    return std::unique_ptr<RemoteShell>(new SshSession(MakeTarget(inventory, host)));
  });
}

TEST(ProvisionRealTest, UploadsTheTrainerAndDatasetThenSkipsThemWhenUnchanged) {
  SshdFixture sshd({"127.0.0.2"});
  const Inventory inventory = RealInventory(sshd, sshd.dir() + "/remote-work");
  const ProvisionPlan plan = MakeProvisionPlan(inventory.work_dir, DMLBENCH_TRAINER, DMLBENCH_DATASET_DIR);
  ASSERT_EQ(plan.files.size(), 5u);
  std::vector<HostProvision> first = ProvisionReal(inventory, plan);
  EXPECT_EQ(first[0].uploaded, 5);
  EXPECT_EQ(first[0].work_dir, sshd.dir() + "/remote-work");
  for (const ProvisionFile& file : plan.files) {
    EXPECT_EQ(Sha256FileHex(sshd.dir() + "/remote-work/" + file.remote_name), file.sha256) << file.remote_name;
  }
  EXPECT_EQ(first[0].facts.mpi_version.rfind("mpirun (Open MPI) ", 0), 0u);
  EXPECT_GT(first[0].facts.cores, 0);
  EXPECT_GT(first[0].facts.memory_bytes, 0);
  EXPECT_FALSE(first[0].facts.kernel.empty());

  std::vector<HostProvision> second = ProvisionReal(inventory, plan);
  EXPECT_EQ(second[0].uploaded, 0);

  // A changed remote file is replaced, and only that one.
  std::ofstream(sshd.dir() + "/remote-work/dataset/t10k-labels-idx1-ubyte.gz") << "stale";
  std::vector<HostProvision> third = ProvisionReal(inventory, plan);
  EXPECT_EQ(third[0].uploaded, 1);
  EXPECT_EQ(Sha256FileHex(sshd.dir() + "/remote-work/dataset/t10k-labels-idx1-ubyte.gz"), plan.files[2].sha256);
}

// The hashes a host keeps of its copies (.sha256-cache in the work dir):
// used while a file is unchanged, and a file changed in place, at its
// size, is still found and replaced.
TEST(ProvisionRealTest, AHashIsReusedOnlyWhileItsFileIsUnchanged) {
  SshdFixture sshd({"127.0.0.2"});
  const Inventory inventory = RealInventory(sshd, sshd.dir() + "/remote-work");
  const ProvisionPlan plan = MakeProvisionPlan(inventory.work_dir, DMLBENCH_TRAINER, DMLBENCH_DATASET_DIR);
  const std::string work = sshd.dir() + "/remote-work/";
  const std::string cache = work + ".sha256-cache";
  EXPECT_EQ(ProvisionReal(inventory, plan)[0].uploaded, 5);
  // A file is recorded only once its ctime is older than the second it is
  // hashed in: the uploads' second must have passed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(ProvisionReal(inventory, plan)[0].uploaded, 0);
  std::vector<std::string> lines;
  {
    std::ifstream in(cache);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 5u) << SshdFixture::ReadFile(cache);
  EXPECT_EQ(lines[0].substr(0, 65), plan.files[0].sha256 + " ");
  EXPECT_EQ(lines[0].substr(lines[0].size() - 17), " dmlbench-trainer");

  // The recorded hash is what provisioning goes by while the file is
  // unchanged: a wrong one recorded for the trainer makes it upload it again.
  {
    std::ofstream out(cache, std::ios::trunc);
    out << std::string(64, '0') << lines[0].substr(64) << "\n";
    for (size_t i = 1; i < lines.size(); ++i) out << lines[i] << "\n";
  }
  EXPECT_EQ(ProvisionReal(inventory, plan)[0].uploaded, 1);

  // Another plan's provisioning keeps the lines of the files it does not have.
  const std::string other = sshd.dir() + "/other-trainer";
  std::ofstream(other) << "#!/bin/sh\n";
  ProvisionReal(inventory, MakeProvisionPlan(inventory.work_dir, other, ""));
  EXPECT_NE(SshdFixture::ReadFile(cache).find(lines[4]), std::string::npos) << SshdFixture::ReadFile(cache);
  ProvisionReal(inventory, plan);

  // A dataset file changed in place keeps its size and inode, and is found.
  const std::string labels = work + "dataset/t10k-labels-idx1-ubyte.gz";
  const auto size = std::filesystem::file_size(labels);
  {
    std::fstream file(labels, std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(size / 2);
    file.seekg(middle);
    const char byte = static_cast<char>(file.get());
    file.seekp(middle);
    file.put(static_cast<char>(~byte));
  }
  ASSERT_EQ(std::filesystem::file_size(labels), size);
  ASSERT_NE(Sha256FileHex(labels), plan.files[2].sha256);
  EXPECT_EQ(ProvisionReal(inventory, plan)[0].uploaded, 1);
  EXPECT_EQ(Sha256FileHex(labels), plan.files[2].sha256);
}

TEST(ProvisionRealTest, HostileWorkDirIsUsedLiterallyAndNothingIsExecuted) {
  SshdFixture sshd;
  const std::string marker = sshd.dir() + "/pwned";
  const std::string work_dir = sshd.dir() + "/remote-work dir; $(touch " + marker + ") `touch " + marker +
                               "` 'it''s' \"q\" && touch " + marker;
  const Inventory inventory = RealInventory(sshd, work_dir);
  const std::string trainer = sshd.dir() + "/trainer $(touch pwned) 'x'";
  std::ofstream(trainer) << "#!/bin/sh\n";
  const ProvisionPlan plan = MakeProvisionPlan(work_dir, trainer, "");
  const std::vector<HostProvision> result = ProvisionReal(inventory, plan);
  EXPECT_EQ(result[0].work_dir, work_dir);
  EXPECT_TRUE(std::filesystem::exists(work_dir + "/dmlbench-trainer"));
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(work_dir + "/pwned"));
}

TEST(ProvisionRealTest, BothFixtureHostsReachEachOther) {
  SshdFixture sshd;
  const Inventory inventory = RealInventory(sshd, sshd.dir() + "/remote-work");
  const std::string trainer = sshd.dir() + "/trainer";
  std::ofstream(trainer) << "#!/bin/sh\n";
  const std::vector<HostProvision> result =
      ProvisionReal(inventory, MakeProvisionPlan(inventory.work_dir, trainer, ""));
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[1].facts.name, "b");
}

TEST(ProvisionRealTest, APeerThatIsDownIsNamed) {
  SshdFixture sshd({"127.0.0.2", "127.0.0.3"});
  Inventory inventory = RealInventory(sshd, sshd.dir() + "/remote-work");
  // Host c: an address nobody listens on; a names it, and so does c's own failure.
  InventoryHost c = inventory.hosts[1];
  c.name = "c";
  c.address = "127.0.0.4";
  inventory.hosts = {inventory.hosts[0], c};
  const std::string trainer = sshd.dir() + "/trainer";
  std::ofstream(trainer) << "#!/bin/sh\n";
  try {
    ProvisionReal(inventory, MakeProvisionPlan(inventory.work_dir, trainer, ""));
    FAIL() << "provisioned with a host down";
  } catch (const ProvisionError& error) {
    const std::string port = std::to_string(sshd.port());
    EXPECT_EQ(std::string(error.what()),
              "2 of 2 hosts cannot be used:\n"
              "  host 'a' cannot reach host 'c' over ssh as mpirun will (ssh -p " + port + " -i " +
                  sshd.user_key() + " -o UserKnownHostsFile=" + sshd.known_hosts() +
                  " -o StrictHostKeyChecking=yes -o BatchMode=yes 127.0.0.4): ssh: connect to "
                  "host 127.0.0.4 port " + port +
                  ": Connection refused; the hosts of an MPI job must reach each other over ssh\n"
                  "  host 'c' (" + std::string(getpwuid(getuid())->pw_name) + "@127.0.0.4:" + port +
                  "): connect failed: Connection refused");
  }
}

// The fingerprints behind an unreachable peer: b's key "changed", so a cannot
// reach b and b refuses the connection itself; both are reported.
TEST(ProvisionRealTest, EveryHostThatFailsIsReportedWithItsOwnError) {
  SshdFixture sshd({"127.0.0.2", "127.0.0.3"});
  const Inventory inventory = RealInventory(sshd, sshd.dir() + "/remote-work");
  const std::string other = sshd.dir() + "/other_ed25519";
  SshdFixture::GenerateKey(other);
  const std::string b = "[127.0.0.3]:" + std::to_string(sshd.port());
  std::ofstream(sshd.known_hosts(), std::ios::trunc)
      << "[127.0.0.2]:" << sshd.port() << " " << sshd.host_key_line() << "\n"
      << b << " " << SshdFixture::ReadFile(other + ".pub");
  const std::string trainer = sshd.dir() + "/trainer";
  std::ofstream(trainer) << "#!/bin/sh\n";
  try {
    ProvisionReal(inventory, MakeProvisionPlan(inventory.work_dir, trainer, ""));
    FAIL() << "provisioned a host whose key changed";
  } catch (const std::exception& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("2 of 2 hosts cannot be used:\n", 0), 0u) << message;
    EXPECT_NE(message.find("\n  host 'a' cannot reach host 'b' over ssh"), std::string::npos) << message;
    EXPECT_NE(message.find("\n  host 'b' (" + std::string(getpwuid(getuid())->pw_name) + "@127.0.0.3:" +
                           std::to_string(sshd.port()) + "): host key CHANGED: " + sshd.known_hosts() + " has " +
                           Fingerprint(other + ".pub") + ", the server offered " +
                           Fingerprint(sshd.dir() + "/host_ed25519.pub") + ";"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace dmlbench
