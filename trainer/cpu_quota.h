// CpuQuota: how often the CPU quota of this process's cgroup stopped it
// (cgroup v1 cpu.cfs_quota_us or v2 cpu.max), read from the group's
// cpu.stat. A rank under a quota that is throttled in most periods is bound
// by its CPU share, not by the links; the epoch event reports the counters
// so that a benchmark or a model can tell the two apart. The group is the
// host's (an emulated host, a container), shared by every process in it.
#ifndef DMLBENCH_TRAINER_CPU_QUOTA_H_
#define DMLBENCH_TRAINER_CPU_QUOTA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dmlbench {

// cpu.stat's counters since the group was made.
struct QuotaCounters {
  std::uint64_t periods = 0;            // nr_periods: quota periods with runnable tasks
  std::uint64_t throttled_periods = 0;  // nr_throttled: periods that ran out of quota
  double throttled_s = 0;               // throttled_time (v1, ns) or throttled_usec (v2)
  bool quota_set = false;               // whether a quota was in force when read (CpuQuota::Read)
};

// The directory of the cgroup holding this process's CPU controller, from
// the text of /proc/self/cgroup and /proc/self/mountinfo: for v1 the
// hierarchy whose controllers include "cpu", for v2 the unified one (only
// when no v1 hierarchy has "cpu"). nullopt when neither is mounted.
struct CgroupDir {
  std::string path;
  bool v2 = false;
};
std::optional<CgroupDir> CpuCgroupDir(std::string_view proc_self_cgroup, std::string_view mountinfo);

// Whether a quota is set: v1 cpu.cfs_quota_us other than -1, v2 cpu.max
// whose first field is not "max".
bool QuotaIsSet(std::string_view quota_file_text, bool v2);

// cpu.stat's counters; nullopt when nr_periods or nr_throttled is missing.
std::optional<QuotaCounters> ParseCpuStat(std::string_view text);

// The quota of this process's cgroup, which is found once, at construction.
// The quota itself may come and go (the emulated cluster lifts it while a
// job starts), so it is looked at on every read.
class CpuQuota {
 public:
  CpuQuota();
  // The counters now, and whether a quota is in force; nullopt when there
  // is no CPU cgroup or its files cannot be read.
  std::optional<QuotaCounters> Read() const;

 private:
  std::string dir_;
  bool v2_ = false;
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_CPU_QUOTA_H_
