// Links: profile units, the choice of the private /24 and the tc commands
// that shape a link. Pure functions; no root needed.
#include "orchestrator/launch/cluster/links.h"

#include <gtest/gtest.h>

#include "orchestrator/launch/cluster/cluster_state.h"
#include "tests/orchestrator/support/cluster_error.h"

namespace dmlbench {
namespace {

// `ip` as DeleteLink sees it: the link is listed until `listed` runs out,
// and its deletion fails the way a vanished device does.
class VanishingLink : public CommandRunner {
 public:
  explicit VanishingLink(int listed) : listed_(listed) {}
  CommandResult Run(const std::vector<std::string>& argv, const CommandPlace&) override {
    if (argv.size() >= 3 && argv[1] == "-o") return {0, listed_-- > 0 ? "7: dmlb-t-2@if3: <BROADCAST> mtu 1500\n" : ""};
    return {1, "Cannot find device \"dmlb-t-2\"\n"};
  }

 private:
  int listed_;
};

TEST(ClusterLinksTest, ALinkThatVanishesWhileItIsDeletedIsGoneAsAsked) {
  VanishingLink vanished(1);  // listed, then gone
  EXPECT_EQ(ClusterErrorOf([&] { DeleteLink(vanished, "dmlb-t-2"); }), "(no error)");
  VanishingLink stays(2);     // still there after the failed deletion
  EXPECT_EQ(ClusterErrorOf([&] { DeleteLink(stays, "dmlb-t-2"); }),
            "`ip link delete dmlb-t-2` failed (exit 1): Cannot find device \"dmlb-t-2\"");
}

TEST(ClusterLinksTest, ParsesBandwidthInTcUnits) {
  EXPECT_DOUBLE_EQ(ParseBandwidth("1gbit"), 1e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("100mbit"), 1e8);
  EXPECT_DOUBLE_EQ(ParseBandwidth("12.5Mbit"), 12.5e6);
  EXPECT_DOUBLE_EQ(ParseBandwidth("500kbit"), 5e5);
  EXPECT_DOUBLE_EQ(ParseBandwidth("2000000bit"), 2e6);
}

TEST(ClusterLinksTest, ParsesLatency) {
  EXPECT_DOUBLE_EQ(ParseLatency("0.1ms"), 1e-4);
  EXPECT_DOUBLE_EQ(ParseLatency("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(ParseLatency("1s"), 1);
  EXPECT_DOUBLE_EQ(ParseLatency("0"), 0);
}

TEST(ClusterLinksTest, FormatsProfiles) {
  EXPECT_EQ(FormatBandwidth(1e9), "1gbit");
  EXPECT_EQ(FormatBandwidth(1e8), "100mbit");
  EXPECT_EQ(FormatBandwidth(2.5e5), "250kbit");
  EXPECT_EQ(FormatLatency(0), "0ms");
  EXPECT_EQ(FormatLatency(1e-4), "100us");
  EXPECT_EQ(FormatLatency(0.005), "5ms");
  EXPECT_EQ(ProfileLabel({"", 1e8, 1e-4}), "100mbit-100us");
  EXPECT_EQ(ProfileLabel({"", 0, 0}), "unshaped");
  EXPECT_EQ(ProfileLabel({"", 0, 0.001}), "unlimited-1ms");
  EXPECT_EQ(ProfileLabel({"ec2-10g", 1e10, 0}), "ec2-10g");
}

TEST(ClusterLinksTest, SubnetAddresses) {
  const Subnet subnet{(10u << 24) | (199u << 16) | (7u << 8)};
  EXPECT_EQ(subnet.Cidr(), "10.199.7.0/24");
  EXPECT_EQ(subnet.Address(11), "10.199.7.11");
}

TEST(ClusterLinksTest, ChoosesTheFirstSubnetNoAddressOrRouteOverlaps) {
  const std::string addr =
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n"
      "4: eth0    inet 10.199.3.2/24 brd 10.199.3.255 scope global eth0\\       valid_lft forever\n";
  const std::string route =
      "default via 192.0.2.1 dev eth0\n"
      "10.199.4.0/23 via 10.199.3.1 dev eth0\n"
      "unreachable 10.199.6.0/24\n"
      "local 10.199.7.9 dev eth0 table local proto kernel scope host src 10.199.7.9\n";
  // 3 (address), 4 and 5 (the /23), 6 (unreachable), 7 (a /32) are taken.
  EXPECT_EQ(ChooseSubnet(addr, route, 3).Cidr(), "10.199.8.0/24");
  EXPECT_EQ(ChooseSubnet(addr, route, 2).Cidr(), "10.199.2.0/24");
  // Candidates wrap around after 10.199.255.0/24.
  EXPECT_EQ(ChooseSubnet("", "10.199.255.0/24 dev x\n", 255).Cidr(), "10.199.0.0/24");
}

// Error paths of links.cc follow.

TEST(ClusterLinksTest, RejectsBandwidthWithoutUnit) {
  EXPECT_EQ(ClusterErrorOf([] { ParseBandwidth("100"); }),
            "bandwidth must be a number with unit bit, kbit, mbit or gbit between 8kbit and 400gbit "
            "(e.g. 1gbit), got \"100\"");
}

TEST(ClusterLinksTest, RejectsBandwidthThatIsNotANumber) {
  EXPECT_EQ(ClusterErrorOf([] { ParseBandwidth("fast"); }),
            "bandwidth must be a number with unit bit, kbit, mbit or gbit between 8kbit and 400gbit "
            "(e.g. 1gbit), got \"fast\"");
  EXPECT_EQ(ClusterErrorOf([] { ParseBandwidth("-1gbit"); }),
            "bandwidth must be a number with unit bit, kbit, mbit or gbit between 8kbit and 400gbit "
            "(e.g. 1gbit), got \"-1gbit\"");
}

TEST(ClusterLinksTest, RejectsBandwidthOutOfRange) {
  EXPECT_EQ(ClusterErrorOf([] { ParseBandwidth("1000gbit"); }),
            "bandwidth must be a number with unit bit, kbit, mbit or gbit between 8kbit and 400gbit "
            "(e.g. 1gbit), got \"1000gbit\"");
}

TEST(ClusterLinksTest, RejectsLatencyWithUnknownUnit) {
  EXPECT_EQ(ClusterErrorOf([] { ParseLatency("1min"); }),
            "latency must be a number with unit s, ms or us of at most 10s (e.g. 0.1ms), got \"1min\"");
  EXPECT_EQ(ClusterErrorOf([] { ParseLatency("5"); }),
            "latency must be a number with unit s, ms or us of at most 10s (e.g. 0.1ms), got \"5\"");
}

TEST(ClusterLinksTest, RejectsLatencyAboveTenSeconds) {
  EXPECT_EQ(ClusterErrorOf([] { ParseLatency("11s"); }),
            "latency must be a number with unit s, ms or us of at most 10s (e.g. 0.1ms), got \"11s\"");
}

TEST(ClusterLinksTest, RefusesWhenEverySubnetIsTaken) {
  EXPECT_EQ(ClusterErrorOf([] { ChooseSubnet("", "unreachable 10.0.0.0/8\n", 0); }),
            "no free /24 in 10.199.0.0/16: every one overlaps an address or route of this machine");
}

TEST(ClusterLinksTest, UnshapedProfileOnlyRemovesTheQdisc) {
  const auto commands = ShapeCommands("dmlb-x-1", "", NetworkProfile{});
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0], (std::vector<std::string>{"tc", "qdisc", "del", "dev", "dmlb-x-1", "root"}));
}

TEST(ClusterLinksTest, RateAloneIsATokenBucketAtTheRoot) {
  const auto commands = ShapeCommands("eth0", "dmlb-x-h1", NetworkProfile{"", 1e8, 0});
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0], (std::vector<std::string>{"tc", "-n", "dmlb-x-h1", "qdisc", "del", "dev", "eth0", "root"}));
  // burst: max(1 ms at 12.5 MB/s, 16 KiB) = 16384; limit: max(200 ms at the rate, 16 MiB) + burst.
  EXPECT_EQ(commands[1], (std::vector<std::string>{"tc", "-n", "dmlb-x-h1", "qdisc", "add", "dev", "eth0", "root",
                                                   "handle", "10:", "tbf", "rate", "100000000bit", "burst", "16384",
                                                   "limit", "16793600"}));
}

TEST(ClusterLinksTest, DelayIsNetemWithTheBucketBelowIt) {
  const auto commands = ShapeCommands("dmlb-x-1", "", NetworkProfile{"", 1e9, 1e-4});
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[1], (std::vector<std::string>{"tc", "qdisc", "add", "dev", "dmlb-x-1", "root", "handle", "1:",
                                                   "netem", "delay", "100us", "limit", "100000"}));
  EXPECT_EQ(commands[2], (std::vector<std::string>{"tc", "qdisc", "add", "dev", "dmlb-x-1", "parent", "1:1",
                                                   "handle", "10:", "tbf", "rate", "1000000000bit", "burst", "125000",
                                                   "limit", "25125000"}));
}

TEST(ClusterLinksTest, DelayAloneIsNetemOnly) {
  const auto commands = ShapeCommands("dmlb-x-1", "", NetworkProfile{"", 0, 0.002});
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[1], (std::vector<std::string>{"tc", "qdisc", "add", "dev", "dmlb-x-1", "root", "handle", "1:",
                                                   "netem", "delay", "2000us", "limit", "100000"}));
}

TEST(ClusterLinksTest, ABucketAloneIsChangedInPlaceFromABucketAlone) {
  const auto commands = ShapeCommands("eth0", "dmlb-x-h1", NetworkProfile{"", 1e8, 0}, NetworkProfile{"", 1e9, 0});
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0], (std::vector<std::string>{"tc", "-n", "dmlb-x-h1", "qdisc", "replace", "dev", "eth0",
                                                   "root", "handle", "10:", "tbf", "rate", "100000000bit", "burst",
                                                   "16384", "limit", "16793600"}));
}

TEST(ClusterLinksTest, AnythingButABucketOnEitherSideIsDeletedAndAddedAgain) {
  const NetworkProfile bucket{"", 1e8, 0};
  const std::vector<std::pair<NetworkProfile, NetworkProfile>> cases = {
      {bucket, UnknownShaping()},          // a reshape killed half way
      {bucket, NetworkProfile{}},          // unshaped: the default qdisc
      {bucket, NetworkProfile{"", 1e8, 1e-4}},  // netem at the root, the bucket below
      {NetworkProfile{"", 1e8, 1e-4}, bucket},
      {NetworkProfile{}, bucket},
  };
  for (const auto& [profile, now] : cases) {
    const auto commands = ShapeCommands("dmlb-x-1", "", profile, now);
    ASSERT_FALSE(commands.empty());
    EXPECT_EQ(commands[0], (std::vector<std::string>{"tc", "qdisc", "del", "dev", "dmlb-x-1", "root"}))
        << ProfileLabel(profile) << " from " << ProfileLabel(now);
    for (std::size_t i = 1; i < commands.size(); ++i) EXPECT_EQ(commands[i][2], "add");
  }
  // Without what the links have now, always the delete and the add.
  EXPECT_EQ(ShapeCommands("dmlb-x-1", "", bucket)[0][2], "del");
}

TEST(ClusterLinksTest, HostRoutesPinCubicWhateverTheMachineDefault) {
  EXPECT_EQ(CongestionControlCommand("dmlb-x-h1", "10.199.7.0/24", "10.199.7.11"),
            (std::vector<std::string>{"ip", "-n", "dmlb-x-h1", "route", "replace", "10.199.7.0/24", "dev", "eth0",
                                      "proto", "kernel", "scope", "link", "src", "10.199.7.11", "congctl",
                                      "cubic"}));
}

}  // namespace
}  // namespace dmlbench
