// Cgroup: one CPU cgroup per emulated host, capping it at a share of a core
// (cgroup v1 `cpu.cfs_quota_us` or v2 `cpu.max`, whichever this machine
// has). A process joins by writing its pid to procs_file(); its children
// inherit the group. Owns nothing beyond the directories it creates; the
// filesystem root is a parameter so tests can use a directory of their own.
// Stateless functions; safe from any thread for distinct groups.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CGROUP_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CGROUP_H_

#include <string>
#include <vector>

namespace dmlbench {

enum class CgroupVersion { kV1, kV2 };

// Where CPU cgroups are made on this machine.
struct CgroupLayout {
  CgroupVersion version = CgroupVersion::kV1;
  std::string cpu_root;    // directory holding the groups (e.g. <root>/cpu for v1)
};

// Finds the CPU controller under `root` (normally /sys/fs/cgroup): v2 when
// root (or root/unified) lists `cpu` in cgroup.controllers, else v1 when
// root/cpu (or root/cpu,cpuacct) has cpu.cfs_quota_us. Throws ClusterError
// "no CPU cgroup controller under <root>: neither cgroup v2 with the cpu
// controller nor cgroup v1 cpu.cfs_quota_us".
CgroupLayout DetectCgroupLayout(const std::string& root);

// The period a quota of `cores` is measured over, microseconds: 10 ms, or
// longer for shares below 0.1 core, whose quota would fall under the
// kernel's minimum of 1 ms (at most kMaxCpuPeriodUs). A short period makes
// a capped host a slower CPU rather than a fast one that stops: over
// 100 ms, 0.15 core ran 15 ms at full speed and then nothing for 85 ms, and
// the link probe measured 256 KiB and 512 KiB both at 50 ms one way.
int CpuPeriodUs(double cores);
constexpr int kMinCpuQuotaUs = 1000;
constexpr int kMaxCpuPeriodUs = 100000;

// Creates group `name` (or reuses it) limited to `cores` CPUs; 0 = no limit.
// v2: enables +cpu in the parent's cgroup.subtree_control first. Throws
// ClusterError naming the file that could not be written and why.
void CreateCpuCgroup(const CgroupLayout& layout, const std::string& name, double cores);

// The file a process writes its pid to in order to join group `name`.
std::string CgroupProcsFile(const CgroupLayout& layout, const std::string& name);

// The current limit of group `name` in cores (0 = no limit).
double CpuCgroupCores(const CgroupLayout& layout, const std::string& name);

// Kills every process in group `name` (SIGKILL, up to 2 s) and removes it;
// a missing group is not an error. Throws ClusterError if it stays.
void RemoveCpuCgroup(const CgroupLayout& layout, const std::string& name);

// Groups directly under the layout's root whose name starts with `prefix`.
std::vector<std::string> ListCpuCgroups(const CgroupLayout& layout, const std::string& prefix);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_CGROUP_H_
