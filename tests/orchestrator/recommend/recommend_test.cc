// The search's inputs checked before anything is predicted
// (orchestrator/recommend/recommend.h): a duration names each unit once,
// largest first; a candidate space is counted, and one beyond
// kMaxCandidates is refused with its size; a catalog's price of -0 is 0.
#include "orchestrator/recommend/recommend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "orchestrator/recommend/catalog.h"

namespace dmlbench {
namespace {

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

TEST(RecommendTest, Durations) {
  EXPECT_EQ(ParseDuration("1h30m"), 5400);
  EXPECT_EQ(ParseDuration("2d"), 172800);
  EXPECT_EQ(ParseDuration("1d2h3m4s"), 93784);
  EXPECT_EQ(ParseDuration("1.5h"), 5400);
}

TEST(RecommendTest, CandidatesAreCountedPerArchitectureServersWorkersBatchAndType) {
  CandidateSpace space;
  space.architectures = {Architecture::kRing, Architecture::kPs};
  space.servers = {1, 2, 4};
  space.workers = {1, 2, 4, 8};
  space.batch_sizes = {50, 100};
  EXPECT_EQ(CandidateCount(space, 5), (1 + 3) * 4 * 2 * 5);
  EXPECT_EQ(CandidateCount(space, 0), 0);
}

TEST(RecommendTest, APriceOfMinusZeroIsZero) {
  const Catalog catalog = ParseCatalog(
      "format_version = 1\ncurrency = \"USD\"\nprices = \"none\"\nprices_as_of = \"2026-12-05\"\n"
      "[[type]]\nname = \"free\"\ncores = 1\nmemory_gib = 1\nbandwidth_mbit_per_s = 100\nprice_per_hour = -0.0\n"
      "cpu_share = 1\ncompute = \"quota\"\n",
      "free.toml");
  ASSERT_EQ(catalog.types.size(), 1u);
  EXPECT_FALSE(std::signbit(catalog.types[0].price_per_hour));
}

// Error paths of recommend.cc follow.

TEST(RecommendErrorTest, ADurationNamingAUnitTwiceOrSmallestFirstIsRefused) {
  for (const char* text : {"1h1h", "30m1h", "1s1s", "1h30m30m"}) {
    EXPECT_EQ(ErrorOf([&] { ParseDuration(text); }),
              "a duration names each unit once, the largest first (e.g. 1h30m), got \"" + std::string(text) + "\"")
        << text;
  }
}

TEST(RecommendErrorTest, ASpaceOfMoreCandidatesThanTheBoundIsRefusedBeforeAnyPrediction) {
  Catalog catalog;
  catalog.types.resize(4);
  CandidateSpace space;
  space.architectures = {Architecture::kRing, Architecture::kMpi, Architecture::kPs, Architecture::kP2p};
  for (int w = 1; w <= 100; ++w) space.workers.push_back(w);
  space.batch_sizes.clear();
  for (int b = 1; b <= 200; ++b) space.batch_sizes.push_back(b);
  ASSERT_GT(CandidateCount(space, catalog.types.size()), kMaxCandidates);
  // No model, fit or coverage is needed to refuse it: nothing is predicted.
  const ModelFitRecord fit;
  const ModelData data;
  EXPECT_EQ(ErrorOf([&] {
              Recommend(ModelNamed("linear"), fit, CalibrationCoverage(fit, data), {}, catalog, space, Workload{},
                        Goal{Goal::Kind::kDeadline, 3600, 0});
            }),
            "the candidate space holds 320,000 candidates (80,000 configurations x 4 instance types), more than the "
            "200,000 one search tries: give fewer --workers, --batch, --servers or --architecture values, or a "
            "catalog of fewer types");
}

}  // namespace
}  // namespace dmlbench
