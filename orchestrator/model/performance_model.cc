#include "orchestrator/model/performance_model.h"

#include <cstdlib>

namespace dmlbench {

FixedParameters ParseFixedParameters(const std::vector<std::string>& fixes) {
  FixedParameters fixed;
  for (const std::string& fix : fixes) {
    const std::size_t at = fix.rfind('=');
    const std::string key = at == std::string::npos ? "" : fix.substr(0, at);
    const std::string text = at == std::string::npos ? "" : fix.substr(at + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (key.empty() || text.empty() || end != text.c_str() + text.size()) {
      throw ModelError("--fix \"" + fix + "\": expected NAME=VALUE or \"NAME SCOPE=VALUE\" with a number, "
                       "e.g. --fix cpu_while_waiting=0.067 or --fix \"wire_factor ps k=1=1.0\"");
    }
    if (!fixed.emplace(key, value).second) throw ModelError("--fix " + key + " given twice");
  }
  return fixed;
}

}  // namespace dmlbench
