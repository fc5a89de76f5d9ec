// CsvField: plain text stays as it is; a comma, quote, CR or LF makes a
// quoted field with doubled quotes, which a CSV reader reads back unchanged;
// other control characters are written visibly.
#include "orchestrator/core/csv.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

TEST(CsvFieldTest, PlainTextIsLeftAlone) {
  EXPECT_EQ(CsvField("ring w=4 b=100"), "ring w=4 b=100");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("0.25"), "0.25");
}

TEST(CsvFieldTest, SeparatorsQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\rhere"), "\"cr\rhere\"");
}

// A CSV file is printed to terminals too: ESC, BEL and the other control
// characters but CR, LF and TAB are written as visible escapes.
TEST(CsvFieldTest, ControlCharactersAreWrittenVisibly) {
  EXPECT_EQ(CsvField("a\x1b[2J\x07" "b"), "a\\e[2J\\x07b");
  EXPECT_EQ(CsvField("tab\there"), "tab\there");
  EXPECT_EQ(CsvField("x,\x1b"), "\"x,\\e\"");
  EXPECT_EQ(CsvField("c1 \xc2\x9b"), "c1 \\u009b");
}

}  // namespace
}  // namespace dmlbench
