// Dataset: the training and test sets in memory (pixels as bytes, labels),
// loaded from an MNIST-format directory (whose files and checksum it defines)
// or generated synthetically, and the data-parallel schedule over them. Does
// not know the model. Immutable after loading: safe to share for reading,
// and copies share the bytes.
#ifndef DMLBENCH_TRAINER_DATASET_H_
#define DMLBENCH_TRAINER_DATASET_H_

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace dmlbench {

// The one exception type of this module; what() is one line naming the file
// (and byte offset, see idx_reader.h) or directory at fault.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kClasses = 10;

// Views into the bytes of the Dataset that holds the split.
struct Split {
  std::int64_t count = 0;
  std::span<const std::uint8_t> pixels;   // count x features, 0..255
  std::span<const std::uint8_t> labels;   // count, each < kClasses
};

struct Dataset {
  int features = 0;     // pixels per image (784 for 28x28)
  Split train;
  Split test;
  std::string sha256;   // see schemas/trainer-events.md, run_start.dataset_sha256
  std::string source;   // the directory, or "synthetic"
  // Owns what the splits point into: the decoded arrays in this process's
  // memory, or a decoded copy mapped read-only from a file (dataset_cache.h).
  std::shared_ptr<const void> storage;
};

// A dataset owning the four arrays given, its splits pointing into them;
// `sha256` and `source` are left for the caller.
Dataset MakeDataset(int features, std::vector<std::uint8_t> train_pixels,
                    std::vector<std::uint8_t> train_labels, std::vector<std::uint8_t> test_pixels,
                    std::vector<std::uint8_t> test_labels);

// The four IDX files of an MNIST-format directory, in the order the dataset
// checksum reads them.
struct DatasetFiles {
  std::string train_images;   // train-images-idx3-ubyte[.gz]
  std::string train_labels;   // train-labels-idx1-ubyte[.gz]
  std::string test_images;    // t10k-images-idx3-ubyte[.gz]
  std::string test_labels;    // t10k-labels-idx1-ubyte[.gz]
};

// Finds the four files in `directory`: "<name>.gz" if that is a regular file,
// else "<name>". Looks at names only, reads nothing. Throws DatasetError
// naming the directory and the file missing.
DatasetFiles FindDatasetFiles(const std::string& directory);

// Loads the files FindDatasetFiles finds. Validates that images are 3-D,
// labels 1-D, counts agree, labels are below kClasses and test images have
// the training images' size. Throws DatasetError.
Dataset LoadDataset(const std::string& directory);

// What LoadDataset(directory).sha256 would be, without parsing or holding the
// files: sha256 over the four files as stored, read in chunks. Throws
// DatasetError (a file missing or unreadable).
std::string DatasetSha256(const std::string& directory);

// `train_samples` 28x28 images of kClasses learnable classes (a noisy fixed
// prototype per class) and max(1, train_samples / 6) test images, generated
// from `seed` alone. sha256 is "synthetic:<seed>:<train_samples>".
Dataset MakeSyntheticDataset(std::int64_t train_samples, std::uint64_t seed);

// Epoch `epoch`'s order of the indices 0..n-1: a Fisher-Yates shuffle driven
// by std::mt19937_64 seeded from (seed, epoch), with its own unbiased bounded
// draws, so the order is the same on every platform and standard library.
std::vector<std::uint32_t> EpochPermutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

// Iterations per epoch for each of `workers` workers with local batch
// `batch`: floor(n / (batch * workers)), capped by `cap` when cap > 0.
std::int64_t IterationsPerEpoch(std::int64_t n, int batch, int workers, std::int64_t cap);

// Worker `worker`'s local batch of global batch `iteration`: global batch i is
// permutation[i*b*w, (i+1)*b*w) and worker j takes its j-th block of b.
std::span<const std::uint32_t> WorkerShard(std::span<const std::uint32_t> permutation,
                                           std::int64_t iteration, int batch, int workers,
                                           int worker);

// Copies the samples `indices` of `split` into a contiguous batch: pixels as
// floats in [0, 1] (indices.size() x features), labels alongside. The rows
// lie at random places in a split larger than the caches: each is asked of
// the memory system 8 rows before it is copied (the whole next batch asked
// for an iteration ahead was slower: docs/history/benchmarks.md, "The gather").
void GatherBatch(const Split& split, int features, std::span<const std::uint32_t> indices,
                 float* pixels, std::uint8_t* labels);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_DATASET_H_
