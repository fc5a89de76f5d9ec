#include "orchestrator/run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>

#include "orchestrator/run/runner.h"

namespace dmlbench {

RunLock::RunLock(const std::string& db_path) {
  const std::string path = db_path + ".lock";
  fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd_.get() < 0) throw RunnerError("cannot create lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    throw RunnerError(db_path + ": another `dmlbench run` is using this database");
  }
}

}  // namespace dmlbench
