// The data-parallel contract, through real MPI and the real training loop:
// w workers with local batch b end with the parameters of ONE worker with
// batch b*w (computed here in-process, independently of any exchange scheme),
// within a relative difference of 1e-5; every worker holds the same model;
// and a second run of the same configuration is bit-identical.
#include <mpi.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trainer/dataset.h"
#include "trainer/mlp.h"
#include "trainer/trainer.h"
#include "tests/trainer/schemes.h"

namespace dmlbench {
namespace {

// One row per configuration of a scheme; a new scheme is a new row. With
// overlap the trainer cuts the gradient at the bucket size (Mlp::SliceGradients):
// 1 KiB sends fc3 whole, then fc2 and fc1 in 4 row blocks each, 9 buckets;
// 16 KiB sends fc3+fc2, then fc1 in 4 blocks; 128 KiB fc1 in 3 blocks, the
// last with fc3 and fc2. Partitioned: 64 KiB cuts the whole gradient
// (419,752 bytes) into 7 parts; with overlap, 4 KiB cuts each 16 KiB bucket
// into 4 or 5.
using testing::Scheme;

const Scheme kSchemes[] = {
    {"ring", 0, false, 1024}, {"ring", 0, true, 1024}, {"ring", 0, true, 16384},
    {"mpi", 0, false, 1024},  {"mpi", 0, true, 1024},  {"mpi", 0, true, 16384},
    {"p2p", 0, false, 1024},  {"p2p", 0, true, 1024},  {"p2p", 0, true, 16384},
    {"ps", 1, false, 1024},   {"ps", 1, true, 1024},   {"ps", 1, true, 16384},
    {"ps", 2, false, 1024},   {"ps", 2, true, 1024},   {"ps", 2, true, 131072},
    {"ps", 4, false, 1024},   {"ps", 4, true, 1024},   {"ps", 4, true, 16384},
    {"ring", 0, false, 1024, 65536}, {"mpi", 0, false, 1024, 65536}, {"p2p", 0, false, 1024, 65536},
    {"ps", 1, false, 1024, 65536},   {"ps", 2, false, 1024, 65536},  {"ps", 2, true, 16384, 4096},
    {"ps", 1, false, 1024, 0, true},
};

constexpr int kBatch = 3;              // local batch b
constexpr int kEpochs = 2;
constexpr std::int64_t kIterationCap = 4;
constexpr std::int64_t kSamples = 100; // >= b * 7 workers * kIterationCap
constexpr std::uint64_t kSeed = 17;
constexpr float kLearningRate = 0.1f;

TrainerOptions Options(const Scheme& scheme) {
  TrainerOptions options = testing::SchemeOptions(scheme);
  options.batch_size = kBatch;
  options.epochs = kEpochs;
  options.max_iterations_per_epoch = kIterationCap;
  options.seed = kSeed;
  options.learning_rate = kLearningRate;
  return options;
}

// Plain SGD on one worker with batch b*w: the reference, no MPI involved.
std::vector<float> OneWorkerReference(const TrainerOptions& options, const Dataset& dataset,
                                      int workers) {
  const int global_batch = options.batch_size * workers;
  std::vector<int> sizes = {dataset.features};
  sizes.insert(sizes.end(), options.hidden.begin(), options.hidden.end());
  sizes.push_back(kClasses);
  Mlp mlp(sizes, global_batch);
  mlp.Initialize(options.seed);
  std::vector<float> pixels(std::size_t(global_batch) * dataset.features);
  std::vector<std::uint8_t> labels(global_batch);
  const std::int64_t iterations = IterationsPerEpoch(
      dataset.train.count, options.batch_size, workers, options.max_iterations_per_epoch);
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const std::vector<std::uint32_t> permutation =
        EpochPermutation(dataset.train.count, options.seed, epoch);
    for (std::int64_t i = 0; i < iterations; ++i) {
      // Global batch i = worker 0's block of b, then worker 1's, ...: all of it.
      GatherBatch(dataset.train, dataset.features,
                  WorkerShard(permutation, i, global_batch, 1, 0), pixels.data(), labels.data());
      mlp.Forward(pixels.data(), labels.data(), global_batch);
      mlp.Backward([](int) {});
      for (std::size_t p = 0; p < mlp.parameters().size(); ++p)
        mlp.parameters()[p] -= options.learning_rate * mlp.gradients()[p];
    }
  }
  return {mlp.parameters().begin(), mlp.parameters().end()};
}

class Equivalence : public ::testing::TestWithParam<Scheme> {};

TEST_P(Equivalence, MatchesOneWorkerWithTheGlobalBatchAndRepeatsBitIdentically) {
  const Scheme scheme = GetParam();
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world <= scheme.servers) GTEST_SKIP() << "needs more than " << scheme.servers << " ranks";
  const int workers = world - scheme.servers;
  const Dataset dataset = MakeSyntheticDataset(kSamples, kSeed);
  const TrainerOptions options = Options(scheme);

  TrainResult first = Train(options, dataset, {});
  TrainResult second = Train(options, dataset, {});

  // Every worker holds worker 0's model, bit for bit (servers join the
  // broadcast, then leave: they hold no model).
  std::vector<float> worker0 = first.parameters;
  int count = int(worker0.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
  worker0.resize(count);
  MPI_Bcast(worker0.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (rank >= workers) return;

  // Same configuration twice: bit-identical.
  ASSERT_EQ(first.parameters.size(), second.parameters.size());
  for (std::size_t i = 0; i < first.parameters.size(); ++i)
    ASSERT_EQ(first.parameters[i], second.parameters[i]) << "run-to-run mismatch at index " << i
                                                         << " on rank " << rank;
  EXPECT_EQ(first.parameter_checksum, second.parameter_checksum);

  for (std::size_t i = 0; i < worker0.size(); ++i)
    ASSERT_EQ(first.parameters[i], worker0[i]) << "mismatch with rank 0 at index " << i
                                               << " on rank " << rank;

  // w workers with batch b == 1 worker with batch b*w, up to rounding.
  const std::vector<float> reference = OneWorkerReference(options, dataset, workers);
  ASSERT_EQ(reference.size(), first.parameters.size());
  double difference = 0, norm = 0, worst = 0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double d = double(first.parameters[i]) - double(reference[i]);
    difference += d * d;
    norm += double(reference[i]) * reference[i];
    if (std::fabs(d) > worst) worst = std::fabs(d), worst_index = i;
  }
  const double relative = std::sqrt(difference / norm);
  EXPECT_LE(relative, 1e-5) << "relative L2 difference on rank " << rank << "; largest at index "
                            << worst_index << ": " << first.parameters[worst_index] << " vs "
                            << reference[worst_index];
  // The training moved the model: the comparison is not between two initial states.
  Mlp initial({dataset.features, 128, 32, kClasses}, 1);
  initial.Initialize(kSeed);
  double moved = 0;
  for (std::size_t i = 0; i < reference.size(); ++i)
    moved += std::pow(double(initial.parameters()[i]) - reference[i], 2);
  EXPECT_GT(std::sqrt(moved / norm), 1e-3);
  if (rank == 0)
    std::printf("[ %s%s%s ] %d workers: relative difference %.3g, checksum %s\n",
                scheme.architecture,
                scheme.overlap ? (" overlap " + std::to_string(scheme.bucket_bytes)).c_str() : "",
                scheme.partition_bytes ? (" partition " + std::to_string(scheme.partition_bytes)).c_str() : "",
                workers, relative, first.parameter_checksum.c_str());
}

INSTANTIATE_TEST_SUITE_P(Schemes, Equivalence, ::testing::ValuesIn(kSchemes), testing::SchemeName);

// A server sums every element in worker order however the exchange is cut,
// so parts change when the model arrives, never what it is. (With overlap
// the forward pass sums fc1 over its row blocks, so the overlapped model is
// compared with the overlapped whole exchange.)
TEST(PartitionedParameterServer, TrainsTheModelOfTheWholeExchangeBitForBit) {
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 3) GTEST_SKIP() << "needs 3 ranks: 2 servers and a worker";
  const Dataset dataset = MakeSyntheticDataset(kSamples, kSeed);
  const TrainResult whole = Train(Options({"ps", 2, false}), dataset, {});
  const TrainResult parts = Train(Options({"ps", 2, false, 1024, 4096}), dataset, {});
  const TrainResult overlapped_whole = Train(Options({"ps", 2, true, 16384}), dataset, {});
  const TrainResult overlapped = Train(Options({"ps", 2, true, 16384, 4096}), dataset, {});
  EXPECT_EQ(parts.parameter_checksum, whole.parameter_checksum);
  EXPECT_EQ(overlapped.parameter_checksum, overlapped_whole.parameter_checksum);
}

}  // namespace
}  // namespace dmlbench
