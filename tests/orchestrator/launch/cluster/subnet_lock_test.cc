// The lock `cluster up` takes while it chooses its subnet: in a root-only
// directory, never through a link, and a holder waited for with its pid
// named, for a bounded time. No root needed: a directory of the test's
// stands in for /run/dmlbench.
#include "orchestrator/launch/cluster/subnet_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "orchestrator/launch/cluster/netns.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

const InterruptCheck kNever = [] {};

TEST(SubnetLockTest, LivesInTheRootOnlyRuntimeDirectory) { EXPECT_EQ(SubnetLockPath(), "/run/dmlbench/subnet.lock"); }

TEST(SubnetLockTest, TheHolderWritesItsPid) {
  testing::TempDir dir;
  const std::string path = dir / "run/subnet.lock";
  std::ostringstream notes;
  {
    const SubnetLock lock(path, 1, notes, kNever);
    EXPECT_EQ(testing::ReadFile(path), std::to_string(::getpid()) + "\n");
  }
  EXPECT_EQ(notes.str(), "");
  EXPECT_EQ(fs::status(dir / "run").permissions(), fs::perms(0755));
}

// Error paths of subnet_lock.cc follow.

TEST(SubnetLockErrorTest, AHolderIsWaitedForWithItsPidThenRefused) {
  testing::TempDir dir;
  const std::string path = dir / "subnet.lock";
  testing::WriteFile(path, "4242\n");
  const int held = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  std::ostringstream notes;
  try {
    const SubnetLock lock(path, 0.3, notes, kNever);
    ADD_FAILURE() << "took a lock another holds";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()), "waited 0.3 s for " + path +
                                             ", held by pid 4242 (another `dmlbench cluster up` choosing its subnet); "
                                             "run `dmlbench cluster up` again once it is done");
  }
  EXPECT_EQ(notes.str(), "dmlbench: waiting for " + path +
                             ", held by pid 4242 (another `dmlbench cluster up` choosing its subnet)\n");
  ::close(held);
}

TEST(SubnetLockErrorTest, AWaitEndsWhenInterrupted) {
  testing::TempDir dir;
  const std::string path = dir / "subnet.lock";
  testing::WriteFile(path, "");
  const int held = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  std::ostringstream notes;
  EXPECT_THROW(SubnetLock(path, 60, notes, [] { throw ClusterError("interrupted"); }), ClusterError);
  ::close(held);
}

TEST(SubnetLockErrorTest, ALinkAtItsPathIsNotFollowed) {
  testing::TempDir dir;
  const std::string path = dir / "subnet.lock";
  testing::WriteFile(dir / "elsewhere", "kept");
  fs::create_symlink(dir / "elsewhere", path);
  std::ostringstream notes;
  try {
    const SubnetLock lock(path, 1, notes, kNever);
    ADD_FAILURE() << "locked through a link";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()), "cannot lock " + path + ": Too many levels of symbolic links");
  }
  EXPECT_EQ(testing::ReadFile(dir / "elsewhere"), "kept");
}

TEST(SubnetLockErrorTest, ADirectoryOthersCanWriteIsRefused) {
  testing::TempDir dir;
  fs::create_directories(dir / "shared");
  fs::permissions(dir / "shared", fs::perms::all);
  std::ostringstream notes;
  try {
    const SubnetLock lock(dir / "shared/subnet.lock", 1, notes, kNever);
    ADD_FAILURE() << "locked in a directory others can write";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()), "cannot lock in " + (dir / "shared") +
                                             ": not a directory of this user's alone (a link, another user's, or "
                                             "writable by others)");
  }
}

}  // namespace
}  // namespace dmlbench
