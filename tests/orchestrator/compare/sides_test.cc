// Tests of orchestrator/compare/sides and of the grouping of stored runs by
// build (history.h): what a name operand stands for among a database's
// runs, with every refusal's whole message, and a side's complete runs as
// samples.
#include "orchestrator/compare/sides.h"

#include <gtest/gtest.h>

#include "orchestrator/compare/history.h"

namespace dmlbench {
namespace {

RunRecord Stored(std::int64_t id, const std::string& experiment, std::vector<std::string> tags,
                 const std::string& trainer_sha256, RunState status = RunState::kComplete) {
  RunRecord run;
  run.run_id = id;
  run.experiments = {experiment};
  run.tags = std::move(tags);
  run.trainer_sha256 = trainer_sha256;
  run.status = status;
  return run;
}

const std::string kBuildA = "3fa9c2e1" + std::string(56, '0');
const std::string kBuildB = "3fa9c2ff" + std::string(56, '1');

TEST(SidesTest, ANameIsTheExperimentTagOrBuildOfThatName) {
  const std::vector<RunRecord> runs = {Stored(1, "paper", {"baseline"}, kBuildA), Stored(2, "paper", {}, kBuildB),
                                       Stored(3, "rerun", {"rerun"}, kBuildB)};
  EXPECT_EQ(FilterOfName("A", "paper", runs, "results.db"), "experiment=paper");
  EXPECT_EQ(FilterOfName("A", "baseline", runs, "results.db"), "tag=baseline");
  EXPECT_EQ(FilterOfName("B", "3FA9C2E1", runs, "results.db"), "trainer=3fa9c2e1");
  EXPECT_TRUE(IsNameOperand("baseline"));
  EXPECT_FALSE(IsNameOperand("tag=baseline"));
  EXPECT_TRUE(IsDatabaseOperand("old.db"));
  EXPECT_TRUE(IsDatabaseOperand("data/old"));
  EXPECT_FALSE(IsDatabaseOperand("baseline"));
  EXPECT_FALSE(IsDatabaseOperand("tag=a/b"));
}

TEST(SidesTest, CompleteRunsBecomeSamplesWithTheirSteadyEpochs) {
  std::vector<RunRecord> runs = {Stored(1, "paper", {}, kBuildA), Stored(2, "paper", {}, kBuildA, RunState::kFailed),
                                 Stored(3, "paper", {}, kBuildA)};
  runs[2].params.workers = 4;
  auto epoch = [](std::int64_t run_id, double wall_s, bool warmup_included) {
    SteadyEpoch e;
    e.run_id = run_id;
    e.wall_s = wall_s;
    e.warmup_included = warmup_included;
    return e;
  };
  const std::vector<SteadyEpoch> epochs = {epoch(1, 0.5, false), epoch(2, 9.0, false), epoch(3, 0.7, true),
                                           epoch(1, 0.6, false)};
  const std::vector<RunSample> samples = CompleteSamples(runs, epochs);
  ASSERT_EQ(samples.size(), 2u) << "the failed run is no sample";
  EXPECT_EQ(samples[0].steady_epoch_s, (std::vector<double>{0.5, 0.6}));
  EXPECT_FALSE(samples[0].warmup_included);
  EXPECT_EQ(samples[1].params.workers, 4);
  EXPECT_TRUE(samples[1].warmup_included);
}

TEST(SidesTest, RunsByBuildAreInTheOrderOfTheirFirstRun) {
  const std::vector<RunRecord> runs = {Stored(1, "e", {"nightly-2"}, kBuildA), Stored(2, "e", {"nightly-1"}, kBuildA),
                                       Stored(3, "e", {"nightly-2", "other"}, kBuildB)};
  const auto builds = RunsByBuild(runs, ParseHistorySpec("tag=nightly-*"), "results.db");
  ASSERT_EQ(builds.size(), 2u);
  EXPECT_EQ(builds[0].first, "nightly-2");
  EXPECT_EQ(builds[0].second.size(), 2u);
  EXPECT_EQ(builds[1].first, "nightly-1");
  const auto trainers = RunsByBuild(runs, ParseHistorySpec("trainer"), "results.db");
  EXPECT_EQ(trainers[1].first, kBuildB.substr(0, 12));
}

// ---- error paths of sides.cc and of RunsByBuild follow ---------------------

TEST(SidesTest, ANameThatIsNothingOrSeveralThingsIsRefused) {
  const std::vector<RunRecord> runs = {Stored(1, "sweep", {"sweep"}, kBuildA), Stored(2, "sweep", {}, kBuildB)};
  auto refusal = [&](const std::string& name) {
    try {
      FilterOfName("B", name, runs, "results.db");
    } catch (const CompareError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(refusal("nightly"), "B: \"nightly\" is no experiment, tag or trainer build in results.db (experiments: "
                                "sweep; tags: sweep; trainer builds: 3fa9c2e10000, 3fa9c2ff1111)");
  EXPECT_EQ(refusal("sweep"), "B: \"sweep\" names more than one thing in results.db; write experiment=sweep or "
                              "tag=sweep");
  EXPECT_EQ(refusal("3fa9c2"), "B: trainer build prefix 3fa9c2 matches 2 builds in results.db (3fa9c2e10000, "
                               "3fa9c2ff1111); give more digits");
  try {
    RunsByBuild(runs, ParseHistorySpec("tag=weekly-*"), "results.db");
    FAIL() << "no build";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--history tag=weekly-*: 0 builds match in results.db (none); a history needs two or more");
  }
  try {
    ParseHistorySpec("nightly");
    FAIL() << "no kind";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--history: expected tag=GLOB, experiment=GLOB, trainer=GLOB or trainer, got \"nightly\"");
  }
}

}  // namespace
}  // namespace dmlbench
