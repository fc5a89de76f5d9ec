// Tests of orchestrator/launch/job_output: the files of an output directory
// in rank order, whatever else it holds.
#include "orchestrator/launch/job_output.h"

#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace dmlbench
