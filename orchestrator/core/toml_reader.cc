#include "orchestrator/core/toml_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

namespace dmlbench {
namespace {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string joined;
  for (std::string_view name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

std::string QuotedChoices(const std::vector<std::string_view>& names) {
  std::string joined;
  for (std::string_view name : names) {
    if (!joined.empty()) joined += ", ";
    joined += '"' + std::string(name) + '"';
  }
  return joined;
}

std::string FormatDouble(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Where a key of more than kMaxKeyDepth parts (a.b.c...) starts, if any.
// toml++ builds one table per part and walks them recursively, so a header
// dotted 50,000 levels deep (a 100 KB file) overflows the stack; the parser
// limits nested arrays and inline tables itself (TOML_MAX_NESTED_VALUES)
// but not dotted keys. The scan knows just enough TOML to find keys: it
// skips strings (basic, literal, and multi-line ones across lines) and
// comments, and counts the dots of the key that opens each line — a table
// header's or a key/value pair's — and of each key inside an inline table.
constexpr int kMaxKeyDepth = 100;

struct DeepKey {
  int line = 0;
  int column = 0;
  int parts = 0;
};

std::optional<DeepKey> FindDeepKey(std::string_view text) {
  std::string_view open_multiline;  // the delimiter of a multi-line string still open
  int line = 1;
  std::size_t line_start = 0;
  while (line_start <= text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view source = text.substr(line_start, line_end - line_start);
    std::size_t i = 0;
    if (!open_multiline.empty()) {
      const std::size_t close = source.find(open_multiline);
      if (close == std::string_view::npos) {
        i = source.size();
      } else {
        i = close + open_multiline.size();
        open_multiline = {};
      }
    }
    while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
    const std::size_t key_start = i;
    bool in_key = i < source.size() && source[i] != '#';
    int parts = 1;
    int most = 1;
    std::string brackets;  // the open '{' and '[' after the line's key, innermost last
    for (; i < source.size(); ++i) {
      const char c = source[i];
      if (c == '#') break;
      if (c == '"' || c == '\'') {
        const std::string_view triple = c == '"' ? "\"\"\"" : "'''";
        if (source.substr(i, 3) == triple) {
          const std::size_t close = source.find(triple, i + 3);
          if (close == std::string_view::npos) {
            open_multiline = triple;
            break;
          }
          i = close + 2;
          continue;
        }
        for (++i; i < source.size() && source[i] != c; ++i) {
          if (c == '"' && source[i] == '\\') ++i;
        }
        continue;
      }
      if (in_key) {
        if (c == '.') most = std::max(most, ++parts);
        if (c == '=' || (c == ']' && source[key_start] == '[')) in_key = false;
        continue;
      }
      if (c == '{' || c == '[') brackets += c;
      if ((c == '}' || c == ']') && !brackets.empty()) brackets.pop_back();
      if ((c == '{' || c == ',') && !brackets.empty() && brackets.back() == '{') {
        in_key = true;  // a key of the inline table begins
        parts = 1;
      }
    }
    if (most > kMaxKeyDepth) return DeepKey{line, static_cast<int>(key_start) + 1, most};
    line_start = line_end + 1;
    ++line;
  }
  return std::nullopt;
}

}  // namespace

std::string SourceExcerpt(std::string_view text, int line, int column) {
  if (line < 1) return "";
  std::size_t begin = 0;
  for (int l = 1; l < line; ++l) {
    const std::size_t newline = text.find('\n', begin);
    if (newline == std::string_view::npos) return "";
    begin = newline + 1;
  }
  std::size_t end = text.find('\n', begin);
  if (end == std::string_view::npos) end = text.size();
  std::string_view source = text.substr(begin, end - begin);
  if (!source.empty() && source.back() == '\r') source.remove_suffix(1);
  std::string caret;
  int characters = 0;
  for (std::size_t i = 0; i < source.size() && characters < column - 1; ++i) {
    if (IsContinuationByte(source[i])) continue;
    caret += source[i] == '\t' ? '\t' : ' ';
    ++characters;
  }
  return std::string(source) + "\n" + caret + "^\n";
}

std::string Quoted(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Found(const toml::node& node) {
  std::string_view type;
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::string: type = "string"; break;
    case toml::node_type::array: type = "array"; break;
    case toml::node_type::integer: type = "integer"; break;
    case toml::node_type::floating_point: type = "float"; break;
    case toml::node_type::boolean: type = "boolean"; break;
    case toml::node_type::date: type = "date"; break;
    case toml::node_type::time: type = "time"; break;
    case toml::node_type::date_time: type = "date-time"; break;
    case toml::node_type::none: type = "nothing"; break;
  }
  std::string repr;
  if (const auto* string = node.as_string()) {
    repr = Quoted(string->get());
  } else {
    std::ostringstream text;
    node.visit([&](const auto& n) { text << n; });
    repr = text.str();
  }
  // Cut long values, never inside a UTF-8 sequence.
  constexpr std::size_t kMaxRepr = 40;
  if (repr.size() > kMaxRepr) {
    std::size_t cut = kMaxRepr - 3;
    while (cut > 0 && IsContinuationByte(repr[cut])) --cut;
    repr = repr.substr(0, cut) + "...";
  }
  return std::string(type) + " " + repr;
}

std::string ClosestName(std::string_view key, const std::vector<std::string_view>& known) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(key, candidate);
    const bool prefix = key.size() >= 3 && (candidate.starts_with(key) || key.starts_with(candidate));
    if (distance <= std::max<std::size_t>(2, key.size() / 3) || prefix) {
      if (prefix) distance = std::min(distance, std::size_t{1});
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
  }
  return best;
}

toml::table TomlReader::Parse() const {
  if (const std::optional<DeepKey> deep = FindDeepKey(text_)) {
    toml::source_region where;
    where.begin = {static_cast<toml::source_index>(deep->line), static_cast<toml::source_index>(deep->column)};
    Fail(where, "a key of " + std::to_string(deep->parts) + " dotted parts; at most " +
                    std::to_string(kMaxKeyDepth) + " are supported");
  }
  try {
    return toml::parse(text_, path_);
  } catch (const toml::parse_error& error) {
    Fail(error.source(), std::string(error.description()));
  }
}

void TomlReader::Fail(const toml::source_region& where, const std::string& message) const {
  const int line = static_cast<int>(where.begin.line);
  const int column = static_cast<int>(where.begin.column);
  if (line < 1) Throw(path_ + ": " + message, "");  // a value made by the program, in no file
  Throw(path_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message,
        SourceExcerpt(text_, line, column));
  std::abort();  // Throw() never returns; this keeps the promise of [[noreturn]] if one did
}

void TomlReader::CheckKeys(const toml::table& table, const std::vector<std::string_view>& known,
                           std::string_view where) const {
  for (const auto& [key, node] : table) {
    if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
    std::string message = "unknown key '" + std::string(key.str()) + "' in " + std::string(where);
    const std::string closest = ClosestName(key.str(), known);
    message += closest.empty() ? ", expected one of: " + JoinNames(known) : ", did you mean '" + closest + "'?";
    Fail(key.source(), message);
  }
}

const toml::table* TomlReader::OptionalTable(const toml::table& parent, std::string_view key) const {
  const toml::node* node = parent.get(key);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) Fail(*node, std::string(key) + " must be a table, got " + Found(*node));
  return node->as_table();
}

std::vector<const toml::table*> TomlReader::TableArray(const toml::table& parent, std::string_view key) const {
  std::vector<const toml::table*> tables;
  const toml::node* node = parent.get(key);
  if (node == nullptr) return tables;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    Fail(*node, std::string(key) + " must be an array of tables ([[" + std::string(key) + "]]), got " + Found(*node));
  }
  for (const toml::node& element : *array) {
    if (!element.is_table()) Fail(element, std::string(key) + " entries must be tables, got " + Found(element));
    tables.push_back(element.as_table());
  }
  return tables;
}

std::int64_t TomlReader::ReadInteger(const toml::node& node, std::string_view name, std::int64_t min,
                                     std::int64_t max) const {
  const auto* integer = node.as_integer();
  if (integer == nullptr) Fail(node, std::string(name) + " must be an integer, got " + Found(node));
  const std::int64_t value = integer->get();
  if (value < min || value > max) {
    const std::string range = max == std::numeric_limits<std::int64_t>::max()
                                  ? "at least " + std::to_string(min)
                                  : "between " + std::to_string(min) + " and " + std::to_string(max);
    Fail(node, std::string(name) + " must be " + range + ", got " + std::to_string(value));
  }
  return value;
}

double TomlReader::ReadNumber(const toml::node& node, std::string_view name, double min, bool inclusive) const {
  double value = 0;
  if (const auto* integer = node.as_integer()) {
    value = static_cast<double>(integer->get());
  } else if (const auto* floating = node.as_floating_point()) {
    value = floating->get();
  } else {
    Fail(node, std::string(name) + " must be a number, got " + Found(node));
  }
  if (!std::isfinite(value) || value < min || (!inclusive && value == min)) {
    Fail(node, std::string(name) + " must be a finite number " + (inclusive ? "of at least " : "greater than ") +
                   FormatDouble(min) + ", got " + FormatDouble(value));
  }
  return value;
}

std::string TomlReader::ReadString(const toml::node& node, std::string_view name) const {
  const auto* string = node.as_string();
  if (string == nullptr) Fail(node, std::string(name) + " must be a string, got " + Found(node));
  return string->get();
}

std::string TomlReader::ReadName(const toml::node& node, std::string_view name) const {
  std::string value = ReadString(node, name);
  if (value.empty()) Fail(node, std::string(name) + " must not be empty, got \"\"");
  return value;
}

std::string TomlReader::ReadChoice(const toml::node& node, std::string_view name,
                                   const std::vector<std::string_view>& choices) const {
  std::string value = ReadString(node, name);
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    Fail(node, std::string(name) + " must be one of " + QuotedChoices(choices) + ", got " + Quoted(value));
  }
  return value;
}

bool TomlReader::ReadBoolean(const toml::node& node, std::string_view name) const {
  const auto* boolean = node.as_boolean();
  if (boolean == nullptr) Fail(node, std::string(name) + " must be a boolean, got " + Found(node));
  return boolean->get();
}

std::vector<std::string> TomlReader::ReadStrings(const toml::node& node, std::string_view name) const {
  const toml::array* array = node.as_array();
  if (array == nullptr) Fail(node, std::string(name) + " must be an array of strings, got " + Found(node));
  std::vector<std::string> values;
  for (const toml::node& element : *array) values.push_back(ReadString(element, name));
  return values;
}

void TomlReader::CheckFormatVersion(const toml::table& root, std::int64_t expected) const {
  const std::string want = std::to_string(expected);
  const toml::node* node = root.get("format_version");
  if (node == nullptr) Fail(root.source(), "format_version is missing (expected " + want + ")");
  const auto* value = node->as_integer();
  if (value == nullptr || value->get() != expected) {
    Fail(*node, "format_version must be " + want + ", got " +
                    (value != nullptr ? std::to_string(value->get()) : Found(*node)));
  }
}

}  // namespace dmlbench
