// Tests of orchestrator/core/subprocess: output capture, exit codes,
// timeouts that kill the whole group, the start failures and their codes,
// entering a network namespace, and children started from many threads at
// once (the fork-safety contract).
#include "orchestrator/core/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using testing::WriteScript;

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

TEST(SubprocessTest, RunCommandCapturesOutputAndStatus) {
  const CommandOutput ok = RunCommand({"sh", "-c", "echo out; echo err >&2"}, 10);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "out\n");
  EXPECT_EQ(ok.err, "err\n");
  EXPECT_EQ(RunCommand({"sh", "-c", "exit 4"}, 10).exit_code, 4);
}

TEST(SubprocessTest, MergedStderrKeepsTheOrderOfWrites) {
  ChildOptions options;
  options.merge_stderr = true;
  const CommandOutput both = RunCommand({"sh", "-c", "echo one; echo two >&2; echo three"}, 10, options);
  EXPECT_EQ(both.exit_code, 0);
  EXPECT_EQ(both.out, "one\ntwo\nthree\n");
  EXPECT_EQ(both.err, "");
}

TEST(SubprocessTest, KilledBySignalIs128PlusTheSignal) {
  EXPECT_EQ(RunCommand({"sh", "-c", "kill -9 $$"}, 10).exit_code, 128 + SIGKILL);
}

TEST(SubprocessTest, TimeoutKillsTheWholeProcessGroup) {
  TempDir dir;
  // The shell and a grandchild: both must be gone when RunCommand returns.
  const std::string script = WriteScript(dir / "hang", "sleep 300 &\necho $! > " + (dir / "grandchild") +
                                                           "\necho $$ > " + (dir / "child") + "\nwait\n");
  EXPECT_EQ(RunCommand({script}, 0.5).exit_code, -1);
  const pid_t child = std::stoi(ReadFile(dir / "child"));
  const pid_t grandchild = std::stoi(ReadFile(dir / "grandchild"));
  EXPECT_FALSE(ProcessExists(child));
  // The grandchild got SIGTERM with the group; it is reaped by init, so it may
  // linger as a zombie for a moment: wait for it to go.
  for (int i = 0; i < 200 && ProcessExists(grandchild); ++i) ::usleep(10000);
  EXPECT_FALSE(ProcessExists(grandchild));
}

TEST(SubprocessTest, LineSplitterPassesCompleteLinesAndTheLastOne) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  const LineSplitter::Sink sink = [&](std::string_view line) { lines.emplace_back(line); };
  splitter.Add("a\nb", sink);
  splitter.Add("c\n\nd", sink);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bc", ""}));
  splitter.Finish(sink);
  EXPECT_EQ(lines.back(), "d");
}

// A process printing one line without a newline was buffered whole (538 MB
// after 317 MB received); a line is now cut at max_line and its rest dropped.
TEST(SubprocessTest, LineSplitterCutsAnOverlongLineAndDropsItsRest) {
  LineSplitter splitter(4);
  std::vector<std::string> lines;
  const LineSplitter::Sink sink = [&](std::string_view line) { lines.emplace_back(line); };
  splitter.Add("ok\nabcdef", sink);
  for (int i = 0; i < 1000; ++i) splitter.Add("0123456789", sink);
  splitter.Add("xyz\nnext\nlonger-in-one-chunk\ntail", sink);
  EXPECT_EQ(lines, (std::vector<std::string>{"ok", "abcd", "next", "long"}));
  splitter.Add("-and-more", sink);
  splitter.Finish(sink);
  EXPECT_EQ(lines.back(), "tail");
  splitter.Add("after\n", sink);
  EXPECT_EQ(lines.back(), "afte");
}

TEST(SubprocessTest, TailBufferKeepsTheLastBytes) {
  TailBuffer tail(4);
  tail.Add("abc");
  EXPECT_EQ(tail.str(), "abc");
  tail.Add("defghij");
  EXPECT_EQ(tail.str(), "ghij");
  for (int i = 0; i < 100; ++i) tail.Add("xy");
  EXPECT_EQ(tail.str(), "xyxy");
}

// Children started from 8 threads at once, many times, half of them failing
// to exec: the contract is that nothing between fork and exec allocates, so
// no child can inherit a lock another thread held and hang.
TEST(SubprocessTest, StartsChildrenFromEightThreadsAtOnce) {
  TempDir dir;
  const std::string not_a_program = dir / "not-a-program";
  WriteFile(not_a_program, "this is not an executable format\n");
  ::chmod(not_a_program.c_str(), 0755);
  constexpr int kThreads = 8;
  constexpr int kRounds = 40;
  std::atomic<int> ok{0}, exec_failed{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Allocation in every thread, all the time, so that fork happens
        // while some thread holds the allocator's lock.
        std::vector<std::string> noise(64, std::string(100, 'x'));
        if ((round + t) % 2 == 0) {
          const CommandOutput output = RunCommand({"true"}, 30);
          (output.exit_code == 0 ? ok : wrong)++;
        } else {
          const CommandOutput output = RunCommand({not_a_program}, 30);
          (output.exit_code == 127 && output.err == not_a_program + ": Exec format error" ? exec_failed : wrong)++;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), kThreads * kRounds / 2);
  EXPECT_EQ(exec_failed.load(), kThreads * kRounds / 2);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SubprocessTest, EntersANetworkNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::string name = "dmlb-subproc-" + std::to_string(::getpid() % 100000);
  ASSERT_EQ(RunCommand({"ip", "netns", "add", name}, 30).exit_code, 0);
  ChildOptions options;
  options.netns_file = "/run/netns/" + name;
  // A fresh namespace has only a loopback device, and it is down.
  const CommandOutput inside = RunCommand({"ip", "-o", "link", "show"}, 30, options);
  RunCommand({"ip", "netns", "delete", name}, 30);
  EXPECT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_NE(inside.out.find("1: lo:"), std::string::npos) << inside.out;
  EXPECT_EQ(inside.out.find("2: "), std::string::npos) << inside.out;
}

// ---- error paths of subprocess.cc follow ---------------------------------

TEST(SubprocessTest, MissingProgramIs127) {
  const CommandOutput output = RunCommand({"dmlbench-no-such-program"}, 10);
  EXPECT_EQ(output.exit_code, 127);
  EXPECT_EQ(output.err, "dmlbench-no-such-program: not found or not executable");
}

TEST(SubprocessTest, MissingNamespaceIs126AndNamesIt) {
  ChildOptions options;
  options.netns_file = "/run/netns/dmlb-no-such-namespace";
  const CommandOutput output = RunCommand({"true"}, 10, options);
  EXPECT_EQ(output.exit_code, 126);
  EXPECT_EQ(output.err, "true: cannot enter /run/netns/dmlb-no-such-namespace: No such file or directory");
}

TEST(SubprocessTest, UnwritableCgroupIs126AndNamesIt) {
  TempDir dir;
  ChildOptions options;
  options.cgroup_procs_file = dir / "missing/cgroup.procs";
  const CommandOutput output = RunCommand({"true"}, 10, options);
  EXPECT_EQ(output.exit_code, 126);
  EXPECT_EQ(output.err, "true: cannot join cgroup " + (dir / "missing/cgroup.procs") +
                            ": No such file or directory");
}

TEST(SubprocessTest, CgroupThatRefusesTheWriteIs126) {
  // A plain file opens for writing but is not a cgroup: use /dev/full,
  // whose every write fails with ENOSPC, to reach the child's write.
  ChildOptions options;
  options.cgroup_procs_file = "/dev/full";
  const CommandOutput output = RunCommand({"true"}, 10, options);
  EXPECT_EQ(output.exit_code, 126);
  EXPECT_EQ(output.err, "true: cannot join cgroup /dev/full: No space left on device");
}

TEST(SubprocessTest, StartsInTheWorkingDirectory) {
  TempDir dir;
  ChildOptions options;
  options.working_dir = dir.path();
  const CommandOutput output = RunCommand({"pwd"}, 10, options);
  EXPECT_EQ(output.exit_code, 0);
  EXPECT_EQ(output.out, dir.path() + "\n");
}

// An extra variable replaces one of the same name this process has, and
// the child sees each name once; the others it inherits.
TEST(SubprocessTest, AnExtraVariableReplacesTheInheritedOneOfItsName) {
  ASSERT_EQ(::setenv("DMLBENCH_SUBPROCESS_TEST", "inherited", 1), 0);
  ASSERT_EQ(::setenv("DMLBENCH_SUBPROCESS_TEST_KEPT", "kept", 1), 0);
  ChildOptions options;
  options.extra_env = {"DMLBENCH_SUBPROCESS_TEST=extra", "DMLBENCH_SUBPROCESS_TEST_NEW=new"};
  const CommandOutput output = RunCommand({"env"}, 10, options);
  ::unsetenv("DMLBENCH_SUBPROCESS_TEST");
  ::unsetenv("DMLBENCH_SUBPROCESS_TEST_KEPT");
  ASSERT_EQ(output.exit_code, 0);
  std::vector<std::string> ours;
  std::istringstream lines(output.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("DMLBENCH_SUBPROCESS_TEST")) ours.push_back(line);
  }
  std::sort(ours.begin(), ours.end());
  EXPECT_EQ(ours, (std::vector<std::string>{"DMLBENCH_SUBPROCESS_TEST=extra", "DMLBENCH_SUBPROCESS_TEST_KEPT=kept",
                                            "DMLBENCH_SUBPROCESS_TEST_NEW=new"}));
}

TEST(SubprocessTest, MissingWorkingDirectoryIs126AndNamesIt) {
  TempDir dir;
  ChildOptions options;
  options.working_dir = dir / "missing";
  const CommandOutput output = RunCommand({"true"}, 10, options);
  EXPECT_EQ(output.exit_code, 126);
  EXPECT_EQ(output.err, "true: cannot enter directory " + (dir / "missing") + ": No such file or directory");
}

}  // namespace
}  // namespace dmlbench
