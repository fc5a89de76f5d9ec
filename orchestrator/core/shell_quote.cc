#include "orchestrator/core/shell_quote.h"

namespace dmlbench {
namespace {

bool IsPlain(char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
    return true;
  }
  switch (c) {
    case '_': case '@': case '%': case '+': case '=': case ':':
    case ',': case '.': case '/': case '-':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  bool plain = !word.empty();
  for (char c : word) plain = plain && IsPlain(c);
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& word : words) {
    if (!joined.empty()) joined += ' ';
    joined += ShellQuote(word);
  }
  return joined;
}

std::string ShellQuotePath(std::string_view path) {
  if (path == "~") return "\"$HOME\"";
  if (path.substr(0, 2) == "~/") {
    std::string_view rest = path.substr(2);
    return rest.empty() ? "\"$HOME\"/" : "\"$HOME\"/" + ShellQuote(rest);
  }
  return ShellQuote(path);
}

}  // namespace dmlbench
