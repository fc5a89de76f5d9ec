// Tests of orchestrator/core/toml_reader: the excerpt under a located
// message (tabs and multi-byte characters keep the caret under its column),
// and the kit's checks through a minimal reader.
#include "orchestrator/core/toml_reader.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

class TestError : public LocatedError {
 public:
  using LocatedError::LocatedError;
};

class TestReader : public TomlReader {
 public:
  using TomlReader::TomlReader;

 protected:
  [[noreturn]] void Throw(const std::string& message, const std::string& excerpt) const override {
    throw TestError(message, excerpt);
  }
};

// The message and excerpt of the error `check` raises on `text`.
template <typename Check>
std::pair<std::string, std::string> ErrorOf(const std::string& text, Check check) {
  TestReader reader("f.toml", text);
  try {
    check(reader, reader.Parse());
  } catch (const TestError& e) {
    return {e.what(), e.excerpt()};
  }
  return {"no error", ""};
}

TEST(SourceExcerptTest, CaretUnderTheColumn) {
  EXPECT_EQ(SourceExcerpt("a = 1\nworkers = [0]\n", 2, 12), "workers = [0]\n           ^\n");
}

TEST(SourceExcerptTest, TabsAreKeptSoTheCaretLinesUp) {
  EXPECT_EQ(SourceExcerpt("\tx = 1\n", 1, 6), "\tx = 1\n\t    ^\n");
}

TEST(SourceExcerptTest, MultiByteCharactersCountOnce) {
  // "é" is two bytes, one column.
  EXPECT_EQ(SourceExcerpt("name = \"é\" x\n", 1, 12), "name = \"é\" x\n           ^\n");
}

TEST(SourceExcerptTest, MissingLineGivesNothing) {
  EXPECT_EQ(SourceExcerpt("a = 1\n", 3, 1), "");
  EXPECT_EQ(SourceExcerpt("a = 1\n", 0, 1), "");
}

TEST(SourceExcerptTest, CarriageReturnIsNotShown) {
  EXPECT_EQ(SourceExcerpt("a = 1\r\nb = 2\r\n", 2, 5), "b = 2\n    ^\n");
}

TEST(TomlReaderTest, SyntaxErrorIsLocatedWithItsExcerpt) {
  const auto [message, excerpt] = ErrorOf("x = \n", [](const TestReader&, const toml::table&) {});
  EXPECT_EQ(message, "f.toml:1:5: Error while parsing key-value pair: expected value, saw '\\n'");
  EXPECT_EQ(excerpt, "x = \n    ^\n");
}

TEST(TomlReaderTest, UnknownKeySuggestsTheClosestOrListsAll) {
  const std::vector<std::string_view> known = {"workers", "servers"};
  auto check = [&](const TestReader& r, const toml::table& t) { r.CheckKeys(t, known, "[t]"); };
  EXPECT_EQ(ErrorOf("worker = 1\n", check).first, "f.toml:1:1: unknown key 'worker' in [t], did you mean 'workers'?");
  EXPECT_EQ(ErrorOf("zzz = 1\n", check).first,
            "f.toml:1:1: unknown key 'zzz' in [t], expected one of: workers, servers");
}

TEST(TomlReaderTest, TypeAndRangeMessagesNameWhatWasFound) {
  auto integer = [](const TestReader& r, const toml::table& t) { r.ReadInteger(*t.get("n"), "n", 1, 9); };
  EXPECT_EQ(ErrorOf("n = \"4\"\n", integer).first, "f.toml:1:5: n must be an integer, got string \"4\"");
  EXPECT_EQ(ErrorOf("n = 10\n", integer).first, "f.toml:1:5: n must be between 1 and 9, got 10");
  auto choice = [](const TestReader& r, const toml::table& t) { r.ReadChoice(*t.get("c"), "c", {"a", "b"}); };
  EXPECT_EQ(ErrorOf("c = \"x\"\n", choice).first, "f.toml:1:5: c must be one of \"a\", \"b\", got \"x\"");
  auto name = [](const TestReader& r, const toml::table& t) { r.ReadName(*t.get("s"), "s"); };
  EXPECT_EQ(ErrorOf("s = \"\"\n", name).first, "f.toml:1:5: s must not be empty, got \"\"");
}

TEST(TomlReaderTest, FormatVersionMissingOrOtherIsNamed) {
  auto version = [](const TestReader& r, const toml::table& t) { r.CheckFormatVersion(t, 1); };
  EXPECT_EQ(ErrorOf("format_version = 1\n", version).first, "no error");
  EXPECT_EQ(ErrorOf("x = 1\n", version).first, "f.toml:1:1: format_version is missing (expected 1)");
  EXPECT_EQ(ErrorOf("format_version = 2\n", version).first, "f.toml:1:18: format_version must be 1, got 2");
  EXPECT_EQ(ErrorOf("format_version = \"1\"\n", version).first,
            "f.toml:1:18: format_version must be 1, got string \"1\"");
}

}  // namespace
}  // namespace dmlbench

namespace dmlbench {
namespace {

std::string Dotted(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

// A table header dotted 50,000 levels deep (a 100 KB file) overflowed the
// stack inside toml++; now it is refused where it stands, before parsing.
TEST(TomlReaderTest, DeeplyDottedHeaderIsRefusedBeforeParsing) {
  const auto [message, excerpt] = ErrorOf("x = 1\n[" + Dotted(50000) + "]\n", [](auto&, auto&&) {});
  EXPECT_EQ(message, "f.toml:2:1: a key of 50000 dotted parts; at most 100 are supported");
}

TEST(TomlReaderTest, DeeplyDottedKeysAreRefusedInPairsAndInlineTables) {
  EXPECT_EQ(ErrorOf("  " + Dotted(101) + " = 1\n", [](auto&, auto&&) {}).first,
            "f.toml:1:3: a key of 101 dotted parts; at most 100 are supported");
  EXPECT_EQ(ErrorOf("t = { b = 1, " + Dotted(200) + " = 2 }\n", [](auto&, auto&&) {}).first,
            "f.toml:1:1: a key of 200 dotted parts; at most 100 are supported");
  EXPECT_EQ(ErrorOf("[[" + Dotted(101) + "]]\n", [](auto&, auto&&) {}).first,
            "f.toml:1:1: a key of 101 dotted parts; at most 100 are supported");
}

TEST(TomlReaderTest, DotsOutsideKeysDoNotCount) {
  std::string floats = "x = [";
  for (int i = 0; i < 500; ++i) floats += "1.5, ";
  floats += "2.5]\n";
  std::string text = floats + "s = \"" + Dotted(300) + "\"\n" + "m = \"\"\"\n" + Dotted(300) + " = 1\n\"\"\"\n" +
                     "l = '" + Dotted(300) + "' # " + Dotted(300) + "\n" + "t = { k = [1.5, \"" + Dotted(300) +
                     "\"] }\n" + "[" + Dotted(100) + "]\n";
  EXPECT_EQ(ErrorOf(text, [](auto&, auto&&) {}).first, "no error");
}

}  // namespace
}  // namespace dmlbench
