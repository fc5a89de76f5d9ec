// Tests of orchestrator/core/shell_quote: each quoted word must reach a real POSIX
// shell as exactly one literal argument.
#include "orchestrator/core/shell_quote.h"

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

// What `sh` prints for `printf '[%s]\n' <quoted words>`.
std::string ThroughShell(const std::vector<std::string>& words) {
  const std::string script = "printf '[%s]\\n' " + ShellJoin(words);
  const std::string command = "sh -c " + ShellQuote(script);
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[256];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

TEST(ShellQuoteTest, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(ShellQuote("mpirun"), "mpirun");
  EXPECT_EQ(ShellQuote("--mca"), "--mca");
  EXPECT_EQ(ShellQuote("/a/b-c_d.e:f,g=h@i%j+k"), "/a/b-c_d.e:f,g=h@i%j+k");
}

TEST(ShellQuoteTest, SpecialWordsAreSingleQuoted) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$(touch x)"), "'$(touch x)'");
  EXPECT_EQ(ShellQuote("~"), "'~'");
}

TEST(ShellQuoteTest, HostileWordsReachTheShellLiterally) {
  const std::string marker =
      (std::filesystem::temp_directory_path() / ("dmlbench-pwned-" + std::to_string(getpid()))).string();
  const std::vector<std::string> words = {
      "with space", "it's", "double\"quote", "semi;colon", "$(touch " + marker + ")",
      "`touch " + marker + "`", "new\nline", "$HOME", "a\\b", "*", "", "-n", "&& touch " + marker};
  std::string expected;
  for (const std::string& word : words) expected += "[" + word + "]\n";
  EXPECT_EQ(ThroughShell(words), expected);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(ShellQuoteTest, HomeRelativePathsExpandOnlyTheHome) {
  EXPECT_EQ(ShellQuotePath("~/.cache/dmlbench"), "\"$HOME\"/.cache/dmlbench");
  EXPECT_EQ(ShellQuotePath("~/a b"), "\"$HOME\"/'a b'");
  EXPECT_EQ(ShellQuotePath("~"), "\"$HOME\"");
  EXPECT_EQ(ShellQuotePath("/abs/$(x)"), "'/abs/$(x)'");
  const std::string home = std::getenv("HOME");
  EXPECT_EQ(ThroughShell({}).empty(), false);
  FILE* pipe = popen(("sh -c " + ShellQuote("printf %s " + ShellQuotePath("~/a b"))).c_str(), "r");
  char buffer[512] = {};
  const size_t n = fread(buffer, 1, sizeof buffer - 1, pipe);
  pclose(pipe);
  EXPECT_EQ(std::string(buffer, n), home + "/a b");
}

}  // namespace
}  // namespace dmlbench
