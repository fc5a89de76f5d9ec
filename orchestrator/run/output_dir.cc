#include "orchestrator/run/output_dir.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "orchestrator/run/runner.h"

namespace dmlbench {
namespace {

constexpr std::string_view kPrefix = "dmlbench-output-";

std::string ParentOrTemp(const std::string& parent) {
  return parent.empty() ? std::filesystem::temp_directory_path().string() : parent;
}

// The process id in "dmlbench-output-<pid>-XXXXXX"; 0 for any other name.
pid_t OwnerOf(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (error != std::errc() || pid <= 0 || end == name.data() + name.size() || *end != '-') return 0;
  return pid;
}

}  // namespace

OutputDir::OutputDir(const std::string& parent) {
  const std::string dir = ParentOrTemp(parent);
  std::string pattern = dir + "/" + std::string(kPrefix) + std::to_string(::getpid()) + "-XXXXXX";
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
    const pid_t owner = OwnerOf(entry.path().filename().string());
    // kill(pid, 0) fails with ESRCH only when no such process exists.
    if (owner == 0 || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace dmlbench
