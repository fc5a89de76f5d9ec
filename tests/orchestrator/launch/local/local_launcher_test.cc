// LocalLauncher through the real mpirun, with small shell scripts in place
// of the trainer (the program path is the seam): streaming, stderr tail,
// exit codes, timeout, cancel, oversubscription, and the error paths.
#include "orchestrator/launch/local/local_launcher.h"

#include "orchestrator/core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "common/sha256.h"
#include "orchestrator/launch/job_output.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;
using testing::WriteScript;

// True while a process with this pid runs: exists and is not a zombie
// waiting for its (re)parent to reap it.
bool Alive(pid_t pid) {
  const std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

pid_t ReadPid(const std::string& path) {
  for (int i = 0; i < 100; ++i) {
    const std::string text = testing::ReadFile(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

class LocalLauncherTest : public ::testing::Test {
 protected:
  LocalLauncher MakeLauncher(const std::string& trainer, std::ostream* warnings = nullptr) {
    LocalLauncherOptions options;
    options.mpirun = DMLBENCH_MPIRUN;
    options.trainer = trainer;
    options.warnings = warnings ? warnings : &warnings_;
    return LocalLauncher(options);
  }

  LaunchSpec Spec(int ranks = 1, double timeout_s = 60) {
    LaunchSpec spec;
    spec.run_key = "k";
    spec.ranks = ranks;
    spec.trainer_args = {"--events", "-"};
    spec.timeout_s = timeout_s;
    return spec;
  }

  TempDir dir_;
  std::ostringstream warnings_;
  std::atomic<bool> no_cancel_{false};
};

TEST_F(LocalLauncherTest, StreamsStdoutLinesAsTheyArrive) {
  // The trainer prints its second line only once the test has received the
  // first (it creates `go` from the callback): a launcher that delivered
  // lines only at the end would make the trainer give up and say so.
  const std::string go = dir_ / "go";
  const std::string trainer = WriteScript(
      dir_ / "trainer", "echo first \"$@\"\ni=0\nwhile [ ! -e " + go + " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
                        "[ -e " + go + " ] || echo 'the first line was not delivered while the job ran'\n"
                        "printf 'second\\nno newline at end'\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  std::vector<std::string> lines;
  const LaunchResult result = launcher.Launch(
      Spec(),
      [&](std::string_view line) {
        lines.emplace_back(line);
        if (lines.size() == 1) testing::WriteFile(go, "");
      },
      no_cancel_);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "first --events -");
  EXPECT_EQ(lines[1], "second");
  EXPECT_EQ(lines[2], "no newline at end");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.failure_reason, "");
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(result.hosts, std::vector<std::string>{"local"});
  EXPECT_EQ(result.command_line, std::string(DMLBENCH_MPIRUN) + " -np 1 " + trainer + " --events -");
}

TEST_F(LocalLauncherTest, KeepsEachRanksStdoutAndStderrApart) {
  // Rank 1 writes a line in pieces while rank 0 prints its lines: mpirun's
  // merged stdout may interleave them, each rank's own file holds its output
  // whole.
  const std::string trainer = WriteScript(
      dir_ / "trainer",
      "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then\n"
      "  echo '{\"event\":\"a\"}'; sleep 0.2; echo '{\"event\":\"b\"}'; echo 'rank 0 complains' >&2\n"
      "else\n"
      "  printf 'rank 1 '; sleep 0.4; printf 'writes slowly\\n'; printf 'no newline' >&2; sleep 0.2; exit 3\n"
      "fi\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  LaunchSpec spec = Spec(2);
  spec.output_dir = dir_ / "output";
  std::filesystem::create_directories(spec.output_dir);
  std::vector<std::string> lines;
  const LaunchResult result =
      launcher.Launch(spec, [&](std::string_view line) { lines.emplace_back(line); }, no_cancel_);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.command_line.find(" -np 2 --output-filename " + spec.output_dir + ":nojobid " + trainer + " "),
            std::string::npos)
      << result.command_line;
  EXPECT_FALSE(lines.empty());

  const std::vector<JobOutputFile> files = ListJobOutput(spec.output_dir);
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(testing::ReadFile(files[0].path), "{\"event\":\"a\"}\n{\"event\":\"b\"}\n");
  EXPECT_EQ(testing::ReadFile(files[1].path), "rank 0 complains\n");
  EXPECT_EQ(*files[2].rank, 1);
  EXPECT_EQ(testing::ReadFile(files[2].path), "rank 1 writes slowly\n");
  EXPECT_EQ(testing::ReadFile(files[3].path), "no newline");
  EXPECT_FALSE(files[4].rank.has_value());
  // mpirun's own stderr holds the ranks' stderr and its own report.
  const std::string mpirun = testing::ReadFile(files[4].path);
  EXPECT_NE(mpirun.find("rank 0 complains"), std::string::npos) << mpirun;
  EXPECT_NE(mpirun.find("exit code"), std::string::npos) << mpirun;
  EXPECT_EQ(result.stderr_tail, mpirun.substr(mpirun.size() - result.stderr_tail.size()));
}

TEST_F(LocalLauncherTest, RankZeroStdoutFileHoldsExactlyTheEventLinesOfTheRealTrainer) {
  LocalLauncher launcher = MakeLauncher(DMLBENCH_TRAINER);
  LaunchSpec spec = Spec(2);
  spec.trainer_args = {"--synthetic", "2000", "--epochs", "2", "--batch-size", "10", "--hidden", "16",
                       "--max-iterations-per-epoch", "5", "--events", "-", "--quiet"};
  spec.output_dir = dir_ / "output";
  std::filesystem::create_directories(spec.output_dir);
  std::string streamed;
  const LaunchResult result =
      launcher.Launch(spec, [&](std::string_view line) { (streamed += line) += '\n'; }, no_cancel_);
  ASSERT_EQ(result.exit_code, 0) << result.stderr_tail;
  EXPECT_EQ(std::count(streamed.begin(), streamed.end(), '\n'), 4);  // run_start, 2 epochs, run_end
  EXPECT_EQ(testing::ReadFile(spec.output_dir + "/rank.0/stdout"), streamed);
  EXPECT_EQ(testing::ReadFile(spec.output_dir + "/rank.1/stdout"), "");
  EXPECT_EQ(testing::ReadFile(spec.output_dir + "/rank.1/stderr"), "");
}

TEST_F(LocalLauncherTest, MpirunGetsTheLaunchEnvironment) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo \"vmhole=$OMPI_MCA_rtc_hwloc_vmhole\"\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  std::vector<std::string> lines;
  launcher.Launch(Spec(), [&](std::string_view line) { lines.emplace_back(line); }, no_cancel_);
  EXPECT_EQ(lines, std::vector<std::string>{"vmhole=none"});
}

TEST_F(LocalLauncherTest, DatasetDirectoryIsPassedToTheTrainer) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo \"$@\"\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  LaunchSpec spec = Spec();
  spec.dataset_dir = dir_.path();
  std::string line;
  const LaunchResult result = launcher.Launch(spec, [&](std::string_view l) { line = l; }, no_cancel_);
  EXPECT_EQ(line, "--events - --dataset " + dir_.path());
}

TEST_F(LocalLauncherTest, TheDatasetCacheGoesWithTheDatasetOnly) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo \"$@\"\n");
  LocalLauncherOptions options;
  options.mpirun = DMLBENCH_MPIRUN;
  options.trainer = trainer;
  options.dataset_cache_dir = std::string(dir_ / "cache");
  LocalLauncher launcher(options);
  LaunchSpec spec = Spec();
  std::string line;
  launcher.Launch(spec, [&](std::string_view l) { line = l; }, no_cancel_);
  EXPECT_EQ(line, "--events -");  // synthetic: nothing to decode
  spec.dataset_dir = dir_.path();
  launcher.Launch(spec, [&](std::string_view l) { line = l; }, no_cancel_);
  EXPECT_EQ(line, "--events - --dataset " + dir_.path() + " --dataset-cache " + std::string(dir_ / "cache"));
}

TEST_F(LocalLauncherTest, FailingTrainerKeepsTheTailOfStderr) {
  const std::string trainer = WriteScript(
      dir_ / "trainer", "head -c 20000 /dev/zero | tr '\\0' x >&2\necho ' dmlbench-trainer: error: boom' >&2\nexit 3\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  const LaunchResult result = launcher.Launch(Spec(), [](std::string_view) {}, no_cancel_);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.failure_reason, "mpirun exited with status 3");
  EXPECT_LE(result.stderr_tail.size(), 8192u);
  EXPECT_GE(result.stderr_tail.size(), 4096u);
  EXPECT_NE(result.stderr_tail.find("x dmlbench-trainer: error: boom\n"), std::string::npos);
}

TEST_F(LocalLauncherTest, TimeoutStopsTheWholeJob) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo $$ > " + (dir_ / "pid") + "\nexec sleep 60\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  const LaunchResult result = launcher.Launch(Spec(1, 3), [](std::string_view) {}, no_cancel_);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(result.failure_reason, "timed out after 3 s");
  EXPECT_NE(result.exit_code, 0);
  const pid_t rank = ReadPid(dir_ / "pid");
  ASSERT_GT(rank, 0);
  EXPECT_FALSE(Alive(rank)) << "the rank outlived its timeout";
}

TEST_F(LocalLauncherTest, CancelStopsTheJob) {
  const std::string trainer = WriteScript(dir_ / "trainer", "echo $$ > " + (dir_ / "pid") + "\nexec sleep 60\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    // Once the rank runs (mpirun may take a while to start on a busy machine).
    for (int i = 0; i < 600 && testing::ReadFile(dir_ / "pid").empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    cancel = true;
  });
  const LaunchResult result = launcher.Launch(Spec(), [](std::string_view) {}, cancel);
  canceller.join();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.failure_reason, "interrupted");
  const pid_t rank = ReadPid(dir_ / "pid");
  ASSERT_GT(rank, 0);
  EXPECT_FALSE(Alive(rank));
}

TEST_F(LocalLauncherTest, ExceptionFromTheLineCallbackStopsTheJob) {
  const std::string trainer =
      WriteScript(dir_ / "trainer", "echo $$ > " + (dir_ / "pid") + "\necho line\nexec sleep 60\n");
  LocalLauncher launcher = MakeLauncher(trainer);
  EXPECT_THROW(launcher.Launch(Spec(), [](std::string_view) { throw std::runtime_error("disk full"); }, no_cancel_),
               std::runtime_error);
  const pid_t rank = ReadPid(dir_ / "pid");
  ASSERT_GT(rank, 0);
  // The group was killed; mpirun's rank may need a moment to follow.
  for (int i = 0; i < 100 && Alive(rank); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Alive(rank));
}

TEST_F(LocalLauncherTest, MoreRanksThanCoresOversubscribeWithOneWarning) {
  const int cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const std::string trainer =
      WriteScript(dir_ / "trainer", "[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] && echo \"$OMPI_COMM_WORLD_SIZE\"\nexit 0\n");
  std::ostringstream warnings;
  LocalLauncher launcher = MakeLauncher(trainer, &warnings);
  std::string size;
  LaunchResult result = launcher.Launch(Spec(cores + 1), [&](std::string_view l) { size = l; }, no_cancel_);
  EXPECT_EQ(result.failure_reason, "");
  EXPECT_EQ(size, std::to_string(cores + 1));
  EXPECT_NE(result.command_line.find(" --oversubscribe "), std::string::npos);
  const std::string expected = "dmlbench: warning: " + std::to_string(cores + 1) + " ranks on " +
                               std::to_string(cores) + " cores: oversubscribing, timings include CPU contention\n";
  EXPECT_EQ(warnings.str(), expected);
  launcher.Launch(Spec(cores + 1), [](std::string_view) {}, no_cancel_);
  EXPECT_EQ(warnings.str(), expected);
  result = launcher.Launch(Spec(1), [](std::string_view) {}, no_cancel_);
  EXPECT_EQ(result.command_line.find("--oversubscribe"), std::string::npos);
}

TEST_F(LocalLauncherTest, PrepareReportsThisMachine) {
  LocalLauncher launcher = MakeLauncher(WriteScript(dir_ / "trainer", "exit 0\n"));
  const std::vector<HostFacts> hosts = launcher.Prepare();
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].name, "local");
  EXPECT_EQ(hosts[0].provider, "local");
  EXPECT_EQ(hosts[0].cores, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GT(hosts[0].memory_bytes, 0);
  EXPECT_EQ(hosts[0].kernel.rfind("Linux ", 0), 0u);
  EXPECT_EQ(hosts[0].mpi_version.rfind("mpirun (Open MPI) ", 0), 0u);
}

TEST_F(LocalLauncherTest, TrainerSha256IsTheFilesDigest) {
  const std::string trainer = WriteScript(dir_ / "trainer", "exit 0\n");
  EXPECT_EQ(MakeLauncher(trainer).TrainerSha256(), Sha256FileHex(trainer));
}

// A sweep asks before every run: a trainer rebuilt in place (a new file
// under the same name) is hashed again, an untouched one is not.
TEST_F(LocalLauncherTest, TrainerSha256FollowsATrainerRebuiltInPlace) {
  const std::string trainer = WriteScript(dir_ / "trainer", "exit 0\n");
  const LocalLauncher launcher = MakeLauncher(trainer);
  const std::string before = launcher.TrainerSha256();
  EXPECT_EQ(launcher.TrainerSha256(), before);
  std::filesystem::remove(trainer);
  WriteScript(trainer, "exit 1\n");
  EXPECT_NE(launcher.TrainerSha256(), before);
  EXPECT_EQ(launcher.TrainerSha256(), Sha256FileHex(trainer));
}

// ---- error paths of local_launcher.cc follow -----------------------------

TEST_F(LocalLauncherTest, MissingMpirunFailsTheLaunchWithAReason) {
  LocalLauncherOptions options;
  options.mpirun = dir_ / "no-mpirun";
  options.trainer = WriteScript(dir_ / "trainer", "exit 0\n");
  LocalLauncher launcher(options);
  const LaunchResult result = launcher.Launch(Spec(), [](std::string_view) {}, no_cancel_);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_EQ(result.failure_reason, "cannot start " + (dir_ / "no-mpirun") + ": not found or not executable");
}

TEST_F(LocalLauncherTest, PrepareWithoutMpirunThrows) {
  LocalLauncherOptions options;
  options.mpirun = dir_ / "no-mpirun";
  options.trainer = WriteScript(dir_ / "trainer", "exit 0\n");
  try {
    LocalLauncher(options).Prepare();
    FAIL() << "prepared without mpirun";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "local: cannot run `" + (dir_ / "no-mpirun") + " --version`: " +
                                         (dir_ / "no-mpirun") + ": not found or not executable");
  }
}

TEST_F(LocalLauncherTest, PrepareWithoutTrainerThrows) {
  try {
    MakeLauncher(dir_ / "no-trainer").Prepare();
    FAIL() << "prepared without a trainer";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "local: trainer " + (dir_ / "no-trainer") + " is not an executable file");
  }
}

TEST_F(LocalLauncherTest, TrainerSha256OfAMissingTrainerThrows) {
  try {
    MakeLauncher(dir_ / "no-trainer").TrainerSha256();
    FAIL() << "hashed a missing trainer";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), "local: cannot read " + (dir_ / "no-trainer") + ": No such file or directory");
  }
}

}  // namespace
}  // namespace dmlbench
