// Tests of orchestrator/compare's pairing across a factor (`compare --by
// KEY`): configurations of A and B that differ in KEY alone are compared,
// their labels show both values, and a side with two values of KEY for one
// configuration, or a KEY that is no parameter, is refused with the whole
// message; without --by the keys that would pair are offered.
#include <gtest/gtest.h>

#include <vector>

#include "orchestrator/compare/compare.h"
#include "orchestrator/compare/grouping.h"

namespace dmlbench {
namespace {

RunSample Run(Architecture architecture, int workers, int batch_size, int repetition, double epoch_s) {
  RunSample run;
  run.params.architecture = architecture;
  run.params.workers = workers;
  run.params.batch_size = batch_size;
  run.params.repetition = repetition;
  run.params.seed = 1 + static_cast<std::uint64_t>(repetition);
  run.steady_epoch_s = {epoch_s, epoch_s};
  return run;
}

// Three runs of ring w=1 and w=2 at batch size `batch`, taking `epoch_s`.
std::vector<RunSample> Sweep(int batch, double epoch_s, Architecture architecture = Architecture::kRing) {
  std::vector<RunSample> runs;
  for (int workers : {1, 2}) {
    for (int r = 0; r < 3; ++r) runs.push_back(Run(architecture, workers, batch, r, epoch_s * workers));
  }
  return runs;
}

TEST(PairingTest, ByAKeyPairsConfigurationsThatDifferInItAlone) {
  const std::vector<RunSample> small = Sweep(50, 0.4), large = Sweep(200, 0.1);
  const Comparison unpaired = Compare(small, large);
  EXPECT_TRUE(unpaired.both.empty());
  EXPECT_EQ(KeysThatPair(small, large), std::vector<std::string>{"batch_size"});
  EXPECT_EQ(NothingInCommon(unpaired, KeysThatPair(small, large)),
            "A and B have no configuration in common: A has 2, B has 2 (a configuration is every parameter but the "
            "seed and the repetition); to pair those that differ in one parameter: --by batch_size");

  const Comparison c = Compare(small, large, kDefaultFactor, "batch_size");
  ASSERT_EQ(c.both.size(), 2u);
  EXPECT_EQ(c.by, "batch_size");
  EXPECT_EQ(c.both[0].params.batch_size, 50);
  EXPECT_EQ(c.both[0].params_b.batch_size, 200);
  EXPECT_EQ(c.both[0].configuration, ConfigurationJson(small[0].params));
  EXPECT_EQ(c.both[0].configuration_b, ConfigurationJson(large[0].params));
  EXPECT_DOUBLE_EQ(c.both[0].test.ratio, 0.25);
  EXPECT_DOUBLE_EQ(c.both[1].test.ratio, 0.25);
  EXPECT_EQ(Labels(c), (std::vector<std::string>{"ring w=1 b=50->200", "ring w=2 b=50->200"}));
  EXPECT_TRUE(c.only_a.empty());
  EXPECT_TRUE(c.only_b.empty());
  EXPECT_EQ(NothingInCommon(Compare(small, Sweep(200, 0.1, Architecture::kMpi), kDefaultFactor, "batch_size"), {}),
            "A and B have no configuration in common, even paired by batch_size: A has 2, B has 2 (a configuration "
            "is every parameter but the seed and the repetition)");
}

TEST(PairingTest, LabelsShowBothValuesOfTheKey) {
  const Comparison schemes = Compare(Sweep(100, 0.1), Sweep(100, 0.2, Architecture::kMpi), kDefaultFactor,
                                     "architecture");
  EXPECT_EQ(Labels(schemes), (std::vector<std::string>{"ring->mpi w=1 b=100", "ring->mpi w=2 b=100"}));
  std::vector<RunSample> overlapped = Sweep(100, 0.08);
  for (RunSample& run : overlapped) run.params.overlap = true;
  const Comparison overlap = Compare(Sweep(100, 0.1), overlapped, kDefaultFactor, "overlap");
  EXPECT_EQ(Labels(overlap), (std::vector<std::string>{"ring w=1 b=100 +overlap", "ring w=2 b=100 +overlap"}));
  EXPECT_EQ(Labels(Compare(overlapped, Sweep(100, 0.1), kDefaultFactor, "overlap"))[0], "ring w=1 b=100 -overlap");
  std::vector<RunSample> wider = Sweep(100, 0.2);
  for (RunSample& run : wider) run.params.hidden = {256, 32};
  EXPECT_EQ(Labels(Compare(Sweep(100, 0.1), wider, kDefaultFactor, "hidden"))[1],
            "ring w=2 b=100 hidden=128,32->256,32");
}

// A sweep that keeps the samples of an epoch: batch 50 for 80 iterations,
// 200 for 20. The batch size alone pairs nothing; with the iterations it
// pairs all, and the hint says so.
TEST(PairingTest, SeveralKeysPairWhatDiffersInEachOfThem) {
  std::vector<RunSample> small = Sweep(50, 0.4), large = Sweep(200, 0.1);
  for (RunSample& run : small) run.params.max_iterations_per_epoch = 80;
  for (RunSample& run : large) run.params.max_iterations_per_epoch = 20;
  EXPECT_TRUE(Compare(small, large, kDefaultFactor, "batch_size").both.empty());
  EXPECT_EQ(KeysThatPair(small, large), std::vector<std::string>{"batch_size,max_iterations_per_epoch"});
  EXPECT_EQ(NothingInCommon(Compare(small, large), KeysThatPair(small, large)),
            "A and B have no configuration in common: A has 2, B has 2 (a configuration is every parameter but the "
            "seed and the repetition); to pair those that differ in two parameters: --by "
            "batch_size,max_iterations_per_epoch");
  const Comparison c = Compare(small, large, kDefaultFactor, "batch_size,max_iterations_per_epoch");
  ASSERT_EQ(c.both.size(), 2u);
  EXPECT_EQ(Labels(c), (std::vector<std::string>{"ring w=1 b=50->200 iters=80->20", "ring w=2 b=50->200 iters=80->20"}));
  EXPECT_EQ(ByKeysOf("batch_size,max_iterations_per_epoch"),
            (std::vector<std::string>{"batch_size", "max_iterations_per_epoch"}));
}

TEST(PairingTest, ThePairingKeyLeavesOutTheKeyAlone) {
  RunParams p;
  RunParams q = p;
  q.batch_size = 200;
  EXPECT_NE(PairingKey(p, ""), PairingKey(q, ""));
  EXPECT_EQ(PairingKey(p, "batch_size"), PairingKey(q, "batch_size"));
  EXPECT_NE(PairingKey(p, "workers"), PairingKey(q, "workers"));
  q.seed = 9;  // never part of a configuration
  EXPECT_EQ(PairingKey(p, "batch_size"), PairingKey(q, "batch_size"));
}

// ---- error paths of the pairing follow ---------------------------------------

TEST(PairingTest, ASideWithTwoValuesOfTheKeyOrAKeyThatIsNoParameterIsRefused) {
  std::vector<RunSample> both = Sweep(50, 0.4);
  const std::vector<RunSample> more = Sweep(100, 0.2);
  both.insert(both.end(), more.begin(), more.end());
  try {
    Compare(both, Sweep(200, 0.1), kDefaultFactor, "batch_size");
    FAIL() << "two values of batch_size in A";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--by batch_size: A has two values of batch_size for one configuration, ring w=1 b=50 "
                           "and ring w=1 b=100; choose one on that side, e.g. batch_size=50");
  }
  std::vector<RunSample> wide = Sweep(100, 0.1);
  for (size_t i = 0; i < 2; ++i) wide[i].params.hidden = {256, 32};  // two of w=1's three runs
  try {
    Compare(Sweep(100, 0.1), wide, kDefaultFactor, "hidden");
    FAIL() << "two values of hidden in B";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--by hidden: B has two values of hidden for one configuration, ring w=1 b=100 "
                           "hidden=256,32 and ring w=1 b=100 hidden=128,32; choose one on that side, e.g. "
                           "hidden='256,32'");
  }
  try {
    Compare(Sweep(50, 0.4), Sweep(200, 0.1), kDefaultFactor, "batch");
    FAIL() << "no such key";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--by: \"batch\" is no parameter of a configuration; expected one of architecture, "
                           "workers, servers, batch_size, epochs, hidden, learning_rate, overlap, bucket_bytes, "
                           "partition_bytes, pulls_in_turn, max_iterations_per_epoch, dataset, network");
  }
  EXPECT_THROW(Compare(Sweep(50, 0.4), Sweep(200, 0.1), kDefaultFactor, "seed"), CompareError)
      << "the seed is no part of a configuration";
  try {
    Compare(Sweep(50, 0.4), Sweep(200, 0.1), kDefaultFactor, ",");
    FAIL() << "no key";
  } catch (const CompareError& e) {
    EXPECT_STREQ(e.what(), "--by: expected a parameter, got \",\"");
  }
}

}  // namespace
}  // namespace dmlbench
