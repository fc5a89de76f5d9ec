#include "orchestrator/launch/host_pool_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "orchestrator/launch/launcher.h"

namespace dmlbench {
namespace {

std::string ReadHolder(int fd) {
  std::string text(512, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text.empty() ? "a process that has not said which" : text;
}

}  // namespace

HostPoolLock::HostPoolLock(std::vector<std::string> lock_files, const std::string& holder,
                           const std::string& pool) {
  std::sort(lock_files.begin(), lock_files.end());
  lock_files.erase(std::unique(lock_files.begin(), lock_files.end()), lock_files.end());
  for (const std::string& file : lock_files) {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ignored);
    // O_CLOEXEC: mpirun and the ranks must not inherit (and so keep) the lock.
    Fd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) {
      throw LaunchError(pool + ": cannot create the lock file " + file + ": " + std::strerror(errno));
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      throw LaunchError(pool + ": in use by another sweep (" + ReadHolder(fd.get()) +
                        "); wait for it to end or stop it");
    }
    const std::string text = holder + "\n";
    if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), text.data(), text.size(), 0) < 0) {
      throw LaunchError(pool + ": cannot write the lock file " + file + ": " + std::strerror(errno));
    }
    fds_.push_back(std::move(fd));
  }
}

std::string SweepHolderText(const std::string& db_path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(db_path, error);
  return "process " + std::to_string(::getpid()) + " (database " + (error ? db_path : absolute.string()) + ")";
}

}  // namespace dmlbench
