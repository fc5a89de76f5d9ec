// Formats: one table (a query's columns and rows) written as Markdown, CSV
// (RFC 4180), LaTeX and HTML, every cell escaped for its format; and the
// escaping of any text put into HTML, LaTeX or Markdown. Numbers are written
// as the SQL gave them (the SQL file rounds what it wants rounded) in their
// shortest exact form, so the output depends on the database alone. Pure
// functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_FORMATS_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_FORMATS_H_

#include <string>
#include <string_view>

#include "orchestrator/store/store.h"

namespace dmlbench {

// Each of these first writes control characters other than CR, LF and TAB
// as visible escapes (core/terminal_text.h VisibleControls): text from a
// database reaches no terminal that `cat`s a report as ESC or BEL.
// &, <, >, " and ' as entities.
std::string EscapeHtml(std::string_view text);
// LaTeX's special characters (& % $ # _ { } ~ ^ \) as commands.
std::string EscapeLatex(std::string_view text);
// Text safe inside a Markdown table cell or paragraph: |, \, `, *, _, <, [ and
// ] backslash-escaped, line breaks as spaces.
std::string EscapeMarkdown(std::string_view text);

// A cell as text: "" for NULL, integers as is, reals in their shortest form
// that reads back exactly (0.1, 12.5, 1e-05; -0 as 0).
std::string CellText(const Cell& cell);
// True when every cell of the column that is not NULL is a number.
bool NumericColumn(const QueryResult& table, std::size_t column);

std::string MarkdownTable(const QueryResult& table);
std::string CsvTable(const QueryResult& table);
// A complete tabular environment (no float, no packages needed).
std::string LatexTable(const QueryResult& table);
// A <table> with <thead> and <tbody>; numeric columns get class "num",
// text cells of more than 40 characters class "long" (they may wrap).
std::string HtmlTable(const QueryResult& table);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_FORMATS_H_
