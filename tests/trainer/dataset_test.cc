#include "trainer/dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/trainer/idx_files.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::Idx;
using testing::ToBytes;


// A directory of four small raw IDX files (2x2 images), removed afterwards.
class DatasetDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestDirectory("dmlbench-dataset-test");
    Write("train-images-idx3-ubyte", Idx({3, 2, 2}, Bytes(12, 255)));
    Write("train-labels-idx1-ubyte", Idx({3}, {0, 1, 9}));
    Write("t10k-images-idx3-ubyte", Idx({1, 2, 2}, {0, 51, 102, 255}));
    Write("t10k-labels-idx1-ubyte", Idx({1}, {4}));
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const Bytes& bytes) {
    std::ofstream out(dir_ / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::string LoadError() const {
    try {
      LoadDataset(dir_.string());
    } catch (const DatasetError& error) {
      return error.what();
    }
    return "no error";
  }

  std::string ChecksumError() const {
    try {
      DatasetSha256(dir_.string());
    } catch (const DatasetError& error) {
      return error.what();
    }
    return "no error";
  }

  fs::path dir_;
};

TEST_F(DatasetDir, LoadsRawFiles) {
  Dataset dataset = LoadDataset(dir_.string());
  EXPECT_EQ(dataset.features, 4);
  EXPECT_EQ(dataset.train.count, 3);
  EXPECT_EQ(ToBytes(dataset.train.labels), (Bytes{0, 1, 9}));
  EXPECT_EQ(dataset.test.count, 1);
  EXPECT_EQ(ToBytes(dataset.test.pixels), (Bytes{0, 51, 102, 255}));
  EXPECT_EQ(dataset.source, dir_.string());
  EXPECT_EQ(dataset.sha256.size(), 64u);
}

TEST(Dataset, LoadsFashionMnist) {
  Dataset dataset = LoadDataset(DMLBENCH_DATASET_DIR);
  EXPECT_EQ(dataset.features, 784);
  EXPECT_EQ(dataset.train.count, 60000);
  EXPECT_EQ(dataset.test.count, 10000);
  EXPECT_EQ(dataset.train.pixels.size(), 60000u * 784);
  // sha256 of the four .gz files of Debian's dataset-fashion-mnist, concatenated.
  EXPECT_EQ(dataset.sha256, "362ba1f5424f406d0db9c78b0e83db011b09c121c5c5f94ee5c077628f9adb5c");
  EXPECT_EQ(DatasetSha256(DMLBENCH_DATASET_DIR), dataset.sha256);
}

TEST_F(DatasetDir, Sha256WithoutLoadingIsTheLoadedChecksum) {
  EXPECT_EQ(DatasetSha256(dir_.string()), LoadDataset(dir_.string()).sha256);
}

TEST_F(DatasetDir, FindsRawFilesInChecksumOrder) {
  const DatasetFiles files = FindDatasetFiles(dir_.string());
  EXPECT_EQ(files.train_images, Path("train-images-idx3-ubyte"));
  EXPECT_EQ(files.train_labels, Path("train-labels-idx1-ubyte"));
  EXPECT_EQ(files.test_images, Path("t10k-images-idx3-ubyte"));
  EXPECT_EQ(files.test_labels, Path("t10k-labels-idx1-ubyte"));
}

TEST_F(DatasetDir, CompressedNameIsPreferred) {
  Write("t10k-labels-idx1-ubyte.gz", Bytes{0x1f, 0x8b});  // never read by the search
  fs::create_directory(dir_ / "train-images-idx3-ubyte.gz");  // not a regular file
  const DatasetFiles files = FindDatasetFiles(dir_.string());
  EXPECT_EQ(files.test_labels, Path("t10k-labels-idx1-ubyte.gz"));
  EXPECT_EQ(files.train_images, Path("train-images-idx3-ubyte"));
}

TEST(Dataset, SyntheticIsDeterministicAndLabelled) {
  Dataset a = MakeSyntheticDataset(120, 5);
  Dataset b = MakeSyntheticDataset(120, 5);
  Dataset c = MakeSyntheticDataset(120, 6);
  EXPECT_EQ(a.features, 784);
  EXPECT_EQ(a.train.count, 120);
  EXPECT_EQ(a.test.count, 20);
  EXPECT_EQ(ToBytes(a.train.pixels), ToBytes(b.train.pixels));
  EXPECT_EQ(ToBytes(a.test.labels), ToBytes(b.test.labels));
  EXPECT_NE(ToBytes(a.train.pixels), ToBytes(c.train.pixels));
  EXPECT_EQ(a.sha256, "synthetic:5:120");
  EXPECT_EQ(a.source, "synthetic");
  EXPECT_EQ(std::set<std::uint8_t>(a.train.labels.begin(), a.train.labels.end()).size(), 10u);
  EXPECT_EQ(MakeSyntheticDataset(3, 1).test.count, 1);
}

TEST(Dataset, EpochPermutationIsAPermutationFixedBySeedAndEpoch) {
  std::vector<std::uint32_t> p = EpochPermutation(1000, 42, 0);
  std::vector<std::uint32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(p, EpochPermutation(1000, 42, 0));
  EXPECT_NE(p, EpochPermutation(1000, 42, 1));
  EXPECT_NE(p, EpochPermutation(1000, 43, 0));
  // Pinned: the order must not change with the compiler or standard library.
  EXPECT_EQ(EpochPermutation(10, 1, 0), (std::vector<std::uint32_t>{4, 6, 8, 9, 3, 5, 7, 2, 0, 1}));
}

TEST(Dataset, IterationsPerEpoch) {
  EXPECT_EQ(IterationsPerEpoch(60000, 100, 1, 0), 600);
  EXPECT_EQ(IterationsPerEpoch(60000, 100, 7, 0), 85);
  EXPECT_EQ(IterationsPerEpoch(60000, 100, 7, 10), 10);
  EXPECT_EQ(IterationsPerEpoch(60000, 100, 1, 1000), 600);
  EXPECT_EQ(IterationsPerEpoch(5, 2, 3, 0), 0);
}

TEST(Dataset, WorkerShardsSplitEachGlobalBatchInOrder) {
  std::vector<std::uint32_t> p = EpochPermutation(50, 3, 2);
  const int batch = 2, workers = 3;
  for (std::int64_t i = 0; i < IterationsPerEpoch(50, batch, workers, 0); ++i) {
    std::vector<std::uint32_t> joined;
    for (int j = 0; j < workers; ++j) {
      auto shard = WorkerShard(p, i, batch, workers, j);
      ASSERT_EQ(shard.size(), 2u);
      joined.insert(joined.end(), shard.begin(), shard.end());
    }
    EXPECT_EQ(joined, std::vector<std::uint32_t>(p.begin() + i * 6, p.begin() + (i + 1) * 6))
        << "global batch " << i;
  }
}

TEST_F(DatasetDir, GatherBatchScalesPixelsToUnitRange) {
  Dataset dataset = LoadDataset(dir_.string());
  std::vector<float> pixels(8);
  Bytes labels(2);
  std::vector<std::uint32_t> indices = {2, 0};
  GatherBatch(dataset.train, 4, indices, pixels.data(), labels.data());
  EXPECT_EQ(labels, (Bytes{9, 0}));
  EXPECT_EQ(pixels, std::vector<float>(8, 1.0f));
  GatherBatch(dataset.test, 4, std::vector<std::uint32_t>{0}, pixels.data(), labels.data());
  EXPECT_FLOAT_EQ(pixels[1], 0.2f);
  EXPECT_EQ(labels[0], 4);
}

// Every byte value becomes byte * (1/255) exactly, whatever the batch's
// length against the prefetch distance and a row's against the vector width.
TEST(GatherBatch, CopiesEachRowAsBytesTimesOneOver255) {
  constexpr int kFeatures = 259;
  constexpr int kRows = 40;
  Bytes train_pixels(std::size_t(kRows) * kFeatures), train_labels(kRows);
  for (int r = 0; r < kRows; ++r) {
    for (int p = 0; p < kFeatures; ++p)
      train_pixels[std::size_t(r) * kFeatures + p] = std::uint8_t((r * 7 + p) % 256);
    train_labels[r] = std::uint8_t(r % kClasses);
  }
  const Dataset dataset = MakeDataset(kFeatures, train_pixels, train_labels, Bytes(kFeatures), Bytes(1));
  for (const int rows : {1, 8, 9, 33}) {
    std::vector<std::uint32_t> indices;
    for (int r = 0; r < rows; ++r) indices.push_back(std::uint32_t((r * 13 + 5) % kRows));
    std::vector<float> pixels(std::size_t(rows) * kFeatures, -1.0f);
    Bytes labels(rows);
    GatherBatch(dataset.train, kFeatures, indices, pixels.data(), labels.data());
    for (int r = 0; r < rows; ++r) {
      ASSERT_EQ(labels[r], train_labels[indices[r]]) << "row " << r << " of " << rows;
      for (int p = 0; p < kFeatures; ++p) {
        const float expected = float(train_pixels[std::size_t(indices[r]) * kFeatures + p]) *
                               (1.0f / 255.0f);
        ASSERT_EQ(pixels[std::size_t(r) * kFeatures + p], expected)
            << "row " << r << " of " << rows << ", pixel " << p;
      }
    }
  }
}

// Error paths of dataset.cc follow, messages compared whole.

TEST(DatasetErrors, MissingDirectory) {
  try {
    LoadDataset("no/such/dir");
    FAIL() << "no error";
  } catch (const DatasetError& error) {
    EXPECT_STREQ(error.what(), "no/such/dir: dataset directory does not exist");
  }
}

TEST_F(DatasetDir, MissingFile) {
  fs::remove(dir_ / "t10k-labels-idx1-ubyte");
  EXPECT_EQ(LoadError(), dir_.string() +
                             ": neither t10k-labels-idx1-ubyte.gz nor t10k-labels-idx1-ubyte found");
  EXPECT_EQ(ChecksumError(), LoadError());
}

TEST_F(DatasetDir, FirstMissingFileIsNamed) {
  fs::remove(dir_ / "train-labels-idx1-ubyte");
  fs::remove(dir_ / "t10k-images-idx3-ubyte");
  EXPECT_EQ(ChecksumError(),
            dir_.string() + ": neither train-labels-idx1-ubyte.gz nor train-labels-idx1-ubyte found");
}

TEST(DatasetErrors, Sha256OfMissingDirectory) {
  try {
    DatasetSha256("no/such/dir");
    FAIL() << "no error";
  } catch (const DatasetError& error) {
    EXPECT_STREQ(error.what(), "no/such/dir: dataset directory does not exist");
  }
}

TEST_F(DatasetDir, CorruptFileNamesFileAndOffset) {
  Write("train-labels-idx1-ubyte", Idx({3}, {0, 1}));
  EXPECT_EQ(LoadError(), Path("train-labels-idx1-ubyte") +
                             ": byte 10: file ends after 2 of 3 data bytes (dimensions 3)");
}

TEST_F(DatasetDir, ImagesMustBeThreeDimensional) {
  Write("train-images-idx3-ubyte", Idx({12}, Bytes(12, 1)));
  EXPECT_EQ(LoadError(), Path("train-images-idx3-ubyte") +
                             ": byte 3: expected images (3 dimensions), found 1 dimension");
}

TEST_F(DatasetDir, LabelsMustBeOneDimensional) {
  Write("t10k-labels-idx1-ubyte", Idx({1, 1}, {4}));
  EXPECT_EQ(LoadError(), Path("t10k-labels-idx1-ubyte") +
                             ": byte 3: expected labels (1 dimension), found 2 dimensions");
}

TEST_F(DatasetDir, LabelCountMustMatchImages) {
  Write("train-labels-idx1-ubyte", Idx({2}, {0, 1}));
  EXPECT_EQ(LoadError(), Path("train-labels-idx1-ubyte") + ": byte 4: 2 labels for 3 images in " +
                             Path("train-images-idx3-ubyte"));
}

TEST_F(DatasetDir, LabelOutOfRange) {
  Write("train-labels-idx1-ubyte", Idx({3}, {0, 10, 9}));
  EXPECT_EQ(LoadError(), Path("train-labels-idx1-ubyte") + ": byte 9: label 10 out of range 0..9");
}

TEST_F(DatasetDir, TestImagesMustMatchTrainingImageSize) {
  Write("t10k-images-idx3-ubyte", Idx({1, 1, 4}, {0, 51, 102, 255}));
  EXPECT_EQ(LoadError(), Path("t10k-images-idx3-ubyte") +
                             ": byte 8: images are 1x4, the training images are 2x2");
}

TEST_F(DatasetDir, ImagesWithoutPixels) {
  Write("train-images-idx3-ubyte", Idx({3, 0, 2}, {}));
  Write("t10k-images-idx3-ubyte", Idx({1, 0, 2}, {}));
  EXPECT_EQ(LoadError(), Path("train-images-idx3-ubyte") + ": byte 8: images have no pixels");
}

}  // namespace
}  // namespace dmlbench
