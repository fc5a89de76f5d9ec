// Tests of orchestrator/report/formats: escaping for HTML, LaTeX and
// Markdown, exact numbers, and one table in all four formats.
#include "orchestrator/report/formats.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

QueryResult Sample() {
  QueryResult table;
  table.columns = {"name", "n", "t_s"};
  table.rows = {{std::string("ring | <b>&"), std::int64_t{4}, 0.1},
                {std::string("ps k=1, \"x\"\nnext"), nullptr, 12.5}};
  return table;
}

TEST(ReportFormatsTest, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(EscapeHtml("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(EscapeLatex("50% of $x_1 & {y} #2 ~^\\"),
            "50\\% of \\$x\\_1 \\& \\{y\\} \\#2 \\textasciitilde{}\\textasciicircum{}\\textbackslash{}");
  EXPECT_EQ(EscapeMarkdown("a|b *c* _d_ `e` <f> [g]\\\nh"), "a\\|b \\*c\\* \\_d\\_ \\`e\\` \\<f> \\[g\\]\\\\ h");
}

// Text from a database reaches no terminal that shows a report's file as
// an escape sequence or a bell: each control character is written visibly.
TEST(ReportFormatsTest, ControlCharactersAreWrittenVisiblyInEveryFormat) {
  const std::string hostile = std::string("a\x1b[2J\x07" "b");
  EXPECT_EQ(EscapeHtml(hostile), "a\\e[2J\\x07b");
  EXPECT_EQ(EscapeMarkdown(hostile), "a\\\\e\\[2J\\\\x07b");
  EXPECT_EQ(EscapeLatex(hostile), "a\\textbackslash{}e[2J\\textbackslash{}x07b");
  QueryResult table;
  table.columns = {"reason"};
  table.rows = {{hostile}};
  for (const std::string& text : {MarkdownTable(table), CsvTable(table), LatexTable(table), HtmlTable(table)}) {
    EXPECT_EQ(text.find_first_of("\x1b\x07"), std::string::npos) << text;
  }
}

TEST(ReportFormatsTest, NumbersAreExactAndShortest) {
  EXPECT_EQ(CellText(Cell{0.1}), "0.1");
  EXPECT_EQ(CellText(Cell{1e-05}), "1e-05");
  EXPECT_EQ(CellText(Cell{-0.0}), "0");
  EXPECT_EQ(CellText(Cell{std::int64_t{-3}}), "-3");
  EXPECT_EQ(CellText(Cell{nullptr}), "");
  EXPECT_TRUE(NumericColumn(Sample(), 1));
  EXPECT_FALSE(NumericColumn(Sample(), 0));
}

TEST(ReportFormatsTest, OneTableInFourFormats) {
  EXPECT_EQ(MarkdownTable(Sample()),
            "| name | n | t\\_s |\n| --- | ---: | ---: |\n| ring \\| \\<b>& | 4 | 0.1 |\n"
            "| ps k=1, \"x\" next |  | 12.5 |\n");
  EXPECT_EQ(CsvTable(Sample()), "name,n,t_s\nring | <b>&,4,0.1\n\"ps k=1, \"\"x\"\"\nnext\",,12.5\n");
  EXPECT_EQ(LatexTable(Sample()),
            "\\begin{tabular}{lrr}\n\\hline\nname & n & t\\_s \\\\\n\\hline\nring | <b>\\& & 4 & 0.1 \\\\\n"
            "ps k=1, \"x\" next &  & 12.5 \\\\\n\\hline\n\\end{tabular}\n");
  EXPECT_EQ(HtmlTable(Sample()),
            "<table>\n<thead><tr><th>name</th><th class=\"num\">n</th><th class=\"num\">t_s</th></tr></thead>\n"
            "<tbody>\n<tr><td>ring | &lt;b&gt;&amp;</td><td class=\"num\">4</td><td class=\"num\">0.1</td></tr>\n"
            "<tr><td>ps k=1, &quot;x&quot;\nnext</td><td class=\"num\"></td><td class=\"num\">12.5</td></tr>\n"
            "</tbody>\n</table>\n");
}

// A text cell of more than 40 characters may wrap on the page; shorter
// ones and numbers stay on one line (the page's style).
TEST(ReportFormatsTest, LongTextCellsAreMarkedToWrap) {
  QueryResult table;
  table.columns = {"what"};
  table.rows = {{std::string(40, 'a')}, {std::string(41, 'b')}};
  EXPECT_EQ(HtmlTable(table), "<table>\n<thead><tr><th>what</th></tr></thead>\n<tbody>\n<tr><td>" +
                                  std::string(40, 'a') + "</td></tr>\n<tr><td class=\"long\">" + std::string(41, 'b') +
                                  "</td></tr>\n</tbody>\n</table>\n");
}

}  // namespace
}  // namespace dmlbench
