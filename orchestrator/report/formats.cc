#include "orchestrator/report/formats.h"

#include <charconv>

#include "orchestrator/core/csv.h"
#include "orchestrator/core/terminal_text.h"

namespace dmlbench {
namespace {

// A text cell of more characters than this may wrap (class "long"); the
// page keeps shorter ones, and numbers, on one line.
constexpr std::size_t kLongCell = 40;

}  // namespace

std::string EscapeHtml(std::string_view raw) {
  const std::string text = VisibleControls(raw);
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string EscapeLatex(std::string_view raw) {
  const std::string text = VisibleControls(raw);
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}':
        escaped += '\\';
        escaped += c;
        break;
      case '~': escaped += "\\textasciitilde{}"; break;
      case '^': escaped += "\\textasciicircum{}"; break;
      case '\\': escaped += "\\textbackslash{}"; break;
      case '\n': escaped += ' '; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string EscapeMarkdown(std::string_view raw) {
  const std::string text = VisibleControls(raw);
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '|': case '\\': case '`': case '*': case '_': case '<': case '[': case ']':
        escaped += '\\';
        escaped += c;
        break;
      case '\n': case '\r': escaped += ' '; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string CellText(const Cell& cell) {
  if (std::holds_alternative<std::nullptr_t>(cell)) return "";
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    if (*d == 0) return "0";  // also -0, which rounding a small negative number gives
    char buffer[64];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, *d).ptr);
  }
  return std::get<std::string>(cell);
}

bool NumericColumn(const QueryResult& table, std::size_t column) {
  bool any = false;
  for (const auto& row : table.rows) {
    if (std::holds_alternative<std::nullptr_t>(row[column])) continue;
    if (std::holds_alternative<std::string>(row[column])) return false;
    any = true;
  }
  return any;
}

std::string MarkdownTable(const QueryResult& table) {
  std::string text = "|";
  for (const std::string& column : table.columns) text += " " + EscapeMarkdown(column) + " |";
  text += "\n|";
  for (std::size_t c = 0; c < table.columns.size(); ++c) text += NumericColumn(table, c) ? " ---: |" : " --- |";
  text += "\n";
  for (const auto& row : table.rows) {
    text += "|";
    for (const Cell& cell : row) text += " " + EscapeMarkdown(CellText(cell)) + " |";
    text += "\n";
  }
  return text;
}

std::string CsvTable(const QueryResult& table) {
  std::string text;
  for (std::size_t c = 0; c < table.columns.size(); ++c) text += (c ? "," : "") + CsvField(table.columns[c]);
  text += "\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) text += (c ? "," : "") + CsvField(CellText(row[c]));
    text += "\n";
  }
  return text;
}

std::string LatexTable(const QueryResult& table) {
  std::string text = "\\begin{tabular}{";
  for (std::size_t c = 0; c < table.columns.size(); ++c) text += NumericColumn(table, c) ? "r" : "l";
  text += "}\n\\hline\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) text += (c ? " & " : "") + EscapeLatex(cells[c]);
    text += " \\\\\n";
  };
  line(table.columns);
  text += "\\hline\n";
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const Cell& cell : row) cells.push_back(CellText(cell));
    line(cells);
  }
  return text + "\\hline\n\\end{tabular}\n";
}

std::string HtmlTable(const QueryResult& table) {
  std::vector<bool> numeric;
  for (std::size_t c = 0; c < table.columns.size(); ++c) numeric.push_back(NumericColumn(table, c));
  std::string text = "<table>\n<thead><tr>";
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    text += numeric[c] ? "<th class=\"num\">" : "<th>";
    text += EscapeHtml(table.columns[c]) + "</th>";
  }
  text += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    text += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string cell = CellText(row[c]);
      text += numeric[c] ? "<td class=\"num\">" : cell.size() > kLongCell ? "<td class=\"long\">" : "<td>";
      text += EscapeHtml(cell) + "</td>";
    }
    text += "</tr>\n";
  }
  return text + "</tbody>\n</table>\n";
}

}  // namespace dmlbench
