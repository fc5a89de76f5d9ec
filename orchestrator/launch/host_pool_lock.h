// HostPoolLock: one sweep per set of hosts at a time. Two sweeps on the same
// hosts share their cores and links — on the emulated cluster each even
// reshapes the shared links for its own profile — so both would store
// timings of the other's load as `complete` runs. A sweep therefore holds an
// exclusive flock(2) on one lock file per host (or one per emulated
// cluster) for as long as it runs, and writes into each who holds it, so
// that a second sweep is refused with the first one's database and process.
// The kernel drops the locks when the process dies, however it dies.
// Lock files live on this machine: two machines driving the same hosts are
// not seen. Not copyable; one owner.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_HOST_POOL_LOCK_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_HOST_POOL_LOCK_H_

#include <string>
#include <vector>

#include "orchestrator/core/subprocess.h"

namespace dmlbench {

class HostPoolLock {
 public:
  // Locks every file of `lock_files` (created, with their directories, when
  // missing; taken in sorted order so that two sweeps never hold one each of
  // the other's) and writes `holder` into each. `pool` names the hosts in
  // messages. Throws LaunchError when a file cannot be created ("<pool>:
  // cannot create the lock file <f>: <reason>") or another sweep holds one
  // ("<pool>: in use by another sweep (<its holder text>); wait for it to
  // end or stop it").
  HostPoolLock(std::vector<std::string> lock_files, const std::string& holder, const std::string& pool);
  HostPoolLock(const HostPoolLock&) = delete;
  HostPoolLock& operator=(const HostPoolLock&) = delete;

 private:
  std::vector<Fd> fds_;
};

// "process 4242 (database /abs/results.db)": what a sweep writes as holder.
std::string SweepHolderText(const std::string& db_path);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_HOST_POOL_LOCK_H_
