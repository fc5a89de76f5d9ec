#include "orchestrator/launch/cluster/subnet_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <thread>

#include "orchestrator/launch/cluster/cluster_state.h"
#include "orchestrator/launch/cluster/netns.h"

namespace dmlbench {
namespace {

std::string Because(const std::string& path) { return "cannot lock " + path + ": " + std::strerror(errno); }

// Refuses a directory that is a link, not this user's, or writable by others.
void CheckDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw ClusterError(Because(dir));
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) throw ClusterError(Because(dir));
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw ClusterError("cannot lock in " + dir + ": not a directory of this user's alone (a link, another user's, "
                       "or writable by others)");
  }
}

}  // namespace

std::string SubnetLockPath() { return std::string(kClusterRuntimeRoot) + "/subnet.lock"; }

SubnetLock::SubnetLock(const std::string& path, double wait_s, std::ostream& notes,
                       const InterruptCheck& interrupted) {
  CheckDirectory(std::filesystem::path(path).parent_path().string());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw ClusterError(Because(path));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) {
    ::close(fd_);
    throw ClusterError("cannot lock " + path + ": not a regular file of this user's");
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  bool said = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const std::string why = Because(path);
      ::close(fd_);
      throw ClusterError(why);
    }
    char holder[32] = {};
    ::pread(fd_, holder, sizeof holder - 1, 0);
    const std::string pid = std::string(holder).substr(0, std::string(holder).find('\n'));
    const std::string whose = "held by " + (pid.empty() ? std::string("another process") : "pid " + pid) +
                              " (another `dmlbench cluster up` choosing its subnet)";
    if (std::chrono::steady_clock::now() >= until) {
      ::close(fd_);
      std::ostringstream waited;
      waited << wait_s;
      throw ClusterError("waited " + waited.str() + " s for " + path + ", " + whose +
                         "; run `dmlbench cluster up` again once it is done");
    }
    if (!said) {
      notes << "dmlbench: waiting for " << path << ", " << whose << "\n" << std::flush;
      said = true;
    }
    try {
      interrupted();
    } catch (...) {
      ::close(fd_);
      throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Who holds it, for the next one that waits.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) ::pwrite(fd_, pid.data(), pid.size(), 0);
}

SubnetLock::~SubnetLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace dmlbench
