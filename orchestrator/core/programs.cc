#include "orchestrator/core/programs.h"

#include <unistd.h>

#include <filesystem>

namespace dmlbench {

std::string SiblingProgram(const std::string& name) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const auto& candidate : {self.parent_path() / name, self.parent_path().parent_path() / "trainer" / name}) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return name;
}

}  // namespace dmlbench
