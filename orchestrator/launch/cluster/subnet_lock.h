// SubnetLock: serialises the choice of a cluster's /24 between `cluster up`s
// running at once on this machine: the bridge address that claims the
// subnet exists before the lock is released. Root-only state, so it lives in
// a root-owned directory (/run/dmlbench), never in a shared /tmp where
// another user could place a link or hold the lock; the file is opened
// without following a link and must be a regular file of this user's. A
// lock held by another process is waited for with a message saying whose
// it is, for a bounded time. One object per process and lock; not
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_SUBNET_LOCK_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_SUBNET_LOCK_H_

#include <iosfwd>
#include <string>

#include "orchestrator/launch/cluster/host_setup.h"

namespace dmlbench {

// <kClusterRuntimeRoot>/subnet.lock.
std::string SubnetLockPath();

class SubnetLock {
 public:
  // Takes the lock at `path` (its directory is made, mode 0755, when
  // missing; it must be a directory of this user's that others cannot
  // write). When another process holds it, says so on `notes` once and
  // waits up to `wait_s`, calling `interrupted` between tries. Throws
  // ClusterError naming the path and the cause, or the holder's pid when
  // the wait ran out.
  SubnetLock(const std::string& path, double wait_s, std::ostream& notes, const InterruptCheck& interrupted);
  ~SubnetLock();
  SubnetLock(const SubnetLock&) = delete;
  SubnetLock& operator=(const SubnetLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_SUBNET_LOCK_H_
