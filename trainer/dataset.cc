#include "trainer/dataset.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <random>

#include "common/sha256.h"
#include "trainer/avx2_clone.h"
#include "trainer/idx_reader.h"

namespace dmlbench {
namespace {

constexpr int kSyntheticSide = 28;

// SplitMix64's finaliser: spreads (seed, epoch) over the generator's seed.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, bound) by rejection: exact, and defined by the generator's
// output alone (std::uniform_int_distribution's algorithm is unspecified).
std::uint64_t UniformBelow(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t excess = (std::numeric_limits<std::uint64_t>::max() % bound + 1) % bound;
  if (excess == 0) return rng() % bound;
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - excess + 1;
  std::uint64_t r;
  do r = rng();
  while (r >= limit);
  return r % bound;
}

std::string FindFile(const std::filesystem::path& directory, const std::string& base) {
  for (const std::string& candidate : {base + ".gz", base}) {
    std::filesystem::path path = directory / candidate;
    if (std::filesystem::is_regular_file(path)) return path.string();
  }
  throw DatasetError(directory.string() + ": neither " + base + ".gz nor " + base + " found");
}

// Reads and parses one IDX file and adds its bytes, as stored, to `hash`.
IdxArray ReadInto(const std::string& path, Sha256& hash) {
  std::vector<std::uint8_t> bytes;
  IdxArray array;
  try {
    array = ReadIdxFile(path, &bytes);
  } catch (const IdxError& error) {
    throw DatasetError(error.what());
  }
  hash.Update(bytes);
  return array;
}

std::string PluralDims(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " dimension" : " dimensions");
}

// Checks that `images` and `labels` make one split (see LoadDataset).
void CheckSplit(const std::string& images_path, const IdxArray& images,
                const std::string& labels_path, const IdxArray& labels) {
  if (images.dims.size() != 3)
    throw DatasetError(IdxPosition(images_path, 3, images.gzip) +
                       ": expected images (3 dimensions), found " + PluralDims(images.dims.size()));
  if (labels.dims.size() != 1)
    throw DatasetError(IdxPosition(labels_path, 3, labels.gzip) +
                       ": expected labels (1 dimension), found " + PluralDims(labels.dims.size()));
  if (labels.dims[0] != images.dims[0])
    throw DatasetError(IdxPosition(labels_path, 4, labels.gzip) + ": " +
                       std::to_string(labels.dims[0]) + " labels for " +
                       std::to_string(images.dims[0]) + " images in " + images_path);
  for (std::size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= kClasses)
      throw DatasetError(IdxPosition(labels_path, 8 + i, labels.gzip) + ": label " +
                         std::to_string(labels.data[i]) + " out of range 0.." +
                         std::to_string(kClasses - 1));
}

// `count` samples drawn from `rng` into `pixels` and `labels`.
void MakeSyntheticSplit(std::int64_t count, const std::vector<std::uint8_t>& prototypes,
                        std::mt19937_64& rng, std::vector<std::uint8_t>& pixels,
                        std::vector<std::uint8_t>& labels) {
  constexpr int kFeatures = kSyntheticSide * kSyntheticSide;
  pixels.resize(static_cast<std::size_t>(count) * kFeatures);
  labels.resize(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    auto label = static_cast<std::uint8_t>(UniformBelow(rng, kClasses));
    labels[i] = label;
    const std::uint8_t* prototype = &prototypes[std::size_t{label} * kFeatures];
    std::uint8_t* sample = &pixels[static_cast<std::size_t>(i) * kFeatures];
    for (int p = 0; p < kFeatures; ++p) {
      int noise = static_cast<int>(UniformBelow(rng, 129)) - 64;
      sample[p] = static_cast<std::uint8_t>(std::clamp(prototype[p] + noise, 0, 255));
    }
  }
}

// The four arrays a dataset in memory owns.
struct Arrays {
  std::vector<std::uint8_t> train_pixels, train_labels, test_pixels, test_labels;
};

Dataset Load(const std::string& directory) {
  const auto [train_images, train_labels, test_images, test_labels] = FindDatasetFiles(directory);
  Sha256 hash;
  IdxArray train_x = ReadInto(train_images, hash);
  IdxArray train_y = ReadInto(train_labels, hash);
  IdxArray test_x = ReadInto(test_images, hash);
  IdxArray test_y = ReadInto(test_labels, hash);

  const std::uint32_t rows = train_x.dims.size() == 3 ? train_x.dims[1] : 0;
  const std::uint32_t cols = train_x.dims.size() == 3 ? train_x.dims[2] : 0;
  CheckSplit(train_images, train_x, train_labels, train_y);
  CheckSplit(test_images, test_x, test_labels, test_y);
  if (test_x.dims[1] != rows || test_x.dims[2] != cols)
    throw DatasetError(IdxPosition(test_images, 8, test_x.gzip) + ": images are " +
                       std::to_string(test_x.dims[1]) + "x" + std::to_string(test_x.dims[2]) +
                       ", the training images are " + std::to_string(rows) + "x" +
                       std::to_string(cols));
  if (rows * cols == 0)
    throw DatasetError(IdxPosition(train_images, 8, train_x.gzip) + ": images have no pixels");
  Dataset dataset = MakeDataset(static_cast<int>(rows * cols), std::move(train_x.data),
                                std::move(train_y.data), std::move(test_x.data),
                                std::move(test_y.data));
  dataset.source = directory;
  dataset.sha256 = hash.HexDigest();
  return dataset;
}

}  // namespace

DatasetFiles FindDatasetFiles(const std::string& directory) {
  if (!std::filesystem::is_directory(directory))
    throw DatasetError(directory + ": dataset directory does not exist");
  return {FindFile(directory, "train-images-idx3-ubyte"),
          FindFile(directory, "train-labels-idx1-ubyte"),
          FindFile(directory, "t10k-images-idx3-ubyte"),
          FindFile(directory, "t10k-labels-idx1-ubyte")};
}

Dataset LoadDataset(const std::string& directory) {
  try {
    return Load(directory);
  } catch (const Sha256Error& error) {   // OpenSSL failed: no fault of the files
    throw DatasetError(error.what());
  }
}

std::string DatasetSha256(const std::string& directory) {
  const DatasetFiles files = FindDatasetFiles(directory);
  try {
    return Sha256FilesHex(
        {files.train_images, files.train_labels, files.test_images, files.test_labels});
  } catch (const Sha256Error& error) {
    throw DatasetError(error.what());
  }
}

Dataset MakeDataset(int features, std::vector<std::uint8_t> train_pixels,
                    std::vector<std::uint8_t> train_labels, std::vector<std::uint8_t> test_pixels,
                    std::vector<std::uint8_t> test_labels) {
  auto arrays = std::make_shared<const Arrays>(Arrays{std::move(train_pixels), std::move(train_labels),
                                                      std::move(test_pixels), std::move(test_labels)});
  Dataset dataset;
  dataset.features = features;
  dataset.train = {std::int64_t(arrays->train_labels.size()), arrays->train_pixels, arrays->train_labels};
  dataset.test = {std::int64_t(arrays->test_labels.size()), arrays->test_pixels, arrays->test_labels};
  dataset.storage = std::move(arrays);
  return dataset;
}

Dataset MakeSyntheticDataset(std::int64_t train_samples, std::uint64_t seed) {
  constexpr int kFeatures = kSyntheticSide * kSyntheticSide;
  std::mt19937_64 rng(Mix(seed));
  // Each class lights a random quarter of the pixels.
  std::vector<std::uint8_t> prototypes(std::size_t{kClasses} * kFeatures);
  for (auto& pixel : prototypes) pixel = UniformBelow(rng, 4) == 0 ? 192 : 0;

  Arrays arrays;
  MakeSyntheticSplit(train_samples, prototypes, rng, arrays.train_pixels, arrays.train_labels);
  MakeSyntheticSplit(std::max<std::int64_t>(1, train_samples / 6), prototypes, rng,
                     arrays.test_pixels, arrays.test_labels);
  Dataset dataset = MakeDataset(kFeatures, std::move(arrays.train_pixels), std::move(arrays.train_labels),
                                std::move(arrays.test_pixels), std::move(arrays.test_labels));
  dataset.sha256 = "synthetic:" + std::to_string(seed) + ":" + std::to_string(train_samples);
  dataset.source = "synthetic";
  return dataset;
}

std::vector<std::uint32_t> EpochPermutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::uint32_t> permutation(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) permutation[i] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(Mix(seed ^ Mix(static_cast<std::uint64_t>(epoch))));
  for (std::int64_t i = n - 1; i > 0; --i)
    std::swap(permutation[i], permutation[UniformBelow(rng, static_cast<std::uint64_t>(i) + 1)]);
  return permutation;
}

std::int64_t IterationsPerEpoch(std::int64_t n, int batch, int workers, std::int64_t cap) {
  std::int64_t iterations = n / (static_cast<std::int64_t>(batch) * workers);
  return cap > 0 ? std::min(iterations, cap) : iterations;
}

std::span<const std::uint32_t> WorkerShard(std::span<const std::uint32_t> permutation,
                                           std::int64_t iteration, int batch, int workers,
                                           int worker) {
  std::size_t begin = static_cast<std::size_t>((iteration * workers + worker) * batch);
  return permutation.subspan(begin, static_cast<std::size_t>(batch));
}

namespace {

// Rows a batch's copy asks for ahead of the one it copies.
constexpr std::size_t kPrefetchRows = 8;

void Prefetch(const Split& split, int features, std::uint32_t index) {
  const std::uint8_t* source = &split.pixels[std::size_t{index} * features];
  for (int offset = 0; offset < features; offset += 64) __builtin_prefetch(source + offset);
  __builtin_prefetch(source + features - 1);
  __builtin_prefetch(&split.labels[index]);
}

// One row's pixels as floats in [0, 1]: each byte times 1/255, the same
// float in either clone.
DMLBENCH_AVX2_CLONE void ScaleRow(const std::uint8_t* source, int features, float* target) {
  constexpr float kScale = 1.0f / 255.0f;
  for (int p = 0; p < features; ++p) target[p] = source[p] * kScale;
}

}  // namespace

void GatherBatch(const Split& split, int features, std::span<const std::uint32_t> indices,
                 float* pixels, std::uint8_t* labels) {
  for (std::size_t row = 0; row < std::min(kPrefetchRows, indices.size()); ++row)
    Prefetch(split, features, indices[row]);
  for (std::size_t row = 0; row < indices.size(); ++row) {
    if (row + kPrefetchRows < indices.size())
      Prefetch(split, features, indices[row + kPrefetchRows]);
    ScaleRow(&split.pixels[std::size_t{indices[row]} * features], features,
             pixels + row * features);
    labels[row] = split.labels[indices[row]];
  }
}

}  // namespace dmlbench
