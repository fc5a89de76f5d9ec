// The per-iteration wall times of the epoch event, through real MPI and the
// real training loop of every scheme: rank 0 writes one time per iteration
// of the epoch (the count follows the world size: floor(n / (b w))), whole
// microseconds that together fit inside the epoch's wall time, and the
// events file carries exactly what Train() measured.
#include <mpi.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/dataset.h"
#include "trainer/events.h"
#include "trainer/trainer.h"
#include "tests/trainer/schemes.h"

namespace dmlbench {
namespace {

using testing::Scheme;

const Scheme kSchemes[] = {
    {"ring", 0, false}, {"ring", 0, true}, {"mpi", 0, false},
    {"p2p", 0, false},  {"ps", 1, false},  {"ps", 2, true},
};

constexpr int kBatch = 3;
constexpr int kEpochs = 3;
constexpr std::int64_t kSamples = 100;   // 33 iterations on 1 worker, 4 on 7
constexpr std::uint64_t kSeed = 5;

class IterationTimes : public ::testing::TestWithParam<Scheme> {};

TEST_P(IterationTimes, RankZeroWritesOneTimePerIterationOfEveryEpoch) {
  const Scheme scheme = GetParam();
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world <= scheme.servers) GTEST_SKIP() << "needs more than " << scheme.servers << " ranks";
  const int workers = world - scheme.servers;
  const std::int64_t iterations = IterationsPerEpoch(kSamples, kBatch, workers, 0);
  ASSERT_GT(iterations, 0);

  TrainerOptions options = testing::SchemeOptions(scheme);
  options.batch_size = kBatch;
  options.epochs = kEpochs;
  options.hidden = {16, 8};
  options.seed = kSeed;
  const Dataset dataset = MakeSyntheticDataset(kSamples, kSeed);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("dmlbench-iteration-times-" + std::to_string(::getpid()) + ".jsonl");
  TrainResult result;
  {
    std::unique_ptr<EventWriter> events;
    if (rank == 0) events = std::make_unique<EventWriter>(path.string());
    result = Train(options, dataset, {events.get(), nullptr});
  }
  if (rank != 0) {
    EXPECT_TRUE(result.epochs.empty()) << "rank " << rank << " reported epochs";
    return;
  }

  // The events file: run_start, one epoch line per epoch.
  std::vector<nlohmann::json> epochs;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (event.at("event") == "epoch") epochs.push_back(std::move(event));
  }
  std::filesystem::remove(path);
  ASSERT_EQ(epochs.size(), std::size_t(kEpochs));
  ASSERT_EQ(result.epochs.size(), std::size_t(kEpochs));
  for (int e = 0; e < kEpochs; ++e) {
    const nlohmann::json& epoch = epochs[std::size_t(e)];
    EXPECT_EQ(epoch.at("iterations"), iterations) << "epoch " << e + 1;
    const nlohmann::json& times = epoch.at("iteration_wall_us");
    ASSERT_TRUE(times.is_array()) << "epoch " << e + 1;
    ASSERT_EQ(times.size(), std::size_t(iterations)) << "epoch " << e + 1 << " with " << workers << " workers";
    std::int64_t sum_us = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      ASSERT_TRUE(times[i].is_number_integer()) << "epoch " << e + 1 << " iteration " << i + 1;
      EXPECT_GE(times[i].get<std::int64_t>(), 0) << "epoch " << e + 1 << " iteration " << i + 1;
      sum_us += times[i].get<std::int64_t>();
    }
    // Rank 0's iterations lie inside the epoch's window, whose wall_s is the
    // longest any rank took; each time is rounded to the nearest microsecond.
    EXPECT_GT(sum_us, 0) << "epoch " << e + 1;
    EXPECT_LE(double(sum_us), epoch.at("wall_s").get<double>() * 1e6 + 0.5 * double(iterations))
        << "epoch " << e + 1;
    EXPECT_EQ(times.get<std::vector<std::int64_t>>(), result.epochs[std::size_t(e)].iteration_wall_us)
        << "epoch " << e + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, IterationTimes, ::testing::ValuesIn(kSchemes), testing::SchemeName);

}  // namespace
}  // namespace dmlbench
