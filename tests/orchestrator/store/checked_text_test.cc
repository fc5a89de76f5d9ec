// What the store reads from a database before building a path, a number or
// a name from it (checked_text.h): run keys, layer widths, paths inside the
// logs directory, plain names, and the columns read as numbers, flags and
// words.
#include "orchestrator/store/checked_text.h"

#include <gtest/gtest.h>

#include <limits>
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

const std::string kPlace = "r.db: run 3: runs.workers";

TEST(CheckedTextTest, ColumnsOfTheirTypeAndRange) {
  EXPECT_EQ(ColumnPlace("r.db", "run 3", "runs.workers"), kPlace);
  EXPECT_EQ(CheckedInteger(kPlace, Cell{std::int64_t{4}}, 1, 64), 4);
  EXPECT_EQ(CheckedReal(kPlace, Cell{std::int64_t{2}}, 0), 2.0);
  EXPECT_EQ(CheckedReal(kPlace, Cell{-0.5}, -kNoBound), -0.5);
  EXPECT_EQ(CheckedPositiveReal(kPlace, Cell{0.1}, 1), 0.1);
  EXPECT_TRUE(CheckedFlag(kPlace, Cell{std::int64_t{1}}));
  EXPECT_EQ(CheckedWord(kPlace, Cell{std::string("validation")}, {"calibration", "validation"}), "validation");
  EXPECT_EQ(CheckedState<RunState>(kPlace, Cell{std::string("failed")}), RunState::kFailed);
  EXPECT_EQ(CheckedNumberText(kPlace, "0.15", 0, 4096), 0.15);
  EXPECT_EQ(CheckedNumberText(kPlace, "1e-05", 0, 4096), 1e-05);
}

TEST(CheckedTextErrorTest, AValueOfTheWrongTypeOrRangeNamesThePlaceAndTheValue) {
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  const auto inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ErrorOf([] { CheckedInteger(kPlace, Cell{std::string("x")}, 1, 64); }),
            kPlace + " is not an integer from 1 to 64, got \"x\"");
  EXPECT_EQ(ErrorOf([] { CheckedInteger(kPlace, Cell{std::int64_t{0}}, 1, 64); }),
            kPlace + " is not an integer from 1 to 64, got 0");
  EXPECT_EQ(ErrorOf([] { CheckedInteger(kPlace, Cell{2.5}, 1, 64); }),
            kPlace + " is not an integer from 1 to 64, got 2.5");
  EXPECT_EQ(ErrorOf([] { CheckedInteger(kPlace, Cell{nullptr}, 1, 64); }),
            kPlace + " is not an integer from 1 to 64, got NULL");
  EXPECT_EQ(ErrorOf([&] { CheckedReal(kPlace, Cell{inf}, -kNoBound); }), kPlace + " is not a finite number, got inf");
  EXPECT_EQ(ErrorOf([&] { CheckedReal(kPlace, Cell{nan}, 0); }).substr(0, kPlace.size() + 43),
            kPlace + " is not a finite number of at least 0, got ");
  EXPECT_EQ(ErrorOf([] { CheckedReal(kPlace, Cell{std::string("1.5x")}, 0, 1); }),
            kPlace + " is not a finite number from 0 to 1, got \"1.5x\"");
  EXPECT_EQ(ErrorOf([] { CheckedPositiveReal(kPlace, Cell{0.0}); }),
            kPlace + " is not a finite number above 0, got 0");
  EXPECT_EQ(ErrorOf([] { CheckedFlag(kPlace, Cell{std::int64_t{2}}); }), kPlace + " is not 0 or 1, got 2");
  EXPECT_EQ(ErrorOf([] { CheckedWord(kPlace, Cell{std::string("x\x1b")}, {"calibration", "validation"}); }),
            kPlace + " is not one of calibration or validation, got \"x\\u001b\"");
  EXPECT_EQ(ErrorOf([] { CheckedState<RunState>(kPlace, Cell{std::int64_t{1}}); }),
            kPlace + " is not one of pending, running, complete, failed or interrupted, got 1");
  for (const char* text : {"abc", "", "-1", " 1", "1x", "5000", "nan", "inf"}) {
    EXPECT_EQ(ErrorOf([&] { CheckedNumberText(kPlace, text, 0, 4096); }),
              kPlace + " is not a decimal number from 0 to 4096, got \"" + std::string(text) + "\"")
        << text;
  }
}

}  // namespace
}  // namespace dmlbench
