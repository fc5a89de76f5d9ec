// Tests of orchestrator/core/link_text: links in the words people use, read
// back, and stored scopes rewritten for printing while other text is kept.
#include "orchestrator/core/link_text.h"

#include <gtest/gtest.h>

#include <utility>

namespace dmlbench {
namespace {

TEST(LinkTextTest, RatesAndLatenciesInTheUnitsPeopleWrite) {
  EXPECT_EQ(LinkText(1e10, 0), "10 Gbit/s, 0 µs");
  EXPECT_EQ(LinkText(1e9, 0), "1 Gbit/s, 0 µs");
  EXPECT_EQ(LinkText(1e8, 50e-6), "100 Mbit/s, 50 µs");
  EXPECT_EQ(LinkText(2.5e8, 1.5e-3), "250 Mbit/s, 1.5 ms");
  EXPECT_EQ(LinkText(1.5e9, 2), "1.5 Gbit/s, 2 s");
  EXPECT_EQ(LinkText(8000, 0.1), "8 kbit/s, 100 ms");
  EXPECT_EQ(LinkText(0, 0), "unlimited, 0 µs");
  EXPECT_EQ(LinkText(400e9, 1e-7), "400 Gbit/s, 0.1 µs");
}

TEST(LinkTextTest, ReadsBackWhatItWrites) {
  for (const auto& [rate, latency] : {std::pair{1e10, 0.0}, {1e8, 50e-6}, {2.5e8, 1.5e-3}, {0.0, 0.0}}) {
    const std::optional<Link> link = ParseLinkText(LinkText(rate, latency));
    ASSERT_TRUE(link.has_value()) << LinkText(rate, latency);
    EXPECT_DOUBLE_EQ(link->bandwidth_bits_per_s, rate);
    EXPECT_DOUBLE_EQ(link->latency_s, latency);
  }
  const std::optional<Link> us = ParseLinkText("1 Gbit/s, 20 us");
  ASSERT_TRUE(us.has_value());
  EXPECT_DOUBLE_EQ(us->latency_s, 20e-6);
  EXPECT_FALSE(ParseLinkText("1 Gbit/s 0 µs").has_value());
  EXPECT_FALSE(ParseLinkText("1e+09bit/s 0s").has_value());
  EXPECT_FALSE(ParseLinkText("1 Gbps, 0 µs").has_value());
  EXPECT_FALSE(ParseLinkText("1 Gbit/s, 0 µs extra").has_value());
}

TEST(LinkTextTest, StoredScopesAreRewrittenOnlyWhereTheyHoldALink) {
  EXPECT_EQ(ReadableScope("1e+10bit/s 0s"), "10 Gbit/s, 0 µs");
  EXPECT_EQ(ReadableScope("1000000000bit/s 5e-05s"), "1 Gbit/s, 50 µs");
  EXPECT_EQ(ReadableScope("p2p b=100 1e+09bit/s 0s"), "p2p b=100 1 Gbit/s, 0 µs");
  EXPECT_EQ(ReadableScope("0bit/s 0s"), "unlimited, 0 µs");
  EXPECT_EQ(ReadableScope("ps k=1"), "ps k=1");
  EXPECT_EQ(ReadableScope(""), "");
  EXPECT_EQ(ReadableScope("ring w=2 epochs"), "ring w=2 epochs");
  EXPECT_EQ(ReadableScope("xbit/s 0s"), "xbit/s 0s");
}

}  // namespace
}  // namespace dmlbench
