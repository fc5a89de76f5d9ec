// RunLock: one sweep per database file at a time. An exclusive flock(2) on
// the database file itself, so every path to it (a symlink, "./", a hard
// link, a bind mount) meets the same lock; a second `run` is refused rather
// than both running every run. The kernel drops the lock when the process
// dies, however it dies. Not copyable; one owner.
//
// Take it before the database is opened for writing and release it after
// every connection of this process to that file is closed (declare it
// first): closing any descriptor of a file drops the process's POSIX record
// locks on it, which SQLite relies on. Local file systems only (as SQLite's
// WAL mode).
#ifndef DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_
#define DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_

#include <string>

#include "orchestrator/core/subprocess.h"

namespace dmlbench {

class RunLock {
 public:
  // Locks the database file `db_path`, creating it (empty, as SQLite creates
  // a database) when missing. Throws RunnerError when the file cannot be
  // opened for writing ("<db>: database is not writable: <reason>") or
  // another sweep holds it ("<db>: another `dmlbench run` is using this
  // database").
  explicit RunLock(const std::string& db_path);
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // Whether `path` names the file this lock holds (same device and inode).
  bool Covers(const std::string& path) const;

 private:
  Fd fd_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_RUN_LOCK_H_
