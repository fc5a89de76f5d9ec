// Tests of orchestrator/launch/host_pool_lock: a second sweep on any host of
// a pool is refused with the first sweep's process and database, and the
// hosts are free again once the first lock is gone.
#include "orchestrator/launch/host_pool_lock.h"

#include <unistd.h>

#include <fstream>
#include <optional>

#include <gtest/gtest.h>

#include "orchestrator/launch/launcher.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

std::string ErrorOf(const std::vector<std::string>& files, const std::string& holder) {
  try {
    HostPoolLock lock(files, holder, "hosts a, b");
  } catch (const LaunchError& e) {
    return e.what();
  }
  return "locked";
}

TEST(HostPoolLockTest, ASecondSweepOnASharedHostIsRefusedWithTheFirstsHolder) {
  testing::TempDir dir;
  const std::string a = dir / "locks/a.lock";
  const std::string b = dir / "locks/b.lock";
  const std::string c = dir / "locks/c.lock";
  std::optional<HostPoolLock> first;
  first.emplace(std::vector<std::string>{b, a}, "process 1 (database /x/one.db)", "hosts a, b");
  EXPECT_EQ(ErrorOf({c, b}, "process 2 (database /x/two.db)"),
            "hosts a, b: in use by another sweep (process 1 (database /x/one.db)); wait for it to end or stop it");
  EXPECT_EQ(ErrorOf({c}, "process 2"), "locked");  // a host the first sweep does not hold
  first.reset();
  EXPECT_EQ(ErrorOf({a, b, c}, "process 2"), "locked");
}

TEST(HostPoolLockTest, AnUncreatableLockFileIsNamed) {
  testing::TempDir dir;
  std::ofstream(dir / "file") << "x";
  const std::string file = dir / "file/sub.lock";
  EXPECT_EQ(ErrorOf({file}, "p"), "hosts a, b: cannot create the lock file " + file + ": Not a directory");
}

TEST(HostPoolLockTest, HolderTextNamesTheProcessAndTheAbsoluteDatabase) {
  const std::string text = SweepHolderText("results.db");
  EXPECT_EQ(text.rfind("process " + std::to_string(::getpid()) + " (database /", 0), 0u) << text;
  EXPECT_NE(text.find("/results.db)"), std::string::npos) << text;
}

}  // namespace
}  // namespace dmlbench
