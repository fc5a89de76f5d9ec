// RunLock on real files: one holder per database file, whatever path names
// it (a symlink, "./", "..", a hard link); released with its owner; and the
// errors of a file that cannot be opened for writing.
#include "orchestrator/run/run_lock.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "orchestrator/run/runner.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;

// The message of the RunnerError that locking `path` raises, or "locked".
std::string ErrorOf(const std::string& path) {
  try {
    const RunLock lock(path);
  } catch (const RunnerError& e) {
    return e.what();
  }
  return "locked";
}

TEST(RunLockTest, EveryPathToTheFileMeetsTheSameLock) {
  TempDir dir;
  const std::string db = dir / "results.db";
  std::filesystem::create_directories(dir / "sub");
  const RunLock held(db);
  std::filesystem::create_symlink(db, dir / "symlink.db");
  std::filesystem::create_hard_link(db, dir / "hardlink.db");
  for (const std::string& other :
       {db, dir / "symlink.db", dir / "hardlink.db", dir / "./results.db", dir / "sub/../results.db"}) {
    EXPECT_EQ(ErrorOf(other), other + ": another `dmlbench run` is using this database");
    EXPECT_TRUE(held.Covers(other)) << other;
  }
  EXPECT_EQ(ErrorOf(dir / "other.db"), "locked");
  EXPECT_FALSE(held.Covers(dir / "other.db"));
}

TEST(RunLockTest, TheLockEndsWithItsOwnerAndCreatesAnEmptyDatabase) {
  TempDir dir;
  const std::string db = dir / "results.db";
  std::optional<RunLock> first(std::in_place, db);
  EXPECT_TRUE(std::filesystem::exists(db));
  EXPECT_EQ(std::filesystem::file_size(db), 0u);
  first.reset();
  EXPECT_EQ(ErrorOf(db), "locked");
}

// ---- error paths of run_lock.cc follow ------------------------------------

TEST(RunLockTest, ADatabaseInAMissingDirectoryIsNotWritable) {
  TempDir dir;
  EXPECT_EQ(ErrorOf(dir / "missing/results.db"),
            dir / "missing/results.db: database is not writable: No such file or directory");
}

}  // namespace
}  // namespace dmlbench
