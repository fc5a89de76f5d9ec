#include "orchestrator/core/csv.h"

#include "orchestrator/core/terminal_text.h"

namespace dmlbench {

std::string CsvField(std::string_view raw) {
  const std::string text = VisibleControls(raw);
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace dmlbench
