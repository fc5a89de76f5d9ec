// TomlReader: the one kit that turns a TOML file into typed options with
// errors located where they are (STYLE.md rule 4) — shared by the matrix,
// inventory and instance catalog readers. It parses, checks keys
// (suggesting the closest known one), the format version, types and
// ranges, and fails with "file:line:col: message"; the
// error's excerpt() holds the source line and a caret under the column
// (ninja's lexer style), which the command line prints below the message.
// A reader derives from it and throws its own error type from Throw().
// Not thread-safe; one reader per file.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_TOML_READER_H_
#define DMLBENCH_ORCHESTRATOR_CORE_TOML_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "orchestrator/core/error.h"

namespace dmlbench {

// An error in a file at a known place. what() is the one-line message
// "path:line:col: message"; excerpt() the source line and a caret line
// ("" when the position is unknown).
class LocatedError : public Error {
 public:
  LocatedError(const std::string& message, std::string excerpt) : Error(message), excerpt_(std::move(excerpt)) {}
  const std::string& excerpt() const { return excerpt_; }

 private:
  std::string excerpt_;
};

// The line `line` (1-based) of `text` and below it a caret under `column`
// (1-based, in characters), tabs kept so that it lines up:
//   "workers = [0]\n           ^\n". "" when the line does not exist.
std::string SourceExcerpt(std::string_view text, int line, int column);

// "integer 4", "string \"4\"", "array [ 1, 2 ]", "table": what was found.
std::string Found(const toml::node& node);
// Double-quoted with JSON escapes, so that control characters stay visible.
std::string Quoted(std::string_view text);
// The known name a mistyped `key` most likely meant, or "" if none is close.
std::string ClosestName(std::string_view key, const std::vector<std::string_view>& known);

class TomlReader {
 public:
  // `path` names the file in messages; `text` is its content.
  TomlReader(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}
  virtual ~TomlReader() = default;

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }

  // Parses text(); a syntax error fails at its position with toml++'s description.
  toml::table Parse() const;

  // "path:line:col: message"; "path: message" for a node with no place in
  // the text (one the program built, e.g. from a command line's setting).
  [[noreturn]] void Fail(const toml::source_region& where, const std::string& message) const;
  [[noreturn]] void Fail(const toml::node& node, const std::string& message) const { Fail(node.source(), message); }

  // Every key of `table` must be in `known`; else "unknown key 'k' in
  // <where>, did you mean 'x'?" or "..., expected one of: a, b".
  void CheckKeys(const toml::table& table, const std::vector<std::string_view>& known,
                 std::string_view where) const;
  // The sub-table `key` of `parent`, nullptr when absent; fails when not a table.
  const toml::table* OptionalTable(const toml::table& parent, std::string_view key) const;
  // The array of tables `key` of `parent` ([[key]]), empty when absent.
  std::vector<const toml::table*> TableArray(const toml::table& parent, std::string_view key) const;

  // "<name> must be an integer, got ..." / "<name> must be between a and b, got n".
  std::int64_t ReadInteger(const toml::node& node, std::string_view name, std::int64_t min,
                           std::int64_t max) const;
  // A finite number above `min` (at least `min` when `inclusive`).
  double ReadNumber(const toml::node& node, std::string_view name, double min, bool inclusive) const;
  std::string ReadString(const toml::node& node, std::string_view name) const;
  // A string that is not empty.
  std::string ReadName(const toml::node& node, std::string_view name) const;
  // A string out of `choices`: "<name> must be one of \"a\", \"b\", got \"c\"".
  std::string ReadChoice(const toml::node& node, std::string_view name,
                         const std::vector<std::string_view>& choices) const;
  bool ReadBoolean(const toml::node& node, std::string_view name) const;
  // An array of strings.
  std::vector<std::string> ReadStrings(const toml::node& node, std::string_view name) const;
  // The file's `format_version`, which must be `expected`: "format_version
  // is missing (expected 1)" at the top, or "format_version must be 1, got 2"
  // at the value.
  void CheckFormatVersion(const toml::table& root, std::int64_t expected) const;

 protected:
  // Throws the reader's own error type with a LocatedError's two parts.
  [[noreturn]] virtual void Throw(const std::string& message, const std::string& excerpt) const = 0;

 private:
  std::string path_;
  std::string text_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_TOML_READER_H_
