#include "orchestrator/run/provenance.h"

#include <filesystem>

#include "orchestrator/core/subprocess.h"

namespace dmlbench {

void AddGitState(const std::string& file, RunProvenance* provenance) {
  std::string dir = std::filesystem::path(file).parent_path().string();
  if (dir.empty()) dir = ".";
  const CommandOutput head = RunCommand({"git", "-C", dir, "rev-parse", "HEAD"}, 10);
  if (head.exit_code != 0) return;
  provenance->git_commit = head.out.substr(0, head.out.find('\n'));
  const CommandOutput status = RunCommand({"git", "-C", dir, "status", "--porcelain", "--untracked-files=no"}, 10);
  if (status.exit_code == 0) provenance->git_dirty = !status.out.empty();
}

}  // namespace dmlbench
