#include "trainer/dataset_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "common/sha256.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// The file's first bytes; a new layout gets a new magic.
constexpr char kMagic[8] = {'d', 'm', 'l', 'b', 'd', 's', '0', '1'};
constexpr std::size_t kSha256Hex = 64;
// Copies a cache directory keeps: the most recently used (written or read;
// a read sets the copy's modification time). Each is about 55 MB for
// Fashion-MNIST, and every rewrite of the dataset's files names a new one.
constexpr std::size_t kKeptCopies = 3;
constexpr const char* kCopyExtension = ".dataset";

// What follows the magic, before the four arrays (train pixels, train
// labels, test pixels, test labels), in this machine's byte order: the
// file never leaves the host that wrote it.
struct Header {
  std::int64_t features = 0;
  std::int64_t train_count = 0;
  std::int64_t test_count = 0;
  char sha256[kSha256Hex] = {};
};

std::string Identity(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw DatasetError(path + ": " + std::strerror(errno));
  return fs::absolute(path).string() + '\0' + std::to_string(info.st_dev) + ':' + std::to_string(info.st_ino) +
         ':' + std::to_string(info.st_size) + ':' + std::to_string(info.st_mtim.tv_sec) + '.' +
         std::to_string(info.st_mtim.tv_nsec) + ':' + std::to_string(info.st_ctim.tv_sec) + '.' +
         std::to_string(info.st_ctim.tv_nsec) + '\n';
}

template <typename T>
bool ReadInto(std::ifstream& in, T* data, std::size_t bytes) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(data), static_cast<std::streamsize>(bytes)));
}

// The cached copy at `path`, if it is one whole and sound.
std::optional<Dataset> ReadCache(const std::string& path, const std::string& directory) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  char magic[sizeof kMagic];
  Header header;
  if (!ReadInto(in, magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0 ||
      !ReadInto(in, &header, sizeof header) || header.features <= 0 || header.train_count <= 0 ||
      header.test_count < 0) {
    return std::nullopt;
  }
  const std::uint64_t expected = sizeof kMagic + sizeof header +
                                 std::uint64_t(header.train_count + header.test_count) * (header.features + 1);
  std::error_code error;
  if (fs::file_size(path, error) != expected || error) return std::nullopt;
  Dataset dataset;
  dataset.features = static_cast<int>(header.features);
  dataset.source = directory;
  dataset.sha256.assign(header.sha256, kSha256Hex);
  for (auto [split, count] : {std::pair{&dataset.train, header.train_count}, {&dataset.test, header.test_count}}) {
    split->count = count;
    split->pixels.resize(std::size_t(count) * header.features);
    split->labels.resize(std::size_t(count));
    if (!ReadInto(in, split->pixels.data(), split->pixels.size()) ||
        !ReadInto(in, split->labels.data(), split->labels.size())) {
      return std::nullopt;
    }
  }
  return dataset;
}

// Keeps `dataset` at `path`: written under a name of this process's, then
// renamed over it. Failures leave no file behind and are not reported.
void WriteCache(const std::string& path, const Dataset& dataset) {
  if (dataset.sha256.size() != kSha256Hex) return;
  const std::string temporary = path + "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    Header header;
    header.features = dataset.features;
    header.train_count = dataset.train.count;
    header.test_count = dataset.test.count;
    std::memcpy(header.sha256, dataset.sha256.data(), kSha256Hex);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    for (const Split* split : {&dataset.train, &dataset.test}) {
      out.write(reinterpret_cast<const char*>(split->pixels.data()), std::streamsize(split->pixels.size()));
      out.write(reinterpret_cast<const char*>(split->labels.data()), std::streamsize(split->labels.size()));
    }
    if (out.flush()) {
      out.close();
      std::error_code error;
      fs::rename(temporary, path, error);
      if (!error) return;
    }
  }
  std::error_code ignored;
  fs::remove(temporary, ignored);
}

// Marks the copy at `path` as just used, for PruneCache.
void Touch(const std::string& path) {
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
}

// Removes all but the kKeptCopies most recently used copies in `cache_dir`
// (kept_path among them). A copy another rank is reading stays readable
// until it closes it; one that cannot be removed is left.
void PruneCache(const std::string& cache_dir, const std::string& kept_path) {
  std::vector<std::pair<fs::file_time_type, fs::path>> copies;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(cache_dir, error)) {
    if (entry.path().extension() != kCopyExtension || entry.path() == fs::path(kept_path)) continue;
    const fs::file_time_type used = entry.last_write_time(error);
    if (!error) copies.emplace_back(used, entry.path());
  }
  if (copies.size() < kKeptCopies) return;
  std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = kKeptCopies - 1; i < copies.size(); ++i) fs::remove(copies[i].second, error);
}

// Whether `directory` exists and belongs to this user: the ranks trust what
// they read from it, so nobody else may have put it there.
bool Ours(const std::string& directory) {
  struct stat info {};
  return ::stat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid();
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
