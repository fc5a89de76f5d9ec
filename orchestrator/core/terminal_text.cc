#include "orchestrator/core/terminal_text.h"

#include <cstdio>

namespace dmlbench {

std::string TerminalText(std::string_view text, bool keep_layout) {
  std::string safe;
  safe.reserve(text.size());
  char escape[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // U+0080-U+009F are 0xC2 0x80-0x9F in UTF-8; 0x9B is CSI on many terminals.
    if (byte == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) {
        std::snprintf(escape, sizeof escape, "\\u%04x", next);
        safe += escape;
        ++i;
        continue;
      }
    }
    if (byte >= 0x20 && byte != 0x7F) {
      safe += text[i];
      continue;
    }
    switch (byte) {
      case '\n': safe += keep_layout ? "\n" : "\\n"; break;
      case '\r': safe += "\\r"; break;
      case '\t': safe += keep_layout ? "\t" : "\\t"; break;
      case 0x1B: safe += "\\e"; break;
      default:
        std::snprintf(escape, sizeof escape, "\\x%02x", byte);
        safe += escape;
    }
  }
  return safe;
}

std::string VisibleControls(std::string_view text) {
  std::string visible;
  visible.reserve(text.size());
  for (std::size_t begin = 0;;) {
    const std::size_t cr = text.find('\r', begin);
    visible += TerminalText(text.substr(begin, cr == std::string_view::npos ? std::string_view::npos : cr - begin),
                            /*keep_layout=*/true);
    if (cr == std::string_view::npos) return visible;
    visible += '\r';
    begin = cr + 1;
  }
}

}  // namespace dmlbench
