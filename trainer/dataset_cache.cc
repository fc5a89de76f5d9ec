#include "trainer/dataset_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "common/sha256.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// The file's first bytes; a new layout gets a new magic.
constexpr char kMagic[8] = {'d', 'm', 'l', 'b', 'd', 's', '0', '2'};
constexpr std::size_t kSha256Hex = 64;
// The header fills the first block and every array starts a block of its
// own, so that the arrays of a mapped copy are page-aligned.
constexpr std::uint64_t kBlockBytes = 4096;
// Copies a cache directory keeps: the most recently used (written or read;
// a read sets the copy's access time). Each is about 55 MB for
// Fashion-MNIST, and every rewrite of the dataset's files names a new one.
constexpr std::size_t kKeptCopies = 3;
constexpr const char* kCopyExtension = ".dataset";

// The first block, in this machine's byte order (the file never leaves the
// host that wrote it); the four arrays follow, each at a block boundary:
// train pixels, train labels, test pixels, test labels.
struct Header {
  char magic[sizeof kMagic] = {};
  std::int64_t features = 0;
  std::int64_t train_count = 0;
  std::int64_t test_count = 0;
  char sha256[kSha256Hex] = {};   // of the IDX files, as run_start reports it
  // The modification time the writer gave the finished file, whole seconds.
  std::int64_t written_s = 0;
};
static_assert(sizeof(Header) <= kBlockBytes);

std::uint64_t BlockAligned(std::uint64_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes; }

// Where each array of a copy with this header starts, and the file's size.
struct Layout {
  std::uint64_t train_pixels, train_labels, test_pixels, test_labels, file_bytes;
};

Layout LayoutOf(const Header& header) {
  Layout layout{};
  const auto features = std::uint64_t(header.features);
  layout.train_pixels = kBlockBytes;
  layout.train_labels = BlockAligned(layout.train_pixels + std::uint64_t(header.train_count) * features);
  layout.test_pixels = BlockAligned(layout.train_labels + std::uint64_t(header.train_count));
  layout.test_labels = BlockAligned(layout.test_pixels + std::uint64_t(header.test_count) * features);
  layout.file_bytes = layout.test_labels + std::uint64_t(header.test_count);
  return layout;
}

std::string Identity(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw DatasetError(path + ": " + std::strerror(errno));
  return fs::absolute(path).string() + '\0' + std::to_string(info.st_dev) + ':' + std::to_string(info.st_ino) +
         ':' + std::to_string(info.st_size) + ':' + std::to_string(info.st_mtim.tv_sec) + '.' +
         std::to_string(info.st_mtim.tv_nsec) + ':' + std::to_string(info.st_ctim.tv_sec) + '.' +
         std::to_string(info.st_ctim.tv_nsec) + '\n';
}

// A file descriptor, closed when it goes.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A read-only mapping of a whole file, unmapped when the last Dataset
// holding it goes. The ranks of a host that map the same copy share its
// pages in the page cache: nothing is copied or decoded.
class Mapping {
 public:
  Mapping(void* address, std::size_t bytes) : address_(address), bytes_(bytes) {}
  ~Mapping() { ::munmap(address_, bytes_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const std::uint8_t* at(std::uint64_t offset) const { return static_cast<const std::uint8_t*>(address_) + offset; }

 private:
  void* address_;
  std::size_t bytes_;
};

// Whether `fd` holds one whole copy that `header` (read from it) describes
// and that nothing has written to since its writer finished it.
//
// What a copy can suffer, and what catches it:
//  - a writer that stopped half way: it wrote under a temporary name and
//    renames only a complete, flushed file (WriteCache), so a copy under its
//    final name is whole;
//  - a copy cut short or grown: its size must be exactly what its header
//    declares;
//  - a write into the copy after it was finished (a stray tool, an edit):
//    any write sets the file's modification time to the time of writing,
//    which differs from the whole second its writer set it to and recorded
//    in the header; only a deliberate reset of the time would hide it, and
//    the directory is its user's alone;
//  - labels out of range (the one fault that would make training read
//    outside its arrays): checked on every read, 70 KB for Fashion-MNIST.
// What is not re-checked is a byte changed on the disk itself beneath the
// file system, the same trust every program places in the files it reads;
// hashing the whole copy on every run (47 MB) is what the cache saves.
bool Whole(int fd, const Header& header) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) return false;
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.features <= 0 || header.train_count <= 0 ||
      header.test_count < 0 || header.train_count > (std::int64_t{1} << 40) / header.features ||
      header.test_count > (std::int64_t{1} << 40) / header.features)
    return false;
  return std::uint64_t(info.st_size) == LayoutOf(header).file_bytes && info.st_mtim.tv_sec == header.written_s &&
         info.st_mtim.tv_nsec == 0;
}

bool LabelsInRange(std::span<const std::uint8_t> labels) {
  return std::all_of(labels.begin(), labels.end(), [](std::uint8_t label) { return label < kClasses; });
}

// The cached copy at `path`, mapped, if it is one whole and sound (Whole).
std::optional<Dataset> ReadCache(const std::string& path, const std::string& directory) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  Header header;
  if (::pread(fd.get(), &header, sizeof header, 0) != ssize_t(sizeof header) || !Whole(fd.get(), header))
    return std::nullopt;
  const Layout layout = LayoutOf(header);
  // Mapped with its page tables filled now, so that the first epoch takes no
  // page faults; the pages themselves are the page cache's.
  void* address = ::mmap(nullptr, layout.file_bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (address == MAP_FAILED) return std::nullopt;
  auto mapping = std::make_shared<const Mapping>(address, layout.file_bytes);

  Dataset dataset;
  dataset.features = static_cast<int>(header.features);
  dataset.source = directory;
  dataset.sha256.assign(header.sha256, kSha256Hex);
  const auto features = std::size_t(header.features);
  const auto train = std::size_t(header.train_count), test = std::size_t(header.test_count);
  dataset.train = {header.train_count, {mapping->at(layout.train_pixels), train * features},
                   {mapping->at(layout.train_labels), train}};
  dataset.test = {header.test_count, {mapping->at(layout.test_pixels), test * features},
                  {mapping->at(layout.test_labels), test}};
  if (!LabelsInRange(dataset.train.labels) || !LabelsInRange(dataset.test.labels)) return std::nullopt;
  dataset.storage = std::move(mapping);
  return dataset;
}

bool WriteAll(int fd, std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd, bytes.data(), bytes.size(), off_t(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes = bytes.subspan(std::size_t(written));
    offset += std::uint64_t(written);
  }
  return true;
}

// Writes `dataset` to the open file `fd` and finishes it: flushed to the
// disk, its modification time the header's whole second.
bool WriteCopy(int fd, const Dataset& dataset) {
  Header header;
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.features = dataset.features;
  header.train_count = dataset.train.count;
  header.test_count = dataset.test.count;
  std::memcpy(header.sha256, dataset.sha256.data(), kSha256Hex);
  header.written_s = std::time(nullptr);
  const Layout layout = LayoutOf(header);
  const timespec times[2] = {{0, UTIME_NOW}, {header.written_s, 0}};   // access, modification
  return WriteAll(fd, {reinterpret_cast<const std::uint8_t*>(&header), sizeof header}, 0) &&
         WriteAll(fd, dataset.train.pixels, layout.train_pixels) &&
         WriteAll(fd, dataset.train.labels, layout.train_labels) &&
         WriteAll(fd, dataset.test.pixels, layout.test_pixels) &&
         WriteAll(fd, dataset.test.labels, layout.test_labels) &&
         ::ftruncate(fd, off_t(layout.file_bytes)) == 0 && ::futimens(fd, times) == 0 && ::fsync(fd) == 0;
}

// Keeps `dataset` at `path`: written whole under a new name no one could
// have placed beforehand (mkostemp: created, never opened through a link),
// then renamed over it. Failures leave no file behind and are not reported.
void WriteCache(const std::string& path, const Dataset& dataset) {
  if (dataset.sha256.size() != kSha256Hex) return;
  std::string temporary = path + ".XXXXXX";
  bool written = false;
  {
    const FileDescriptor fd(::mkostemp(temporary.data(), O_CLOEXEC));
    if (fd.get() < 0) return;
    written = WriteCopy(fd.get(), dataset);
  }
  std::error_code error;
  if (written) fs::rename(temporary, path, error);
  if (!written || error) fs::remove(temporary, error);
}

// Marks the copy at `path` as just used, for PruneCache: its access time,
// since its modification time is part of its check (Whole).
void Touch(const std::string& path) {
  const timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

// Removes all but the kKeptCopies most recently used copies in `cache_dir`
// (kept_path among them). A copy another rank has mapped stays readable
// until it unmaps it; one that cannot be removed is left.
void PruneCache(const std::string& cache_dir, const std::string& kept_path) {
  std::vector<std::pair<timespec, fs::path>> copies;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(cache_dir, error)) {
    if (entry.path().extension() != kCopyExtension || entry.path() == fs::path(kept_path)) continue;
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) == 0) copies.emplace_back(info.st_atim, entry.path());
  }
  if (copies.size() < kKeptCopies) return;
  std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.tv_sec, a.first.tv_nsec) > std::pair(b.first.tv_sec, b.first.tv_nsec);
  });
  for (std::size_t i = kKeptCopies - 1; i < copies.size(); ++i) fs::remove(copies[i].second, error);
}

// Whether `directory` is a directory of this user's alone: not a link
// (lstat), this user's, and writable by no one else. The ranks trust what
// they read from it and write into it, so nobody else may have put it or
// anything in it there.
bool Ours(const std::string& directory) {
  struct stat info {};
  return ::lstat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid() &&
         (info.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

std::string DatasetCachePath(const std::string& directory, const std::string& cache_dir) {
  const DatasetFiles files = FindDatasetFiles(directory);
  std::string identity;
  for (const std::string& file : {files.train_images, files.train_labels, files.test_images, files.test_labels})
    identity += Identity(file);
  try {
    return (fs::path(cache_dir) / (Sha256Hex(identity) + kCopyExtension)).string();
  } catch (const Sha256Error& error) {
    throw DatasetError(error.what());
  }
}

Dataset LoadDatasetCached(const std::string& directory, const std::string& cache_dir) {
  const std::string path = DatasetCachePath(directory, cache_dir);
  if (Ours(cache_dir)) {
    if (std::optional<Dataset> cached = ReadCache(path, directory)) {
      Touch(path);
      return std::move(*cached);
    }
  }
  Dataset dataset = LoadDataset(directory);
  std::error_code error;
  if (fs::create_directories(cache_dir, error)) fs::permissions(cache_dir, fs::perms::owner_all, error);
  if (!error && Ours(cache_dir)) {
    WriteCache(path, dataset);
    PruneCache(cache_dir, path);
  }
  return dataset;
}

}  // namespace dmlbench
