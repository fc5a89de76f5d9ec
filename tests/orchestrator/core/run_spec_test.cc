// Tests of orchestrator/core/run_spec: the labels that name a run, and which
// parameters they name when a listing varies them.
#include "orchestrator/core/run_spec.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

TEST(DescribeTest, NamesTheAlwaysShownParametersByDefault) {
  RunParams params;
  params.learning_rate = 0.1;
  params.hidden = {64};
  EXPECT_EQ(Describe(params), "ring w=1 b=100 rep=0");
}

TEST(DescribeTest, NamesEveryParameterItIsAskedTo) {
  RunParams params;
  params.architecture = Architecture::kPs;
  params.servers = 2;
  params.learning_rate = 0.025;
  params.hidden = {256, 64};
  params.epochs = 3;
  params.max_iterations_per_epoch = 100;
  params.bucket_bytes = 65536;
  params.dataset = "synthetic";
  params.overlap = true;
  params.network.name = "1gbit";
  params.repetition = 2;
  ShownParams all;
  all.learning_rate = all.hidden = all.epochs = all.max_iterations_per_epoch = all.bucket_bytes = all.dataset =
      true;
  EXPECT_EQ(Describe(params, all),
            "ps k=2 w=1 b=100 lr=0.025 hidden=256,64 epochs=3 iters=100 bucket=65536 dataset=synthetic overlap "
            "net=1gbit rep=2");
  all.repetition = false;
  EXPECT_EQ(Describe(params, all).find("rep="), std::string::npos);
}

TEST(VaryingInTest, FindsExactlyTheParametersWithSeveralValues) {
  RunParams a;
  RunParams b = a;
  b.hidden = {64};
  b.max_iterations_per_epoch = 7;
  b.workers = 4;         // always shown: not reported
  b.repetition = 1;      // always shown: not reported
  const ShownParams varying = VaryingIn(std::vector<RunParams>{a, b, a});
  EXPECT_TRUE(varying.hidden);
  EXPECT_TRUE(varying.max_iterations_per_epoch);
  EXPECT_FALSE(varying.learning_rate);
  EXPECT_FALSE(varying.epochs);
  EXPECT_FALSE(varying.bucket_bytes);
  EXPECT_FALSE(varying.dataset);
  EXPECT_EQ(Describe(b, varying), "ring w=4 b=100 hidden=64 iters=7 rep=1");
}

TEST(VaryingInTest, OneRunOrNoneVariesNothing) {
  RunParams a;
  a.epochs = 9;
  for (const std::vector<RunParams>& runs : {std::vector<RunParams>{}, std::vector<RunParams>{a}}) {
    const ShownParams varying = VaryingIn(runs);
    EXPECT_FALSE(varying.learning_rate || varying.hidden || varying.epochs || varying.max_iterations_per_epoch ||
                 varying.bucket_bytes || varying.dataset);
  }
}

TEST(ConfigurationJsonTest, IsTheRunsIdentityWithoutTheSeed) {
  RunParams x;
  RunParams y = x;
  y.seed = 42;
  y.repetition = 5;
  y.network.name = "renamed";
  EXPECT_EQ(ConfigurationJson(x), ConfigurationJson(y));
  y.workers = 2;
  EXPECT_NE(ConfigurationJson(x), ConfigurationJson(y));
  EXPECT_EQ(ConfigurationJson(x).find("seed"), std::string::npos);
}

// Runs planned before partition_bytes existed keep their identity: it is
// named only when set.
TEST(ConfigurationJsonTest, NamesThePartitionOnlyWhenTheExchangeIsCut) {
  RunParams whole;
  EXPECT_EQ(CanonicalJson(whole).find("partition"), std::string::npos);
  RunParams cut = whole;
  cut.partition_bytes = 65536;
  EXPECT_NE(CanonicalJson(cut).find("\"partition_bytes\":65536"), std::string::npos);
  EXPECT_NE(RunKey(whole, "t", "d"), RunKey(cut, "t", "d"));
  EXPECT_EQ(Describe(cut, VaryingIn(std::vector<RunParams>{whole, cut})).find("partition=65536") != std::string::npos,
            true);
}

// Runs planned before pulls_in_turn existed keep their identity too.
TEST(ConfigurationJsonTest, NamesPullsInTurnOnlyWhenSet) {
  RunParams at_once;
  at_once.architecture = Architecture::kPs;
  at_once.servers = 1;
  EXPECT_EQ(CanonicalJson(at_once).find("pulls"), std::string::npos);
  RunParams in_turn = at_once;
  in_turn.pulls_in_turn = true;
  EXPECT_NE(CanonicalJson(in_turn).find("\"pulls_in_turn\":true"), std::string::npos);
  EXPECT_NE(RunKey(at_once, "t", "d"), RunKey(in_turn, "t", "d"));
  EXPECT_EQ(Describe(in_turn), "ps k=1 w=1 b=100 pulls-in-turn rep=0");
  EXPECT_TRUE(PullsInTurnApplies(in_turn));
  in_turn.servers = 2;
  EXPECT_FALSE(PullsInTurnApplies(in_turn));
}

// A warm-up of its own and a run without evaluation are other runs (their
// own keys), named only when set so that runs planned before them keep
// theirs, but the same configuration: the steady epochs measure the same.
TEST(ConfigurationJsonTest, NamesWarmupAndEvaluationInTheKeyOnlyWhenSetAndNeverInTheConfiguration) {
  RunParams plain;
  plain.epochs = 2;
  EXPECT_EQ(CanonicalJson(plain).find("warmup"), std::string::npos);
  EXPECT_EQ(CanonicalJson(plain).find("evaluate"), std::string::npos);
  RunParams short_warmup = plain;
  short_warmup.warmup_iterations = 20;
  EXPECT_NE(CanonicalJson(short_warmup).find("\"warmup_iterations\":20"), std::string::npos);
  RunParams unevaluated = plain;
  unevaluated.evaluate = false;
  EXPECT_NE(CanonicalJson(unevaluated).find("\"evaluate\":false"), std::string::npos);
  EXPECT_NE(RunKey(plain, "t", "d"), RunKey(short_warmup, "t", "d"));
  EXPECT_NE(RunKey(plain, "t", "d"), RunKey(unevaluated, "t", "d"));
  EXPECT_EQ(ConfigurationJson(short_warmup), ConfigurationJson(plain));
  EXPECT_EQ(ConfigurationJson(unevaluated), ConfigurationJson(plain));
  EXPECT_EQ(Describe(short_warmup, VaryingIn(std::vector<RunParams>{plain, short_warmup})),
            "ring w=1 b=100 warmup=20 rep=0");
  EXPECT_EQ(Describe(unevaluated), "ring w=1 b=100 no-eval rep=0");
}

}  // namespace
}  // namespace dmlbench
