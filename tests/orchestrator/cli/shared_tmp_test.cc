// What a local sweep keeps on this machine stays in the user's own
// directories, never at a predictable name in a /tmp shared with other
// users: the decoded dataset goes to $XDG_CACHE_HOME/dmlbench/dataset-cache,
// and links another user placed in the temporary directory are neither
// followed nor written through. Through the real `dmlbench run` of the real
// trainer on Fashion-MNIST; the second user (nobody) needs root.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/core/subprocess.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

class SharedTmpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(tmp_);
    fs::permissions(tmp_, fs::perms::all | fs::perms::sticky_bit);
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"tmp\"\n[defaults]\nmax_iterations_per_epoch = 5\n[matrix]\n"
                       "workers = [1]\n[execution]\ntimeout_s = 120\n");
  }

  CommandOutput Run() {
    return RunCommand({"env", "TMPDIR=" + tmp_, "XDG_CACHE_HOME=" + cache_, testing::DmlbenchProgram(), "--db",
                       dir_ / "results.db", "run", dir_ / "matrix.toml", "--trainer", DMLBENCH_TRAINER,
                       "--dataset-dir", DMLBENCH_DATASET_DIR},
                      300);
  }

  // Runs `body` as the user nobody in a child process; whether it succeeded.
  static bool AsNobody(const std::function<bool()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) _exit(::setgid(kNobody) == 0 && ::setuid(kNobody) == 0 && body() ? 0 : 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  testing::TempDir dir_;
  std::string tmp_ = dir_ / "tmp";      // the temporary directory every user shares
  std::string cache_ = dir_ / "cache";  // this user's cache directory
};

TEST_F(SharedTmpTest, TheDatasetIsDecodedIntoTheUsersCacheDirectory) {
  const CommandOutput run = Run();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const fs::path cache = fs::path(cache_) / "dmlbench" / "dataset-cache";
  ASSERT_TRUE(fs::is_directory(cache));
  EXPECT_EQ(fs::status(cache).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  int copies = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(cache)) copies += entry.path().extension() == ".dataset";
  EXPECT_EQ(copies, 1);
  EXPECT_TRUE(fs::is_empty(tmp_)) << "the sweep left something in the shared temporary directory";
}

// Another user places a link at the name the cache once had, pointing at a
// directory of root's: the sweep writes nothing through it.
TEST_F(SharedTmpTest, ALinkAnotherUserPlacedInTmpIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to be another user";
  const std::string target = dir_ / "roots";
  fs::create_directories(target);
  fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const std::string link = tmp_ + "/dmlbench-0-datasets";
  ASSERT_TRUE(AsNobody([&] { return ::symlink(target.c_str(), link.c_str()) == 0; }));
  const CommandOutput run = Run();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_TRUE(fs::is_empty(target)) << "the sweep wrote through another user's link";
}

}  // namespace
}  // namespace dmlbench
