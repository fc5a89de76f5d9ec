// CsvField: plain text stays as it is; a comma, quote, CR or LF makes a
// quoted field with doubled quotes, which a CSV reader reads back unchanged.
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

}  // namespace
}  // namespace dmlbench
