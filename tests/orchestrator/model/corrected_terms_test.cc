// Tests of orchestrator/model/corrected_terms: properties of the corrected
// model's equation for given coefficients — the p-norm between a sum and
// the larger term, what a CPU quota binds, the exchange hidden behind
// backward with overlap, the per-profile costs of a rate never
// calibrated, and monotonicity: more bandwidth, fewer bytes or more CPU
// never predict a slower iteration. No fit is involved.
#include "orchestrator/model/corrected_terms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "tests/orchestrator/model/model_data.h"

namespace dmlbench {
namespace {

constexpr double kGigabit = 1e9;
const LinkParameters kLink{10e-6, kGigabit / 8};

ModelConfig Config(Architecture architecture, int workers, int servers = 0) {
  ModelConfig config;
  config.architecture = architecture;
  config.workers = workers;
  config.servers = servers;
  config.network.bandwidth_bits_per_s = kGigabit;
  return config;
}

CorrectedCoefficients Coefficients(double exponent) {
  CorrectedCoefficients k;
  k.overhead = 1e-4;
  k.per_sample = 6e-6;
  k.per_byte = 1e-10;
  k.per_message = 1e-5;
  k.per_wait = 3e-5;
  k.while_waiting = 0.05;
  k.exponent = exponent;
  return k;
}

double Gradient(const ModelConfig& config) { return 4.0 * static_cast<double>(ParameterCount(config)); }

// One worker of ring exchanges nothing: its path and its CPU are both its
// compute, so p = 1 adds them and a large p takes the one.
TEST(CorrectedTermsTest, ThePNormRunsFromTheSumToTheLargerTerm) {
  const ModelConfig config = Config(Architecture::kRing, 1);
  const double compute = 1e-4 + 6e-6 * 100;
  const CorrectedTerms sum = Evaluate(Coefficients(1), config, Gradient(config), kLink, false);
  EXPECT_NEAR(sum.compute, compute, 1e-15);
  EXPECT_NEAR(sum.path, compute, 1e-15);
  EXPECT_NEAR(sum.iteration, 2 * compute, 1e-15);
  const CorrectedTerms larger = Evaluate(Coefficients(1000), config, Gradient(config), kLink, false);
  EXPECT_NEAR(larger.iteration, compute, 1e-3 * compute);
  EXPECT_GE(larger.iteration, compute);
}

TEST(CorrectedTermsTest, MoreWorkersTakeLongerOnTheSameLink) {
  double previous = 0;
  for (int w : {2, 3, 4, 6, 8}) {
    const ModelConfig config = Config(Architecture::kRing, w);
    const double iteration = Evaluate(Coefficients(4), config, Gradient(config), kLink, false).iteration;
    EXPECT_GT(iteration, previous) << w;
    previous = iteration;
  }
}

TEST(CorrectedTermsTest, AQuotaStretchesTheCpuUntilItSetsTheIteration) {
  ModelConfig config = Config(Architecture::kPs, 4, 1);
  const CorrectedTerms uncapped = Evaluate(Coefficients(8), config, Gradient(config), kLink, false);
  EXPECT_EQ(uncapped.limited_by, "path");
  config.cpu_cores = 0.05;
  const CorrectedTerms capped = Evaluate(Coefficients(8), config, Gradient(config), kLink, false);
  EXPECT_NE(capped.limited_by, "path");
  EXPECT_GT(capped.capped, capped.path);
  EXPECT_GT(capped.iteration, uncapped.iteration);
  EXPECT_GT(capped.server_cpu, 0);
  EXPECT_EQ(CpuShare(config), 0.05);
  config.cpu_cores = 2;
  EXPECT_EQ(CpuShare(config), 1);  // a rank runs on one core
}

TEST(CorrectedTermsTest, WithOverlapTheExchangeHidesBehindBackward) {
  // 10 ms of compute, and buckets of 64 KiB ready one after another through backward.
  ModelConfig config = Config(Architecture::kRing, 4);
  config.overlap = true;
  config.bucket_bytes = 1 << 16;
  CorrectedCoefficients k = Coefficients(4);
  k.per_sample = 1e-4;
  const CorrectedTerms whole = Evaluate(k, config, Gradient(config), kLink, false);
  const CorrectedTerms overlapped = Evaluate(k, config, Gradient(config), kLink, true);
  EXPECT_EQ(whole.hidden, 0);
  EXPECT_GT(overlapped.hidden, 0);
  EXPECT_LT(overlapped.path, whole.path);
  EXPECT_GE(overlapped.path, overlapped.compute);
}

TEST(CorrectedTermsTest, ASchemeNeverCalibratedHasAWireFactorOfOne) {
  CorrectedCoefficients k = Coefficients(4);
  k.wire_factor["ps k=1"] = 1.3;
  EXPECT_EQ(k.WireFactor(Config(Architecture::kPs, 2, 1)), 1.3);
  ModelConfig in_turn = Config(Architecture::kPs, 2, 1);
  in_turn.pulls_in_turn = true;
  EXPECT_EQ(k.WireFactor(in_turn), 1.0);
  EXPECT_EQ(k.WireFactor(Config(Architecture::kRing, 2)), 1.0);
}

TEST(CorrectedTermsTest, ARateNeverCalibratedTakesTheNearestRatesCostInRatio) {
  CorrectedCoefficients k;
  k.per_network_byte["1e+08bit/s 0s"] = {1e8, 8e-9};
  k.per_network_byte["1e+10bit/s 0s"] = {1e10, 1e-10};
  ModelConfig config = Config(Architecture::kRing, 4);
  config.network.bandwidth_bits_per_s = 1e8;
  EXPECT_EQ(k.PerNetworkByte(config), 8e-9);  // its own
  config.network.bandwidth_bits_per_s = 3e8;
  EXPECT_EQ(k.PerNetworkByte(config), 8e-9);  // 3x from 100 Mbit/s, 33x from 10 Gbit/s
  config.network.bandwidth_bits_per_s = 2e9;
  EXPECT_EQ(k.PerNetworkByte(config), 1e-10);  // 20x from 100 Mbit/s, 5x from 10 Gbit/s
  config.network.bandwidth_bits_per_s = 0;
  EXPECT_EQ(k.PerNetworkByte(config), 1e-10);  // unshaped: faster than any
}

// ---- monotonicity ---------------------------------------------------------

constexpr double kHundredMegabit = 1e8;

// Coefficients of the size the committed sweeps fit: both link profiles
// with their own network cost and first peer's share, a wire factor per
// scheme.
CorrectedCoefficients StudySized() {
  CorrectedCoefficients k = Coefficients(4.4);
  k.per_byte = 1e-11;
  k.per_message = 1.2e-5;
  k.while_waiting = 0.004;
  k.quota = 0.98;
  k.balance_exponent = 3.5;
  k.per_network_byte = {{"1e+08bit/s 0s", {kHundredMegabit, 8.4e-9}}, {"1e+09bit/s 0s", {kGigabit, 7.4e-10}}};
  k.first_peer_share = {{"1e+08bit/s 0s", {kHundredMegabit, 0.03}}, {"1e+09bit/s 0s", {kGigabit, 0.55}}};
  k.wire_factor = {{"ring", 0.94}, {"mpi", 1.0}, {"p2p", 0.9}, {"ps k=1", 0.99}, {"ps k=2", 0.93}, {"ps k=4", 0.91}};
  return k;
}

LinkParameters LinkAt(double bits_per_s) { return LinkParameters{9e-6, bits_per_s / 8 * 0.96}; }

double IterationOf(const ModelConfig& config) {
  return Evaluate(StudySized(), config, Gradient(config), LinkAt(config.network.bandwidth_bits_per_s), false)
      .iteration;
}

TEST(CorrectedTermsTest, MoreBandwidthNeverPredictsSlower) {
  for (const ModelConfig& config : testing::MonotonicityConfigurations()) {
    ModelConfig faster = config;
    faster.network.bandwidth_bits_per_s *= 4;
    EXPECT_LE(IterationOf(faster), IterationOf(config))
        << ConfigLabel(config) << " cpu=" << config.cpu_cores << " at " << config.network.bandwidth_bits_per_s
        << " bit/s and 4 times that";
    EXPECT_GT(IterationOf(faster), 0) << ConfigLabel(config);
  }
}

TEST(CorrectedTermsTest, FewerBytesNeverPredictSlower) {
  for (const ModelConfig& config : testing::MonotonicityConfigurations()) {
    ModelConfig smaller = config;
    smaller.hidden = {64, 32};  // about half the parameters, so half the gradient's bytes
    EXPECT_LE(IterationOf(smaller), IterationOf(config))
        << ConfigLabel(config) << " cpu=" << config.cpu_cores << " at " << config.network.bandwidth_bits_per_s
        << " bit/s";
  }
}

TEST(CorrectedTermsTest, MoreCpuNeverPredictsSlower) {
  for (const ModelConfig& config : testing::MonotonicityConfigurations()) {
    if (config.cpu_cores == 0) continue;
    double previous = IterationOf(config);
    for (double cpu : {config.cpu_cores * 2, 1.0, 0.0}) {  // 0: uncapped
      ModelConfig more = config;
      more.cpu_cores = cpu;
      const double iteration = IterationOf(more);
      EXPECT_LE(iteration, previous) << ConfigLabel(config) << " at " << cpu << " cores";
      previous = iteration;
    }
  }
}

}  // namespace
}  // namespace dmlbench
