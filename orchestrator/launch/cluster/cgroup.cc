#include "orchestrator/launch/cluster/cgroup.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

bool ListsCpu(const fs::path& controllers) {
  std::istringstream words(ReadTextFile(controllers));
  std::string word;
  while (words >> word) {
    if (word == "cpu") return true;
  }
  return false;
}

void WriteCgroupFile(const fs::path& path, const std::string& value) {
  if (const std::optional<WriteFailure> failure = WriteTextFile(path.string(), value)) {
    throw ClusterError("cannot write \"" + value + "\" to " + failure->path + ": " + failure->reason);
  }
}

fs::path GroupDir(const CgroupLayout& layout, const std::string& name) {
  return fs::path(layout.cpu_root) / name;
}

std::vector<int> Procs(const fs::path& group) {
  std::istringstream lines(ReadTextFile(group / "cgroup.procs"));
  std::vector<int> pids;
  int pid = 0;
  while (lines >> pid) pids.push_back(pid);
  return pids;
}

}  // namespace

CgroupLayout DetectCgroupLayout(const std::string& root) {
  for (const fs::path& v2 : {fs::path(root), fs::path(root) / "unified"}) {
    if (fs::exists(v2 / "cgroup.controllers") && ListsCpu(v2 / "cgroup.controllers")) {
      return {CgroupVersion::kV2, v2.string()};
    }
  }
  for (const fs::path& v1 : {fs::path(root) / "cpu", fs::path(root) / "cpu,cpuacct"}) {
    if (fs::exists(v1 / "cpu.cfs_quota_us")) return {CgroupVersion::kV1, v1.string()};
  }
  throw ClusterError("no CPU cgroup controller under " + root +
                     ": neither cgroup v2 with the cpu controller nor cgroup v1 cpu.cfs_quota_us");
}

int CpuPeriodUs(double cores) {
  constexpr int kPeriodUs = 10000;
  if (!(cores > 0) || cores * kPeriodUs >= kMinCpuQuotaUs) return kPeriodUs;
  return static_cast<int>(std::min<double>(kMaxCpuPeriodUs, std::ceil(kMinCpuQuotaUs / cores)));
}

void CreateCpuCgroup(const CgroupLayout& layout, const std::string& name, double cores) {
  const fs::path group = GroupDir(layout, name);
  std::error_code error;
  fs::create_directory(group, error);
  if (error) throw ClusterError("cannot create cgroup " + group.string() + ": " + error.message());
  const int period_us = CpuPeriodUs(cores);
  const long quota_us = cores > 0 ? std::lround(cores * period_us) : -1;
  if (layout.version == CgroupVersion::kV1) {
    WriteCgroupFile(group / "cpu.cfs_period_us", std::to_string(period_us));
    WriteCgroupFile(group / "cpu.cfs_quota_us", std::to_string(quota_us));
  } else {
    WriteCgroupFile(fs::path(layout.cpu_root) / "cgroup.subtree_control", "+cpu");
    WriteCgroupFile(group / "cpu.max",
                    (quota_us < 0 ? std::string("max") : std::to_string(quota_us)) + " " +
                        std::to_string(period_us));
  }
}

std::string CgroupProcsFile(const CgroupLayout& layout, const std::string& name) {
  return (GroupDir(layout, name) / "cgroup.procs").string();
}

double CpuCgroupCores(const CgroupLayout& layout, const std::string& name) {
  const fs::path group = GroupDir(layout, name);
  std::string quota;
  std::string period;
  if (layout.version == CgroupVersion::kV1) {
    std::istringstream(ReadTextFile(group / "cpu.cfs_quota_us")) >> quota;
    std::istringstream(ReadTextFile(group / "cpu.cfs_period_us")) >> period;
  } else {
    std::istringstream(ReadTextFile(group / "cpu.max")) >> quota >> period;
  }
  if (quota.empty() || period.empty()) {
    throw ClusterError("cannot read the CPU limit of cgroup " + group.string());
  }
  if (quota == "max" || quota == "-1") return 0;
  return std::stod(quota) / std::stod(period);
}

void RemoveCpuCgroup(const CgroupLayout& layout, const std::string& name) {
  const fs::path group = GroupDir(layout, name);
  if (!fs::exists(group)) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    const std::vector<int> pids = Procs(group);
    if (pids.empty() && rmdir(group.c_str()) == 0) return;
    if (pids.empty() && errno != EBUSY) {
      throw ClusterError("cannot remove cgroup " + group.string() + ": " + std::strerror(errno));
    }
    for (int pid : pids) kill(pid, SIGKILL);
    if (std::chrono::steady_clock::now() > deadline) {
      throw ClusterError("cannot remove cgroup " + group.string() + ": its processes survive SIGKILL");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<std::string> ListCpuCgroups(const CgroupLayout& layout, const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(layout.cpu_root, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

}  // namespace dmlbench
