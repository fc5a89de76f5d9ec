#include "orchestrator/run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "orchestrator/run/runner.h"

namespace dmlbench {

RunLock::RunLock(const std::string& db_path) {
  // O_CLOEXEC: mpirun and the ranks must not inherit (and so keep) the lock.
  fd_.reset(::open(db_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd_.get() < 0) throw RunnerError(db_path + ": database is not writable: " + std::strerror(errno));
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    throw RunnerError(db_path + ": another `dmlbench run` is using this database");
  }
}

bool RunLock::Covers(const std::string& path) const {
  struct stat held {};
  struct stat named {};
  return ::fstat(fd_.get(), &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace dmlbench
