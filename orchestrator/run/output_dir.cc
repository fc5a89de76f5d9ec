#include "orchestrator/run/output_dir.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "orchestrator/launch/job_output.h"
#include "orchestrator/run/runner.h"

namespace dmlbench {
namespace {

std::string ParentOrTemp(const std::string& parent) {
  return parent.empty() ? std::filesystem::temp_directory_path().string() : parent;
}

}  // namespace

OutputDir::OutputDir(const std::string& parent) {
  const std::string dir = ParentOrTemp(parent);
  std::string pattern = dir + "/" + std::string(kOutputDirPrefix) + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw RunnerError("cannot create a directory for an attempt's output in " + dir + ": " + std::strerror(errno));
  }
  path_ = pattern;
}

OutputDir::~OutputDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int RemoveOrphanedOutputDirs(const std::string& parent) {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(ParentOrTemp(parent), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kOutputDirPrefix, 0) != 0 || !OrphanedOutputDir(name)) continue;
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace dmlbench
