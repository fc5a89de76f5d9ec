// Tests of orchestrator/launch/ssh/ssh_launcher: the real trainer through real
// mpirun, started over SSH on "remote" hosts of a real sshd (SshdFixture).
#include "orchestrator/launch/ssh/ssh_launcher.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "orchestrator/launch/job_output.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

std::string UserName() { return getpwuid(getuid())->pw_name; }

LaunchSpec TinyRun(int ranks, const std::string& key, int epochs = 1) {
  LaunchSpec spec;
  spec.run_key = key;
  spec.ranks = ranks;
  spec.trainer_args = {"--synthetic", "2000", "--epochs", std::to_string(epochs), "--batch-size", "10",
                       "--max-iterations-per-epoch", "5", "--events", "-", "--no-evaluate", "--quiet"};
  spec.timeout_s = 120;
  return spec;
}

struct Collected {
  LaunchResult result;
  std::vector<std::string> lines;
};

Collected LaunchAndCollect(Launcher& launcher, const LaunchSpec& spec,
              const std::function<void(size_t)>& after_line = nullptr,
              std::atomic<bool>* cancel = nullptr) {
  std::atomic<bool> never{false};
  Collected collected;
  collected.result = launcher.Launch(
      spec,
      [&](std::string_view line) {
        collected.lines.emplace_back(line);
        if (after_line) after_line(collected.lines.size());
      },
      cancel != nullptr ? *cancel : never);
  return collected;
}

std::string EventOf(const std::string& line) { return nlohmann::json::parse(line).at("event"); }

// Processes whose command line mentions `needle` (the fixture's temp dir).
int ProcessesMentioning(const std::string& needle) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == getpid()) continue;
    std::string cmdline = SshdFixture::ReadFile((entry.path() / "cmdline").string());
    if (cmdline.find(needle) != std::string::npos && cmdline.find("dmlbench-trainer") != std::string::npos) {
      ++count;
    }
  }
  return count;
}

bool NoTrainerLeftWithin(const std::string& needle, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (ProcessesMentioning(needle) > 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

TEST(SshLauncherTest, RunsTheTrainerAcrossTwoRemoteHosts) {
  SshdFixture sshd;
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  const std::vector<HostFacts> facts = launcher->Prepare();
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0].name, "a");
  EXPECT_EQ(facts[0].address, "127.0.0.2");
  EXPECT_EQ(facts[1].name, "b");
  EXPECT_EQ(facts[0].provider, "local");
  EXPECT_EQ(facts[0].tags_json, R"({"provider":"local"})");
  EXPECT_EQ(facts[0].mpi_version.rfind("mpirun (Open MPI) ", 0), 0u);
  EXPECT_EQ(launcher->TrainerSha256().size(), 64u);
  const size_t log_before = sshd.log().size();

  const Collected run = LaunchAndCollect(*launcher, TinyRun(2, "two-hosts"));
  EXPECT_EQ(run.result.exit_code, 0) << run.result.failure_reason << "\n" << run.result.stderr_tail;
  EXPECT_EQ(run.result.failure_reason, "");
  EXPECT_FALSE(run.result.host_failure);
  EXPECT_EQ(run.result.hosts, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(run.lines.size(), 3u);
  EXPECT_EQ(EventOf(run.lines[0]), "run_start");
  EXPECT_EQ(nlohmann::json::parse(run.lines[0]).at("world_size"), 2);
  EXPECT_EQ(EventOf(run.lines[1]), "epoch");
  EXPECT_EQ(EventOf(run.lines[2]), "run_end");
  EXPECT_EQ(nlohmann::json::parse(run.lines[2]).at("status"), "ok");
  // mpirun reached host b over ssh to start its daemon there.
  EXPECT_NE(sshd.log().substr(log_before).find("on 127.0.0.3 port " + std::to_string(sshd.port())),
            std::string::npos);
  EXPECT_NE(run.result.command_line.find("OMPI_MCA_rtc_hwloc_vmhole=none mpirun --hostfile " + sshd.dir() +
                                         "/remote-work/.hostfile-two-hosts -np 2"),
            std::string::npos);
  // The hostfile is removed after the run.
  EXPECT_FALSE(std::filesystem::exists(sshd.dir() + "/remote-work/.hostfile-two-hosts"));
}

TEST(SshLauncherTest, FetchesEachRanksOutputFromTheHostsItRanOn) {
  SshdFixture sshd;
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(2, "output", 2);
  spec.output_dir = sshd.dir() + "/local-output";
  std::filesystem::create_directories(spec.output_dir);
  const Collected run = LaunchAndCollect(*launcher, spec);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.failure_reason << "\n" << run.result.stderr_tail;
  ASSERT_EQ(run.lines.size(), 4u);
  EXPECT_NE(run.result.command_line.find(" --output-filename " + sshd.dir() +
                                         "/remote-work/.output-output-local-output:nojobid "),
            std::string::npos)
      << run.result.command_line;

  // Rank 0's file holds exactly the event lines that were streamed.
  std::string streamed;
  for (const std::string& line : run.lines) streamed += line + "\n";
  const std::vector<JobOutputFile> files = ListJobOutput(spec.output_dir);
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(SshdFixture::ReadFile(files[0].path), streamed);
  EXPECT_EQ(*files[2].rank, 1);
  EXPECT_EQ(files[2].stream, "stdout");
  EXPECT_EQ(SshdFixture::ReadFile(files[2].path), "");
  EXPECT_FALSE(files[4].rank.has_value());
  // The remote copies are gone; the marker line of the process group is not
  // part of mpirun's stderr.
  for (const auto& entry : std::filesystem::directory_iterator(sshd.dir() + "/remote-work")) {
    EXPECT_EQ(entry.path().filename().string().rfind(".output-", 0), std::string::npos) << entry.path();
  }
  EXPECT_EQ(SshdFixture::ReadFile(files[4].path).find("dmlbench-pgid="), std::string::npos);
}

TEST(SshLauncherTest, OutputOfAFailingRankIsFetchedToo) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(1, "failing-output");
  spec.trainer_args.insert(spec.trainer_args.end(), {"--architecture", "nope"});
  spec.output_dir = sshd.dir() + "/local-output";
  std::filesystem::create_directories(spec.output_dir);
  const Collected run = LaunchAndCollect(*launcher, spec);
  EXPECT_EQ(run.result.exit_code, 1);
  EXPECT_EQ(SshdFixture::ReadFile(spec.output_dir + "/rank.0/stderr"),
            "dmlbench-trainer: error: unknown architecture \"nope\" (expected ring, mpi, ps or p2p)\n");
  EXPECT_NE(SshdFixture::ReadFile(spec.output_dir + "/mpirun.stderr").find("dmlbench-trainer: error: unknown"),
            std::string::npos);
}

TEST(SshLauncherTest, RunsOnTheHostsCopyOfTheDataset) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER, DMLBENCH_DATASET_DIR);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(1, "dataset");
  spec.trainer_args = {"--dataset", DMLBENCH_DATASET_DIR, "--epochs", "1", "--batch-size", "100",
                       "--max-iterations-per-epoch", "2", "--events", "-", "--no-evaluate", "--quiet"};
  spec.dataset_dir = DMLBENCH_DATASET_DIR;
  const Collected run = LaunchAndCollect(*launcher, spec);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.failure_reason << "\n" << run.result.stderr_tail;
  const nlohmann::json start = nlohmann::json::parse(run.lines.at(0));
  EXPECT_EQ(start.at("config").at("dataset"), sshd.dir() + "/remote-work/dataset");
  EXPECT_EQ(start.at("train_samples"), 60000);
  // The host keeps it decoded for the next run, in its own work directory.
  EXPECT_NE(run.result.command_line.find(" --dataset-cache " + sshd.dir() + "/remote-work/dataset-cache"),
            std::string::npos)
      << run.result.command_line;
  EXPECT_FALSE(std::filesystem::is_empty(sshd.dir() + "/remote-work/dataset-cache"));
}

TEST(SshLauncherTest, RunsAtOnceOnDisjointHosts) {
  SshdFixture sshd;
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml", 1, "max_concurrent_runs = 2"),
                                  DMLBENCH_TRAINER);
  EXPECT_EQ(launcher->max_concurrent_runs(), 2);
  launcher->Prepare();
  Collected first, second;
  std::thread other([&] { second = LaunchAndCollect(*launcher, TinyRun(1, "second")); });
  first = LaunchAndCollect(*launcher, TinyRun(1, "first"));
  other.join();
  EXPECT_EQ(first.result.exit_code, 0) << first.result.stderr_tail;
  EXPECT_EQ(second.result.exit_code, 0) << second.result.stderr_tail;
  ASSERT_EQ(first.result.hosts.size(), 1u);
  ASSERT_EQ(second.result.hosts.size(), 1u);
  EXPECT_NE(first.result.hosts[0], second.result.hosts[0]);
}

TEST(SshLauncherTest, TimeoutKillsTheRemoteProcessGroup) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(1, "timeout", 1000000);
  spec.timeout_s = 4;
  const Collected run = LaunchAndCollect(*launcher, spec);
  EXPECT_TRUE(run.result.timed_out);
  EXPECT_FALSE(run.result.host_failure);
  EXPECT_EQ(run.result.failure_reason, "timed out after 4 s; the remote process group was killed");
  EXPECT_TRUE(NoTrainerLeftWithin(sshd.dir(), 5));
  // The host is free and usable again.
  EXPECT_EQ(LaunchAndCollect(*launcher, TinyRun(1, "after-timeout")).result.exit_code, 0);
}

TEST(SshLauncherTest, CancelStopsTheRun) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  std::atomic<bool> cancel{false};
  const Collected run =
      LaunchAndCollect(*launcher, TinyRun(1, "cancel", 1000000), [&](size_t lines) { if (lines == 3) cancel = true; }, &cancel);
  EXPECT_TRUE(run.result.interrupted);
  EXPECT_FALSE(run.result.timed_out);
  EXPECT_EQ(run.result.failure_reason, "interrupted; the remote process group was killed");
  EXPECT_TRUE(NoTrainerLeftWithin(sshd.dir(), 5));
}

// Error paths of ssh_launcher.cc follow.

TEST(SshLauncherTest, FailingRemoteCommandKeepsTheStderrTail) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(1, "failing");
  spec.trainer_args.insert(spec.trainer_args.end(), {"--architecture", "nope"});
  const Collected run = LaunchAndCollect(*launcher, spec);
  EXPECT_EQ(run.result.exit_code, 1);
  EXPECT_FALSE(run.result.host_failure);
  EXPECT_EQ(run.result.failure_reason,
            "mpirun exited with status 1: dmlbench-trainer: error: unknown architecture \"nope\" "
            "(expected ring, mpi, ps or p2p)");
  EXPECT_NE(run.result.stderr_tail.find("mpirun detected that one or more processes exited with non-zero status"),
            std::string::npos);
  EXPECT_EQ(run.result.stderr_tail.find("dmlbench-pgid="), std::string::npos);
}

TEST(SshLauncherTest, LostHostIsMarkedDownAndTheRetryRunsElsewhere) {
  SshdFixture sshd;
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  const Collected lost =
      LaunchAndCollect(*launcher, TinyRun(1, "lost", 1000000), [&](size_t lines) { if (lines == 2) sshd.StopHost(0); });
  EXPECT_TRUE(lost.result.host_failure);
  EXPECT_EQ(lost.result.hosts, std::vector<std::string>{"a"});
  EXPECT_EQ(lost.result.failure_reason,
            "host 'a' (" + UserName() + "@127.0.0.2:" + std::to_string(sshd.port()) +
                "): connection lost: Socket error: disconnected");
  const Collected retry = LaunchAndCollect(*launcher, TinyRun(1, "lost"));
  EXPECT_EQ(retry.result.exit_code, 0) << retry.result.failure_reason;
  EXPECT_EQ(retry.result.hosts, std::vector<std::string>{"b"});
  const Collected too_big = LaunchAndCollect(*launcher, TinyRun(2, "too-big"));
  EXPECT_EQ(too_big.result.exit_code, -1);
  EXPECT_FALSE(too_big.result.host_failure);
  EXPECT_EQ(too_big.result.failure_reason, "needs 2 ranks but the hosts that are up have 1 slots (down: a)");
}

TEST(SshLauncherTest, UnreachableHeadIsMarkedDown) {
  SshdFixture sshd;
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  sshd.StopHost(0);
  const Collected run = LaunchAndCollect(*launcher, TinyRun(1, "refused"));
  EXPECT_TRUE(run.result.host_failure);
  EXPECT_EQ(run.result.failure_reason, "host 'a' (" + UserName() + "@127.0.0.2:" +
                                           std::to_string(sshd.port()) +
                                           "): connect failed: Connection refused");
  EXPECT_EQ(LaunchAndCollect(*launcher, TinyRun(1, "refused")).result.hosts, std::vector<std::string>{"b"});
}

TEST(SshLauncherTest, LaunchBeforePrepareFails) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  const Collected run = LaunchAndCollect(*launcher, TinyRun(1, "early"));
  EXPECT_EQ(run.result.exit_code, -1);
  EXPECT_EQ(run.result.failure_reason,
            "the SSH hosts were not prepared (Prepare() was not called or failed)");
}

TEST(SshLauncherTest, DatasetThatWasNotProvisionedFails) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml"), DMLBENCH_TRAINER);
  launcher->Prepare();
  LaunchSpec spec = TinyRun(1, "no-dataset");
  spec.dataset_dir = DMLBENCH_DATASET_DIR;
  EXPECT_EQ(LaunchAndCollect(*launcher, spec).result.failure_reason,
            std::string("dataset directory ") + DMLBENCH_DATASET_DIR +
                " was not provisioned on the hosts (none was)");
}

TEST(SshLauncherTest, PrepareThrowsLaunchErrorNamingTheHost) {
  SshdFixture sshd({"127.0.0.2"});
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  std::ofstream(sshd.known_hosts()) << "";
  auto launcher = MakeSshLauncher(inventory, DMLBENCH_TRAINER);
  try {
    launcher->Prepare();
    FAIL() << "prepared a host with an unknown key";
  } catch (const LaunchError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("host 'a' (" + UserName() + "@127.0.0.2:" +
                                                  std::to_string(sshd.port()) + "): unknown host key SHA256:",
                                              0),
              0u)
        << error.what();
  }
}

TEST(SshLauncherTest, TooManyRanksForThePool) {
  SshdFixture sshd({"127.0.0.2"});
  auto launcher = MakeSshLauncher(sshd.WriteInventory("hosts.toml", 2), DMLBENCH_TRAINER);
  launcher->Prepare();
  EXPECT_EQ(LaunchAndCollect(*launcher, TinyRun(3, "big")).result.failure_reason,
            "needs 3 ranks but the hosts that are up have 2 slots");
}

}  // namespace
}  // namespace dmlbench
