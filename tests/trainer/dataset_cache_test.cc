// The decoded dataset cache: a second load maps the first one's copy and
// gives the same dataset and checksum; a rewritten file, a copy written to,
// cut short or holding a label out of range, or a cache that cannot be
// written fall back to decoding the files (and a damaged copy is replaced).
#include "trainer/dataset_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/trainer/idx_files.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::Idx;
using testing::ToBytes;


class DatasetCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestDirectory("dmlbench-dataset-cache-test");
    data_ = (dir_ / "data").string();
    cache_ = (dir_ / "cache").string();
    fs::create_directories(data_);
    WriteGzip("train-images-idx3-ubyte.gz", Idx({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    WriteGzip("train-labels-idx1-ubyte.gz", Idx({3}, {0, 1, 9}));
    WriteGzip("t10k-images-idx3-ubyte.gz", Idx({1, 2, 2}, {0, 51, 102, 255}));
    WriteGzip("t10k-labels-idx1-ubyte.gz", Idx({1}, {4}));
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteGzip(const std::string& name, const Bytes& bytes) {
    gzFile file = gzopen((fs::path(data_) / name).c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(gzwrite(file, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
    gzclose(file);
  }

  static void ExpectSame(const Dataset& a, const Dataset& b) {
    EXPECT_EQ(a.features, b.features);
    EXPECT_EQ(a.sha256, b.sha256);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.train.count, b.train.count);
    EXPECT_EQ(ToBytes(a.train.pixels), ToBytes(b.train.pixels));
    EXPECT_EQ(ToBytes(a.train.labels), ToBytes(b.train.labels));
    EXPECT_EQ(a.test.count, b.test.count);
    EXPECT_EQ(ToBytes(a.test.pixels), ToBytes(b.test.pixels));
    EXPECT_EQ(ToBytes(a.test.labels), ToBytes(b.test.labels));
  }

  // Overwrites the byte at `offset` of the copy with `value`; with
  // `keep_time`, gives the copy back its modification time, as only a
  // deliberate reset would (a change the copy's check cannot see).
  static void Overwrite(const std::string& path, std::uint64_t offset, char value, bool keep_time) {
    const fs::file_time_type written = fs::last_write_time(path);
    {
      std::fstream copy(path, std::ios::in | std::ios::out | std::ios::binary);
      copy.seekp(std::streamoff(offset));
      copy.put(value);
    }
    if (keep_time) fs::last_write_time(path, written);
  }

  // Sets the copy's access time, by which the cache orders its copies.
  static void SetAccessTime(const std::string& path, std::chrono::seconds ago) {
    const std::int64_t seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch() - ago)
            .count();
    const timespec times[2] = {{seconds, 0}, {0, UTIME_OMIT}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }

  static std::int64_t AccessTime(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0);
    return info.st_atim.tv_sec;
  }

  fs::path dir_;
  std::string data_, cache_;
};

// Where the copy of the test's dataset keeps its arrays (4096-byte blocks,
// schemas/dataset-cache.md): the header, then the 12 training pixels, the 3
// training labels, the 4 test pixels and the test label, each in a block.
constexpr std::uint64_t kLastTrainingPixel = 4096 + 11;
constexpr std::uint64_t kFirstTrainingLabel = 2 * 4096;

TEST_F(DatasetCacheTest, TheSecondLoadReadsTheDecodedCopyAndGivesTheSameDataset) {
  const Dataset files = LoadDataset(data_);
  ExpectSame(LoadDatasetCached(data_, cache_), files);
  const std::string path = DatasetCachePath(data_, cache_);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(fs::file_size(path), 4 * 4096 + 1);
  EXPECT_EQ(fs::status(cache_).permissions() & fs::perms::all, fs::perms::owner_all);
  // The copy, not the files, is read now: a copy with other pixels shows it.
  Overwrite(path, kLastTrainingPixel, char(99), /*keep_time=*/true);
  const Dataset cached = LoadDatasetCached(data_, cache_);
  EXPECT_EQ(cached.train.pixels.back(), 99);
  EXPECT_EQ(cached.sha256, files.sha256);
}

TEST_F(DatasetCacheTest, TheCopyIsMappedFromItsFileNotCopied) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  const Dataset cached = LoadDatasetCached(data_, cache_);
  // /proc/self/maps: "begin-end perms offset dev inode path"; the copy's
  // file holds the training pixels' address.
  const auto address = reinterpret_cast<std::uintptr_t>(cached.train.pixels.data());
  std::ifstream maps("/proc/self/maps");
  std::string mapped_from;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::string perms, offset, device, inode, file;
    fields >> std::hex >> begin >> dash >> end >> perms >> offset >> device >> inode >> file;
    if (begin <= address && address < end) mapped_from = file + " " + perms;
  }
  EXPECT_EQ(mapped_from, path + " r--s");
}

TEST_F(DatasetCacheTest, TheDatasetOutlivesTheRemovalOfItsCopy) {
  LoadDatasetCached(data_, cache_);
  const Dataset cached = LoadDatasetCached(data_, cache_);
  fs::remove(DatasetCachePath(data_, cache_));
  ExpectSame(cached, LoadDataset(data_));
}

TEST_F(DatasetCacheTest, ARewrittenFileIsDecodedAgainUnderAnotherName) {
  const Dataset before = LoadDatasetCached(data_, cache_);
  const std::string old_path = DatasetCachePath(data_, cache_);
  WriteGzip("t10k-labels-idx1-ubyte.gz", Idx({1}, {7}));
  EXPECT_NE(DatasetCachePath(data_, cache_), old_path);
  const Dataset after = LoadDatasetCached(data_, cache_);
  EXPECT_EQ(ToBytes(after.test.labels), Bytes{7});
  EXPECT_NE(after.sha256, before.sha256);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
}

TEST_F(DatasetCacheTest, ACutCopyIsNotRead) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  const std::uintmax_t whole = fs::file_size(path);
  fs::resize_file(path, whole - 1);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  EXPECT_EQ(fs::file_size(path), whole);  // and written whole again
}

TEST_F(DatasetCacheTest, ACopyWrittenToIsNotReadAndIsWrittenAgain) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  Overwrite(path, kLastTrainingPixel, char(99), /*keep_time=*/false);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  std::ifstream copy(path, std::ios::binary);
  copy.seekg(std::streamoff(kLastTrainingPixel));
  EXPECT_EQ(copy.get(), 12);
}

TEST_F(DatasetCacheTest, ACopyWithALabelOutOfRangeIsNotRead) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  Overwrite(path, kFirstTrainingLabel, char(10), /*keep_time=*/true);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
}

TEST_F(DatasetCacheTest, ACopyOfAnotherLayoutIsReplaced) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  Overwrite(path, 7, '1', /*keep_time=*/true);   // magic "dmlbds01": the layout before this one
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  std::ifstream copy(path, std::ios::binary);
  copy.seekg(7);
  EXPECT_EQ(copy.get(), '2');
}

TEST_F(DatasetCacheTest, AReadMarksTheCopyUsed) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  SetAccessTime(path, std::chrono::hours(24));
  const std::int64_t before = AccessTime(path);
  LoadDatasetCached(data_, cache_);
  EXPECT_GT(AccessTime(path), before + 23 * 3600);
}

TEST_F(DatasetCacheTest, TheDirectoryKeepsTheThreeCopiesUsedLast) {
  // Four versions of the files, each decoded once; the first is read again
  // after the third, so the second is the one used longest ago.
  std::vector<std::string> copies;
  for (std::uint8_t label = 0; label < 4; ++label) {
    WriteGzip("t10k-labels-idx1-ubyte.gz", Idx({1}, {label}));
    LoadDatasetCached(data_, cache_);
    copies.push_back(DatasetCachePath(data_, cache_));
    SetAccessTime(copies.back(), std::chrono::hours(10 - label));
    if (label == 2) SetAccessTime(copies[0], std::chrono::minutes(1));
  }
  EXPECT_TRUE(fs::exists(copies[0]));
  EXPECT_FALSE(fs::exists(copies[1]));
  EXPECT_TRUE(fs::exists(copies[2]));
  EXPECT_TRUE(fs::exists(copies[3]));
}

TEST_F(DatasetCacheTest, ACacheThatCannotBeMadeIsNoError) {
  { std::ofstream(dir_ / "file") << "x"; }
  ExpectSame(LoadDatasetCached(data_, (dir_ / "file" / "cache").string()), LoadDataset(data_));
}

// The cache directory must be this user's alone: a link to a directory (even
// one of this user's), or one that others can write, is not used, and
// nothing is written through it.
TEST_F(DatasetCacheTest, ACacheDirectoryThatIsALinkIsNotUsed) {
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::permissions(elsewhere, fs::perms::owner_all);
  fs::create_directory_symlink(elsewhere, cache_);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(DatasetCacheTest, ACacheDirectoryOthersCanWriteIsNotUsed) {
  fs::create_directories(cache_);
  fs::permissions(cache_, fs::perms::all);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  EXPECT_TRUE(fs::is_empty(cache_));
}

TEST_F(DatasetCacheTest, ACacheDirectoryOfAnotherUserIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give the directory to another user";
  fs::create_directories(cache_);
  fs::permissions(cache_, fs::perms::owner_all);
  ASSERT_EQ(::chown(cache_.c_str(), 65534, 65534), 0);
  ExpectSame(LoadDatasetCached(data_, cache_), LoadDataset(data_));
  EXPECT_TRUE(fs::is_empty(cache_));
}

// A link placed beforehand at a name a writer could have picked (the copy's
// name with this process's id) is not written through.
TEST_F(DatasetCacheTest, AWriterOpensNoLinkPlacedBeforehand) {
  fs::create_directories(cache_);
  fs::permissions(cache_, fs::perms::owner_all);
  const std::string victim = (dir_ / "victim").string();
  { std::ofstream(victim) << "kept"; }
  const std::string copy = DatasetCachePath(data_, cache_);
  for (const std::string& name : {copy + "." + std::to_string(::getpid()) + ".tmp", copy + ".tmp"}) {
    fs::create_symlink(victim, name);
  }
  LoadDatasetCached(data_, cache_);
  std::ifstream in(victim);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "kept");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(copy)));
}

TEST_F(DatasetCacheTest, MissingFilesAreTheDatasetsError) {
  fs::remove(fs::path(data_) / "t10k-labels-idx1-ubyte.gz");
  EXPECT_THROW(LoadDatasetCached(data_, cache_), DatasetError);
}

}  // namespace
}  // namespace dmlbench
