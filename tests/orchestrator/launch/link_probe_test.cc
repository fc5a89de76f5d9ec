// LinkProbe (shared by the cluster and SSH probes): the probe's arguments
// and lines, the fit of alpha and B, and the rows it stores (a real SQLite
// file through the Store).
#include "orchestrator/launch/link_probe.h"

#include <unistd.h>

#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

std::vector<ProbePoint> ExactPoints(double alpha_s, double bytes_per_s) {
  std::vector<ProbePoint> points;
  for (std::int64_t m = 1; m <= (4 << 20); m *= 4) {
    points.push_back({m, alpha_s + static_cast<double>(m) / bytes_per_s, 10});
  }
  return points;
}

TEST(LinkProbeTest, ParsesAProbeLine) {
  const ProbePoint point = ParseProbeLine(
      R"({"bandwidth_bytes_per_s":11652042.3,"event":"link_probe","format_version":1,"hosts":["vm","vm"],)"
      R"("median_one_way_s":0.36,"median_round_trip_s":0.72,"message_bytes":4194304,"repetitions":3})");
  EXPECT_EQ(point.message_bytes, 4194304);
  EXPECT_DOUBLE_EQ(point.median_one_way_s, 0.36);
  EXPECT_EQ(point.repetitions, 3);
}

TEST(LinkProbeTest, ArgumentsNameTheSizes) {
  EXPECT_EQ(ProbeArguments({1 << 20, 0.25}),
            (std::vector<std::string>{"--max-bytes", "1048576", "--max-seconds-per-size", "0.25"}));
}

TEST(LinkProbeTest, OutputKeepsTheProbesLinesBetweenOpenMpisMessages) {
  const std::vector<ProbePoint> points = ParseProbeOutput(
      "--------------------------------------------------------------------------\n"
      "WARNING: There was an error initializing an OpenFabrics device.\n"
      R"({"event":"link_probe","message_bytes":1,"median_one_way_s":2e-05,"repetitions":40})" "\n"
      "[h1:01234] 1 more process has sent help message help-mpi-btl-openib.txt\n"
      R"({"event":"link_probe","message_bytes":2,"median_one_way_s":2.5e-05,"repetitions":38})" "\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].message_bytes, 1);
  EXPECT_DOUBLE_EQ(points[0].median_one_way_s, 2e-05);
  EXPECT_EQ(points[1].message_bytes, 2);
  EXPECT_EQ(points[1].repetitions, 38);
}

TEST(LinkProbeTest, FitRecoversAlphaAndBandwidth) {
  const LinkFit fit = FitLink(ExactPoints(150e-6, 12.5e6));
  EXPECT_NEAR(fit.alpha_s, 150e-6, 1e-9);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s, 12.5e6, 1);
}

TEST(LinkProbeTest, FitWeighsSmallAndLargeMessages) {
  // 20% noise on one small message moves alpha, not B.
  std::vector<ProbePoint> points = ExactPoints(100e-6, 125e6);
  points[1].median_one_way_s *= 1.2;
  const LinkFit fit = FitLink(points);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s / 125e6, 1, 0.01);
  EXPECT_NEAR(fit.alpha_s / 100e-6, 1, 0.1);
}

TEST(LinkProbeTest, FitIgnoresMessagesThatRideTheTokenBucket) {
  // Mid-size messages pass at twice the shaped rate (tbf's burst): B comes
  // from the large messages, alpha from the small ones.
  std::vector<ProbePoint> points = ExactPoints(100e-6, 12.5e6);
  for (ProbePoint& p : points)
    if (p.message_bytes > 1024 && p.message_bytes < (64 << 10))
      p.median_one_way_s = 100e-6 + p.message_bytes / 25e6;
  const LinkFit fit = FitLink(points);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s / 12.5e6, 1, 0.01);
  EXPECT_NEAR(fit.alpha_s / 100e-6, 1, 0.01);
}

TEST(LinkProbeTest, StoresOneRowPerSizeWithTheFit) {
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("dmlb-link-probe-test-" + std::to_string(getpid()) + ".db")).string();
  std::filesystem::remove(db);
  {
    Store store(db);
    LinkProbeResult result;
    result.profile = "100mbit-100us";
    result.network = {"", 1e8, 1e-4};
    result.points = ExactPoints(200e-6, 12e6);
    result.fit = FitLink(result.points);
    result.hosts = {"dmlb-t-h1", "dmlb-t-h2"};
    result.time_unix_s = 1700000000.5;
    const std::vector<LinkProbeRow> probe_rows = LinkProbeRows(result);
    store.AddLinkProbe(probe_rows);
    EXPECT_EQ(probe_rows.size(), 12u);
    const QueryResult rows = store.Query(
        "SELECT profile, bandwidth_bits_per_s, latency_s, count(*), min(message_bytes), max(message_bytes), "
        "round(avg(alpha_s) * 1e6), round(avg(bandwidth_bytes_per_s)), hosts FROM link_probes GROUP BY profile");
    ASSERT_EQ(rows.rows.size(), 1u);
    const auto& row = rows.rows[0];
    EXPECT_EQ(std::get<std::string>(row[0]), "100mbit-100us");
    EXPECT_DOUBLE_EQ(std::get<double>(row[1]), 1e8);
    EXPECT_DOUBLE_EQ(std::get<double>(row[2]), 1e-4);
    EXPECT_EQ(std::get<std::int64_t>(row[3]), 12);
    EXPECT_EQ(std::get<std::int64_t>(row[4]), 1);
    EXPECT_EQ(std::get<std::int64_t>(row[5]), 4 << 20);
    EXPECT_DOUBLE_EQ(std::get<double>(row[6]), 200);
    EXPECT_DOUBLE_EQ(std::get<double>(row[7]), 12e6);
    EXPECT_EQ(std::get<std::string>(row[8]), "dmlb-t-h1,dmlb-t-h2");
  }
  std::filesystem::remove(db);
}

// Error paths of launch/link_probe.cc follow.

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const LinkProbeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LinkProbeTest, RejectsALineThatIsNotJson) {
  EXPECT_EQ(ErrorOf([] { ParseProbeLine("{\"event\": "); }), "link probe printed an invalid line: {\"event\": ");
}

TEST(LinkProbeTest, RejectsAnotherEvent) {
  EXPECT_EQ(ErrorOf([] { ParseProbeLine(R"({"event":"epoch"})"); }),
            R"(link probe printed an invalid line: {"event":"epoch"})");
}

TEST(LinkProbeTest, RejectsANonPositiveTime) {
  EXPECT_EQ(ErrorOf([] {
              ParseProbeLine(R"({"event":"link_probe","message_bytes":4,"median_one_way_s":0,"repetitions":3})");
            }),
            R"(link probe printed an invalid line: {"event":"link_probe","message_bytes":4,"median_one_way_s":0,"repetitions":3})");
}

TEST(LinkProbeTest, RejectsABrokenLineInTheOutput) {
  EXPECT_EQ(ErrorOf([] { ParseProbeOutput("warning\n{\"event\":\"link_probe\",\"message_bytes\":1}\n"); }),
            R"(link probe printed an invalid line: {"event":"link_probe","message_bytes":1})");
}

TEST(LinkProbeTest, FitNeedsTwoSizes) {
  EXPECT_EQ(ErrorOf([] { FitLink({{1024, 0.001, 5}}); }),
            "cannot fit alpha and B: need at least 2 message sizes, got 1");
}

TEST(LinkProbeTest, FitNeedsTimeGrowingWithSize) {
  EXPECT_EQ(ErrorOf([] { FitLink({{1, 0.002, 5}, {1 << 20, 0.001, 5}}); }),
            "cannot fit alpha and B: time does not grow with message size");
}

}  // namespace
}  // namespace dmlbench
