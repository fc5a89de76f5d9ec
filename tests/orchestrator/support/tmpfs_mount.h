// TmpfsMount: a small tmpfs mounted under a test's temporary directory, for
// tests of a full disk and of a read-only file system. Needs root: when the
// mount fails, mounted() is false and the test skips itself. Unmounts at
// destruction. Header-only; one thread.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_TMPFS_MOUNT_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_TMPFS_MOUNT_H_

#include <sys/mount.h>

#include <filesystem>
#include <string>

#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench::testing {

// Mounts a tmpfs of `size` (e.g. "1m") at dir/mnt.
class TmpfsMount {
 public:
  TmpfsMount(const TempDir& dir, const std::string& size) : path_(dir / "mnt") {
    std::filesystem::create_directories(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool mounted() const { return mounted_; }
  bool RemountReadOnly() {
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_TMPFS_MOUNT_H_
