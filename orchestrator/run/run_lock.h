// RunLock: one sweep per database at a time. Held for a whole `run`; a
// second `run` on the same database is refused rather than both marking
// each other's runs interrupted. The kernel drops the lock when the process
// dies, however it dies. Not copyable; one owner.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_
#define DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_

#include <string>

#include "orchestrator/core/subprocess.h"

namespace dmlbench {

class RunLock {
 public:
  // Takes the lock of database `db_path` or throws RunnerError.
  explicit RunLock(const std::string& db_path);
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  Fd fd_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_
