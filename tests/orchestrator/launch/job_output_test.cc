// Tests of orchestrator/launch/job_output: the files of an output directory
// in rank order, whatever else it holds; which directories a killed
// orchestrator left.
#include "orchestrator/launch/job_output.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;

TEST(JobOutputTest, ListsRanksInNumericOrderStdoutFirstMpirunLast) {
  TempDir dir;
  for (const char* rank : {"rank.10", "rank.02", "rank.00"}) {
    std::filesystem::create_directories(dir / rank);
    testing::WriteFile(dir / (std::string(rank) + "/stderr"), "e");
    testing::WriteFile(dir / (std::string(rank) + "/stdout"), "o");
  }
  testing::WriteFile(dir / kMpirunStderrFile, "m");
  // Not of the layout: ignored.
  std::filesystem::create_directories(dir / "rank.x");
  testing::WriteFile(dir / "rank.x/stdout", "");
  testing::WriteFile(dir / "notes", "");
  std::filesystem::create_directories(dir / "rank.3");  // a rank whose files are missing

  std::vector<std::string> listed;
  for (const JobOutputFile& file : ListJobOutput(dir.path())) {
    listed.push_back((file.rank ? std::to_string(*file.rank) : std::string("mpirun")) + " " + file.stream + " " +
                     testing::ReadFile(file.path));
  }
  EXPECT_EQ(listed, (std::vector<std::string>{"0 stdout o", "0 stderr e", "2 stdout o", "2 stderr e", "10 stdout o",
                                              "10 stderr e", "mpirun stderr m"}));
}

TEST(JobOutputTest, MissingDirectoryHoldsNothing) {
  TempDir dir;
  EXPECT_TRUE(ListJobOutput(dir / "absent").empty());
  EXPECT_TRUE(ListJobOutput(dir.path()).empty());
}

TEST(JobOutputTest, MpirunIsToldToDropTheJobNumber) {
  EXPECT_EQ(OutputFilenameArgs("/tmp/out"), (std::vector<std::string>{"--output-filename", "/tmp/out:nojobid"}));
}

// Both forms of an output directory's name, here and on the hosts, are
// orphans when their orchestrator is gone, and only then; nothing else is.
TEST(JobOutputTest, OnlyOutputDirectoriesOfGoneOrchestratorsAreOrphans) {
  const std::string gone = std::to_string(testing::DeadPid());
  const std::string running = std::to_string(::getpid());
  const std::string key = std::string(64, 'a');
  EXPECT_TRUE(OrphanedOutputDir("dmlbench-output-" + gone + "-abcdef"));
  EXPECT_TRUE(OrphanedOutputDir(".output-" + key + "-dmlbench-output-" + gone + "-abcdef"));
  EXPECT_FALSE(OrphanedOutputDir("dmlbench-output-" + running + "-abcdef"));
  EXPECT_FALSE(OrphanedOutputDir(".output-" + key + "-dmlbench-output-" + running + "-abcdef"));
  EXPECT_FALSE(OrphanedOutputDir("dmlbench-output-" + gone));         // no suffix
  EXPECT_FALSE(OrphanedOutputDir("dmlbench-output-XXXXXX-old-form"));
  EXPECT_FALSE(OrphanedOutputDir(".output-" + key));
  EXPECT_FALSE(OrphanedOutputDir("x-dmlbench-output-" + gone + "-abcdef"));
  EXPECT_FALSE(OrphanedOutputDir(".mpirun-version.123"));
}

}  // namespace
}  // namespace dmlbench
