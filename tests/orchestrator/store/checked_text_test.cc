// What the store reads from a database before building a path, a number or
// a name from it (checked_text.h): run keys, layer widths, paths inside the
// logs directory, plain names.
#include "orchestrator/store/checked_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const StoreError& error) {
    return error.what();
  }
  return "";
}

const std::string kKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(CheckedTextTest, ARunKeyIs64LowercaseHexDigits) {
  EXPECT_TRUE(IsRunKey(kKey));
  EXPECT_FALSE(IsRunKey(kKey.substr(1)));
  EXPECT_FALSE(IsRunKey(kKey + "0"));
  EXPECT_FALSE(IsRunKey("0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsRunKey(std::string(55, '/') + "../victim"));
  EXPECT_EQ(CheckedRunKey("r.db", 3, kKey), kKey);
}

// Error paths of checked_text.cc follow.

TEST(CheckedTextErrorTest, APathMadeOfDotsIsNotARunKey) {
  EXPECT_EQ(ErrorOf([] { CheckedRunKey("r.db", 3, std::string(55, '/') + "../victim"); }),
            "r.db: run 3: runs.run_key is not 64 lowercase hex digits, got \"" + std::string(55, '/') +
                "../victim\"");
}

TEST(CheckedTextTest, LayerWidths) {
  EXPECT_EQ(CheckedLayerWidths("r.db", 1, "128,32"), (std::vector<int>{128, 32}));
  EXPECT_EQ(CheckedLayerWidths("r.db", 1, "65536"), (std::vector<int>{65536}));
  EXPECT_EQ(CheckedLayerWidths("r.db", 1, "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1").size(), 16u);
}

TEST(CheckedTextErrorTest, EachMalformedLayerListNamesTheDatabaseTheRunAndTheColumn) {
  for (const char* hidden :
       {"x", "128,,32", "12345678901234567890", "", "-5", "0", "65537", "128,", ",128", " 128", "1,1,1,1,1,1,1,1,1,1,1,"
                                                                                             "1,1,1,1,1,1"}) {
    EXPECT_EQ(ErrorOf([&] { CheckedLayerWidths("r.db", 7, hidden); }),
              "r.db: run 7: runs.hidden is not a list of 1 to 16 layer widths (integers 1..65536 separated by "
              "commas, e.g. \"128,32\"), got \"" + std::string(hidden) + "\"")
        << hidden;
  }
}

TEST(CheckedTextTest, PathsInside) {
  EXPECT_EQ(PathInside("r.db", "r.db.logs", kKey + "/attempt-1/rank-0.stdout.gz", "f"),
            "r.db.logs/" + kKey + "/attempt-1/rank-0.stdout.gz");
}

TEST(CheckedTextErrorTest, APathThatLeavesItsFolderIsRefused) {
  for (const char* path : {"../x", "a/../../x", "/etc/passwd", "", "a//b", "./a", "a/.", "a/"}) {
    EXPECT_EQ(ErrorOf([&] { PathInside("r.db", "r.db.logs", path, "attempt_logs.file of attempt 2"); }),
              "r.db: attempt_logs.file of attempt 2 is not a path inside r.db.logs, got \"" + std::string(path) + "\"")
        << path;
  }
}

TEST(CheckedTextTest, PlainNames) {
  EXPECT_TRUE(IsPlainName("runs"));
  EXPECT_TRUE(IsPlainName("_x9"));
  EXPECT_FALSE(IsPlainName("../../x"));
  EXPECT_FALSE(IsPlainName("9x"));
  EXPECT_FALSE(IsPlainName(""));
  EXPECT_FALSE(IsPlainName("a b"));
  EXPECT_FALSE(IsPlainName(std::string(129, 'a')));
}

}  // namespace
}  // namespace dmlbench
