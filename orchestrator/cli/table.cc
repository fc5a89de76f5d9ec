#include "orchestrator/cli/table.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ostream>
#include <set>

#include "orchestrator/core/csv.h"
#include "orchestrator/core/terminal_text.h"

namespace dmlbench {

std::string ExactText(const Cell& cell) {
  if (std::holds_alternative<std::nullptr_t>(cell)) return "";
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    char buffer[64];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, *d).ptr);
  }
  return std::get<std::string>(cell);
}

std::string ShortText(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6g", *d);
    return buffer;
  }
  return ExactText(cell);
}

std::string Runs(size_t count) { return std::to_string(count) + (count == 1 ? " run" : " runs"); }

std::string Shorten(const std::string& text, size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() <= width) return line;
  return line.substr(0, width - 3) + "...";
}

namespace {

// The lines of a cell, each safe for a terminal: a value from a run or the
// database cannot move the cursor or redraw a line (core/terminal_text.h).
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    lines.push_back(TerminalText(std::string_view(text).substr(begin, end - begin)));
  }
  lines.push_back(TerminalText(std::string_view(text).substr(begin)));
  return lines;
}

// The columns `text` takes on a terminal: its UTF-8 characters ("µs" is
// two), not its bytes.
size_t Columns(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

// Aligned columns; cells that are numbers align right.
void PrintTable(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<std::string> header_cells;
  for (const std::string& header : headers) header_cells.push_back(TerminalText(header));
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) width[c] = Columns(header_cells[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      for (const std::string& part : Lines(row[c])) width[c] = std::max(width[c], Columns(part));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - Columns(cells[c]), ' ');
      text += c ? "  " : "";
      text += right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    out << text << "\n";
  };
  line(header_cells);
  std::vector<std::string> rule;
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : rows) {
    std::vector<std::vector<std::string>> parts;
    size_t height = 1;
    for (const std::string& cell : row) {
      parts.push_back(Lines(cell));
      height = std::max(height, parts.back().size());
    }
    for (size_t k = 0; k < height; ++k) {
      std::vector<std::string> cells;
      for (const auto& cell_lines : parts) cells.push_back(k < cell_lines.size() ? cell_lines[k] : "");
      line(cells);
    }
  }
}

void PrintTable(std::ostream& out, const TextTable& table) { PrintTable(out, table.headers, table.rows, table.right); }

void PrintQueryTable(std::ostream& out, const QueryResult& result) {
  std::vector<bool> right(result.columns.size(), false);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : result.rows) {
    std::vector<std::string> cells;
    for (size_t c = 0; c < row.size(); ++c) {
      if (std::holds_alternative<std::int64_t>(row[c]) || std::holds_alternative<double>(row[c])) right[c] = true;
      cells.push_back(ShortText(row[c]));
    }
    rows.push_back(std::move(cells));
  }
  PrintTable(out, result.columns, rows, right);
  out << "(" << result.rows.size() << (result.rows.size() == 1 ? " row" : " rows") << ")\n";
}

void PrintCsv(std::ostream& out, const QueryResult& result) {
  for (size_t c = 0; c < result.columns.size(); ++c) out << (c ? "," : "") << CsvField(result.columns[c]);
  out << "\n";
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << CsvField(ExactText(row[c]));
    out << "\n";
  }
}

void PrintJson(std::ostream& out, const QueryResult& result) {
  std::vector<std::string> keys;
  std::set<std::string> used;
  for (const std::string& name : result.columns) {
    std::string key = name;
    for (int n = 1; used.count(key) != 0; ++n) {
      key = name + ":" + std::to_string(n);
      if (std::find(result.columns.begin(), result.columns.end(), key) != result.columns.end()) key = name;
    }
    used.insert(key);
    keys.push_back(std::move(key));
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.size(); ++c) {
      std::visit(
          [&](const auto& value) {
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::nullptr_t>) {
              object[keys[c]] = nullptr;
            } else {
              object[keys[c]] = value;
            }
          },
          row[c]);
    }
    rows.push_back(std::move(object));
  }
  out << rows.dump(2) << "\n";
}

}  // namespace dmlbench
