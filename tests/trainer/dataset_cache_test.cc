// The decoded dataset cache: a second load reads the first one's copy and
// gives the same dataset and checksum; a rewritten file, a damaged copy or a
// cache that cannot be written fall back to decoding the files.
#include "trainer/dataset_cache.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/trainer/idx_files.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::Idx;


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
    EXPECT_EQ(a.train.pixels, b.train.pixels);
    EXPECT_EQ(a.train.labels, b.train.labels);
    EXPECT_EQ(a.test.count, b.test.count);
    EXPECT_EQ(a.test.pixels, b.test.pixels);
    EXPECT_EQ(a.test.labels, b.test.labels);
  }

  fs::path dir_;
  std::string data_, cache_;
};

TEST_F(DatasetCacheTest, TheSecondLoadReadsTheDecodedCopyAndGivesTheSameDataset) {
  const Dataset files = LoadDataset(data_);
  ExpectSame(LoadDatasetCached(data_, cache_), files);
  const std::string path = DatasetCachePath(data_, cache_);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(fs::status(cache_).permissions() & fs::perms::all, fs::perms::owner_all);
  // The copy, not the files, is read now: a copy with other pixels shows it.
  {
    std::fstream copy(path, std::ios::in | std::ios::out | std::ios::binary);
    copy.seekp(-1 - 1 - 4 - 3, std::ios::end);  // the last training pixel
    copy.put(char(99));
  }
  const Dataset cached = LoadDatasetCached(data_, cache_);
  EXPECT_EQ(cached.train.pixels.back(), 99);
  EXPECT_EQ(cached.sha256, files.sha256);
}

TEST_F(DatasetCacheTest, ARewrittenFileIsDecodedAgainUnderAnotherName) {
  const Dataset before = LoadDatasetCached(data_, cache_);
  const std::string old_path = DatasetCachePath(data_, cache_);
  WriteGzip("t10k-labels-idx1-ubyte.gz", Idx({1}, {7}));
  EXPECT_NE(DatasetCachePath(data_, cache_), old_path);
  const Dataset after = LoadDatasetCached(data_, cache_);
  EXPECT_EQ(after.test.labels, Bytes{7});
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

TEST_F(DatasetCacheTest, AReadMarksTheCopyUsed) {
  LoadDatasetCached(data_, cache_);
  const std::string path = DatasetCachePath(data_, cache_);
  const fs::file_time_type old = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(path, old);
  LoadDatasetCached(data_, cache_);
  EXPECT_GT(fs::last_write_time(path), old + std::chrono::hours(23));
}

TEST_F(DatasetCacheTest, TheDirectoryKeepsTheThreeCopiesUsedLast) {
  // Four versions of the files, each decoded once; the first is read again
  // after the third, so the second is the one used longest ago.
  std::vector<std::string> copies;
  for (std::uint8_t label = 0; label < 4; ++label) {
    WriteGzip("t10k-labels-idx1-ubyte.gz", Idx({1}, {label}));
    LoadDatasetCached(data_, cache_);
    copies.push_back(DatasetCachePath(data_, cache_));
    fs::last_write_time(copies.back(), fs::file_time_type::clock::now() - std::chrono::hours(10 - label));
    if (label == 2) fs::last_write_time(copies[0], fs::file_time_type::clock::now() - std::chrono::minutes(1));
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

TEST_F(DatasetCacheTest, MissingFilesAreTheDatasetsError) {
  fs::remove(fs::path(data_) / "t10k-labels-idx1-ubyte.gz");
  EXPECT_THROW(LoadDatasetCached(data_, cache_), DatasetError);
}

}  // namespace
}  // namespace dmlbench
