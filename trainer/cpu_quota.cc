#include "trainer/cpu_quota.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace dmlbench {
namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t end = text.find(separator);
    parts.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return parts;
    text.remove_prefix(end + 1);
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines = Split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool Contains(const std::vector<std::string_view>& items, std::string_view item) {
  for (std::string_view i : items)
    if (i == item) return true;
  return false;
}

// A mount of a cgroup hierarchy: its root inside the hierarchy and where it is mounted.
struct CgroupMount {
  std::string_view root;
  std::string_view mount_point;
};

// mountinfo: "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS".
// The cgroup v1 mount with `controller` among its super options, or (empty
// controller) the cgroup2 mount.
std::optional<CgroupMount> FindMount(std::string_view mountinfo, std::string_view controller) {
  for (std::string_view line : Lines(mountinfo)) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const std::vector<std::string_view> head = Split(line.substr(0, dash), ' ');
    const std::vector<std::string_view> tail = Split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3) continue;
    const bool match = controller.empty() ? tail[0] == "cgroup2"
                                          : tail[0] == "cgroup" && Contains(Split(tail[2], ','), controller);
    if (match) return CgroupMount{head[3], head[4]};
  }
  return std::nullopt;
}

// The group's path under a mount whose root is `root` (a mount of a subtree
// shows paths from the hierarchy's root).
std::string Join(const CgroupMount& mount, std::string_view group) {
  if (mount.root != "/" && group.substr(0, mount.root.size()) == mount.root) {
    group.remove_prefix(mount.root.size());
  }
  std::string path(mount.mount_point);
  if (!group.empty() && group != "/") {
    if (group.front() != '/') path += '/';
    path += group;
  }
  return path;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<CgroupDir> CpuCgroupDir(std::string_view proc_self_cgroup, std::string_view mountinfo) {
  std::optional<std::string_view> unified;
  // "ID:CONTROLLERS:PATH"; v2 is "0::PATH".
  for (std::string_view line : Lines(proc_self_cgroup)) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view group = line.substr(second + 1);
    if (controllers.empty()) {
      unified = group;
    } else if (Contains(Split(controllers, ','), "cpu")) {
      if (const auto mount = FindMount(mountinfo, "cpu")) return CgroupDir{Join(*mount, group), false};
    }
  }
  if (unified) {
    if (const auto mount = FindMount(mountinfo, "")) return CgroupDir{Join(*mount, *unified), true};
  }
  return std::nullopt;
}

bool QuotaIsSet(std::string_view quota_file_text, bool v2) {
  const std::size_t end = quota_file_text.find_first_of(" \n");
  const std::string_view first = quota_file_text.substr(0, end);
  if (first.empty()) return false;
  return v2 ? first != "max" : first != "-1";
}

std::optional<QuotaCounters> ParseCpuStat(std::string_view text) {
  QuotaCounters counters;
  bool periods = false, throttled = false;
  for (std::string_view line : Lines(text)) {
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, space);
    std::uint64_t value = 0;
    std::istringstream(std::string(line.substr(space + 1))) >> value;
    if (key == "nr_periods") {
      counters.periods = value;
      periods = true;
    } else if (key == "nr_throttled") {
      counters.throttled_periods = value;
      throttled = true;
    } else if (key == "throttled_time") {
      counters.throttled_s = 1e-9 * double(value);
    } else if (key == "throttled_usec") {
      counters.throttled_s = 1e-6 * double(value);
    }
  }
  if (!periods || !throttled) return std::nullopt;
  return counters;
}

CpuQuota::CpuQuota() {
  const auto cgroup = ReadFile("/proc/self/cgroup");
  const auto mountinfo = ReadFile("/proc/self/mountinfo");
  if (!cgroup || !mountinfo) return;
  if (const std::optional<CgroupDir> dir = CpuCgroupDir(*cgroup, *mountinfo)) {
    dir_ = dir->path;
    v2_ = dir->v2;
  }
}

std::optional<QuotaCounters> CpuQuota::Read() const {
  if (dir_.empty()) return std::nullopt;
  const auto quota = ReadFile(dir_ + (v2_ ? "/cpu.max" : "/cpu.cfs_quota_us"));
  const auto text = ReadFile(dir_ + "/cpu.stat");
  if (!quota || !text) return std::nullopt;
  std::optional<QuotaCounters> counters = ParseCpuStat(*text);
  if (counters) counters->quota_set = QuotaIsSet(*quota, v2_);
  return counters;
}

}  // namespace dmlbench
