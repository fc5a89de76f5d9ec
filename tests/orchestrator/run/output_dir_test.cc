// Tests of orchestrator/run/output_dir: an attempt's output directory goes
// with its owner, and one whose orchestrator was killed goes at the next sweep.
#include "orchestrator/run/output_dir.h"

#include <unistd.h>

#include <filesystem>
#include <optional>

#include <gtest/gtest.h>

#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

TEST(OutputDirTest, NameCarriesTheProcessAndGoesWithItsOwner) {
  testing::TempDir dir;
  std::optional<OutputDir> output;
  output.emplace(dir.path());
  const std::string name = std::filesystem::path(output->path()).filename().string();
  EXPECT_EQ(name.rfind("dmlbench-output-" + std::to_string(::getpid()) + "-", 0), 0u) << name;
  ASSERT_TRUE(std::filesystem::is_directory(output->path()));
  const std::string path = output->path();
  output.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(OutputDirTest, OnlyDirectoriesOfGoneProcessesAreRemoved) {
  testing::TempDir dir;
  const std::string orphan = dir / ("dmlbench-output-" + std::to_string(testing::DeadPid()) + "-abcdef");
  std::filesystem::create_directories(orphan + "/rank.0");
  const OutputDir mine(dir.path());
  const std::string other = dir / "dmlbench-output-XXXXXX-old-form";
  const std::string unrelated = dir / "something-else";
  std::filesystem::create_directories(other);
  std::filesystem::create_directories(unrelated);
  EXPECT_EQ(RemoveOrphanedOutputDirs(dir.path()), 1);
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_TRUE(std::filesystem::exists(mine.path()));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(unrelated));
}

}  // namespace
}  // namespace dmlbench
