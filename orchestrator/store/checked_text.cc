#include "orchestrator/store/checked_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <variant>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

std::string RunColumn(const std::string& db, std::int64_t run_id, std::string_view column) {
  return db + ": run " + std::to_string(run_id) + ": runs." + std::string(column);
}

bool IsDecimal(std::string_view text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

[[noreturn]] void Refuse(const std::string& place, const std::string& expected, const Cell& value) {
  throw StoreError(place + " is not " + expected + ", got " + CellQuoted(value), -1);
}

// The value as a number when it is stored as one (SQLite keeps text that
// does not look like a number as text, also in a REAL column).
std::optional<double> NumberOf(const Cell& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::nullopt;
}

}  // namespace

std::string ColumnPlace(const std::string& db, const std::string& row, std::string_view column) {
  return db + ": " + row + ": " + std::string(column);
}

std::string CellQuoted(const Cell& value) {
  if (std::holds_alternative<std::nullptr_t>(value)) return "NULL";
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *d);
    return text;
  }
  return Quoted(std::get<std::string>(value));
}

std::int64_t CheckedInteger(const std::string& place, const Cell& value, std::int64_t low, std::int64_t high) {
  const auto* i = std::get_if<std::int64_t>(&value);
  if (i == nullptr || *i < low || *i > high) {
    Refuse(place, "an integer from " + std::to_string(low) + " to " + std::to_string(high), value);
  }
  return *i;
}

double CheckedReal(const std::string& place, const Cell& value, double low, double high) {
  const std::optional<double> number = NumberOf(value);
  if (!number || !std::isfinite(*number) || *number < low || *number > high) {
    const std::string range = std::isinf(low) && std::isinf(high) ? ""
                              : std::isinf(high)                    ? " of at least " + Number(low)
                                                                    : " from " + Number(low) + " to " + Number(high);
    Refuse(place, "a finite number" + range, value);
  }
  return *number;
}

double CheckedPositiveReal(const std::string& place, const Cell& value, double high) {
  const std::optional<double> number = NumberOf(value);
  if (!number || !std::isfinite(*number) || !(*number > 0) || *number > high) {
    Refuse(place, "a finite number above 0" + (std::isinf(high) ? "" : " and at most " + Number(high)), value);
  }
  return *number;
}

bool CheckedFlag(const std::string& place, const Cell& value) {
  const auto* i = std::get_if<std::int64_t>(&value);
  if (i == nullptr || (*i != 0 && *i != 1)) Refuse(place, "0 or 1", value);
  return *i == 1;
}

std::string CheckedWord(const std::string& place, const Cell& value, const std::vector<std::string_view>& words) {
  const auto* text = std::get_if<std::string>(&value);
  if (text == nullptr || std::find(words.begin(), words.end(), *text) == words.end()) {
    std::string expected;
    for (std::size_t i = 0; i < words.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + std::string(words[i]);
    }
    Refuse(place, (words.size() > 1 ? "one of " : "") + expected, value);
  }
  return *text;
}

double CheckedNumberText(const std::string& place, const std::string& text, double low, double high) {
  const bool decimal = !text.empty() && text.size() <= 32 && ((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
  char* end = nullptr;
  const double number = decimal ? std::strtod(text.c_str(), &end) : 0;
  if (!decimal || end != text.c_str() + text.size() || !std::isfinite(number) || number < low || number > high) {
    Refuse(place, "a decimal number from " + Number(low) + " to " + Number(high), text);
  }
  return number;
}

bool IsRunKey(std::string_view text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsPlainName(std::string_view name) {
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && name.size() <= 128 && letter(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

std::string CheckedRunKey(const std::string& db, std::int64_t run_id, std::string text) {
  if (!IsRunKey(text)) {
    throw StoreError(RunColumn(db, run_id, "run_key") + " is not 64 lowercase hex digits, got " + Quoted(text), -1);
  }
  return text;
}

std::vector<int> CheckedLayerWidths(const std::string& db, std::int64_t run_id, const std::string& text) {
  std::vector<int> widths;
  std::string_view rest = text;
  bool valid = !text.empty();
  while (valid) {
    const std::string_view part = rest.substr(0, rest.find(','));
    valid = IsDecimal(part) && std::stoi(std::string(part)) >= 1 && std::stoi(std::string(part)) <= kMaxLayerSize &&
            widths.size() < static_cast<std::size_t>(kMaxHiddenLayers);
    if (!valid) break;
    widths.push_back(std::stoi(std::string(part)));
    if (part.size() == rest.size()) break;
    rest.remove_prefix(part.size() + 1);
  }
  if (!valid) {
    throw StoreError(RunColumn(db, run_id, "hidden") + " is not a list of 1 to " + std::to_string(kMaxHiddenLayers) +
                         " layer widths (integers 1.." + std::to_string(kMaxLayerSize) +
                         " separated by commas, e.g. \"128,32\"), got " + Quoted(text),
                     -1);
  }
  return widths;
}

std::string PathInside(const std::string& db, const std::string& dir, const std::string& relative,
                       const std::string& what) {
  bool inside = !relative.empty() && relative.front() != '/';
  std::string_view rest = relative;
  while (inside) {
    const std::string_view part = rest.substr(0, rest.find('/'));
    inside = !part.empty() && part != "." && part != ".." && part.find('\0') == std::string_view::npos;
    if (part.size() == rest.size()) break;
    rest.remove_prefix(part.size() + 1);
  }
  if (!inside) throw StoreError(db + ": " + what + " is not a path inside " + dir + ", got " + Quoted(relative), -1);
  return dir + "/" + relative;
}

}  // namespace dmlbench
