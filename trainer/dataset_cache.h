// Dataset cache: an MNIST-format dataset decoded once per host and reused by
// every rank of every later run, instead of each rank decompressing and
// hashing the IDX files again (their decoding was most of a short run's
// start-up). A cache file belongs to the four files it was decoded from,
// named by their identity (path, device, inode, size, modification and
// change times: any rewrite of a file changes it) and holding the sha256
// they had as read then, which the run reports as always. A run maps its
// copy read-only: the ranks of a host share its pages, and loading it costs
// neither a copy nor a hash (what is checked instead: dataset_cache.cc,
// Whole). Safe between processes: a file is written under a temporary name
// and renamed into place whole, and never written again. A cache directory
// keeps the three copies used last (written or read), removing the older
// ones whenever it writes a new one. The dataset (dataset.h) does not know
// about it. File layout: schemas/dataset-cache.md.
#ifndef DMLBENCH_TRAINER_DATASET_CACHE_H_
#define DMLBENCH_TRAINER_DATASET_CACHE_H_

#include <string>

#include "trainer/dataset.h"

namespace dmlbench {

// LoadDataset(directory), through the cache directory `cache_dir`: the
// decoded copy of these very files, mapped, if it holds a sound one, else
// the files decoded, then kept there for the next (a damaged copy is
// replaced so). A cache that cannot be created,
// read or written is no error: the files are decoded as without one.
// Throws DatasetError as LoadDataset does.
Dataset LoadDatasetCached(const std::string& directory, const std::string& cache_dir);

// The cache file LoadDatasetCached reads and writes for `directory` (for
// tests and for people clearing a cache). Throws DatasetError as
// FindDatasetFiles does.
std::string DatasetCachePath(const std::string& directory, const std::string& cache_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_DATASET_CACHE_H_
