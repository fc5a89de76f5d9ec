#include "orchestrator/launch/cluster/privileges.h"

#include <unistd.h>

#include <sstream>
#include <vector>

#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {
namespace {

constexpr std::uint64_t kCapNetAdmin = 1ull << 12;
constexpr std::uint64_t kCapSysAdmin = 1ull << 21;

// This process's effective capabilities, in hex as /proc writes them.
std::string CurrentCaps() {
  std::istringstream lines(ReadTextFile("/proc/self/status"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("CapEff:", 0) == 0) return line.substr(7);
  }
  return "0";
}

}  // namespace

std::string PrivilegeProblem(std::uint64_t effective_caps, bool cgroup_writable,
                             const std::string& cgroup_dir) {
  std::vector<std::string> missing;
  if ((effective_caps & kCapNetAdmin) == 0) missing.push_back("CAP_NET_ADMIN (links, tc)");
  if ((effective_caps & kCapSysAdmin) == 0) missing.push_back("CAP_SYS_ADMIN (network namespaces)");
  if (!cgroup_writable) missing.push_back("write access to " + cgroup_dir + " (CPU cgroups)");
  if (missing.empty()) return "";
  std::string message = "the emulated cluster needs root: missing ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) message += i + 1 == missing.size() ? " and " : ", ";
    message += missing[i];
  }
  return message;
}

void CheckClusterPrivileges(const std::string& cgroup_root) {
  std::uint64_t caps = 0;
  std::istringstream(CurrentCaps()) >> std::hex >> caps;
  std::string cgroup_dir = cgroup_root;
  bool writable = false;
  try {
    cgroup_dir = DetectCgroupLayout(cgroup_root).cpu_root;
    writable = access(cgroup_dir.c_str(), W_OK) == 0;
  } catch (const ClusterError&) {
    writable = false;
  }
  const std::string problem = PrivilegeProblem(caps, writable, cgroup_dir);
  if (!problem.empty()) throw ClusterError(problem);
}

}  // namespace dmlbench
