// Tests of orchestrator/core/text_file: whole files read and written, in
// place and by rename, and what a failure names.
#include "orchestrator/core/text_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

class TextFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dmlbench-text-file-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(TextFileTest, WrittenTextReadsBackWhole) {
  const std::string text = "line 1\nline 2 without an end";
  EXPECT_EQ(WriteTextFile(Path("a"), text), std::nullopt);
  EXPECT_EQ(ReadTextFile(Path("a")), text);
  // In place: the text replaces what was there, it is not appended.
  EXPECT_EQ(WriteTextFile(Path("a"), "short"), std::nullopt);
  EXPECT_EQ(ReadTextFile(Path("a")), "short");
}

TEST_F(TextFileTest, AMissingFileReadsAsEmpty) { EXPECT_EQ(ReadTextFile(Path("missing")), ""); }

TEST_F(TextFileTest, ReplacedTextLeavesNoTemporaryBehind) {
  std::ofstream(Path("state")) << "old";
  EXPECT_EQ(ReplaceTextFile(Path("state"), "new"), std::nullopt);
  EXPECT_EQ(ReadTextFile(Path("state")), "new");
  EXPECT_FALSE(fs::exists(Path("state.tmp")));
}

// Error paths of text_file.cc follow.

TEST_F(TextFileTest, AFailedWriteNamesTheFileAndTheReason) {
  const std::optional<WriteFailure> failure = WriteTextFile(Path("no/such/dir/file"), "x");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->path, Path("no/such/dir/file"));
  EXPECT_EQ(failure->reason, "No such file or directory");
}

TEST_F(TextFileTest, AFailedReplaceNamesTheTemporaryItCouldNotWrite) {
  const std::optional<WriteFailure> failure = ReplaceTextFile(Path("no/such/dir/state"), "x");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->path, Path("no/such/dir/state.tmp"));
  EXPECT_EQ(failure->reason, "No such file or directory");
}

TEST_F(TextFileTest, AFailedRenameNamesTheTarget) {
  // A directory cannot be replaced by a file.
  fs::create_directories(Path("target/inside"));
  const std::optional<WriteFailure> failure = ReplaceTextFile(Path("target"), "x");
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->path, Path("target"));
  EXPECT_EQ(failure->reason, "Is a directory");
}

}  // namespace
}  // namespace dmlbench
