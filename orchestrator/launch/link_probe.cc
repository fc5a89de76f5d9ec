#include "orchestrator/launch/link_probe.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace dmlbench {
std::string ExactNumber(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::vector<std::string> ProbeArguments(const ProbeSizes& sizes) {
  return {"--max-bytes", std::to_string(sizes.max_bytes), "--max-seconds-per-size",
          ExactNumber(sizes.max_seconds_per_size)};
}

ProbePoint ParseProbeLine(std::string_view line) {
  try {
    const nlohmann::json json = nlohmann::json::parse(line);
    if (json.at("event") != "link_probe") throw std::runtime_error("not a link_probe event");
    ProbePoint point;
    point.message_bytes = json.at("message_bytes").get<std::int64_t>();
    point.median_one_way_s = json.at("median_one_way_s").get<double>();
    point.repetitions = json.at("repetitions").get<int>();
    if (point.message_bytes < 1 || !(point.median_one_way_s > 0) || point.repetitions < 1) {
      throw std::runtime_error("out of range");
    }
    return point;
  } catch (const std::exception&) {
    throw LinkProbeError("link probe printed an invalid line: " + std::string(line));
  }
}

std::vector<ProbePoint> ParseProbeOutput(std::string_view output) {
  std::vector<ProbePoint> points;
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"", 0) == 0) points.push_back(ParseProbeLine(line));
  }
  return points;
}

LinkFit FitLink(const std::vector<ProbePoint>& points) {
  if (points.size() < 2) {
    throw LinkProbeError("cannot fit alpha and B: need at least 2 message sizes, got " +
                         std::to_string(points.size()));
  }
  // B: least squares slope of t over m on the large messages only (within a
  // factor 64 of the largest). Smaller ones pass through tbf's token bucket
  // at line rate and would make the link look faster than it is shaped.
  std::int64_t largest = 0;
  for (const ProbePoint& p : points) largest = std::max(largest, p.message_bytes);
  std::vector<ProbePoint> large;
  for (const ProbePoint& p : points)
    if (p.message_bytes * 64 >= largest) large.push_back(p);
  if (large.size() < 2) large = points;
  double sm = 0, st = 0, smm = 0, smt = 0;
  for (const ProbePoint& p : large) {
    const double m = static_cast<double>(p.message_bytes);
    sm += m;
    st += p.median_one_way_s;
    smm += m * m;
    smt += m * p.median_one_way_s;
  }
  const double n = static_cast<double>(large.size());
  const double determinant = n * smm - sm * sm;
  const double slope = determinant == 0 ? 0 : (n * smt - sm * st) / determinant;
  if (!(slope > 0)) {
    throw LinkProbeError("cannot fit alpha and B: time does not grow with message size");
  }
  // alpha: what is left of the small messages' time (up to 1 KiB) once
  // their bytes are paid at B; the median, so one noisy size does not move it.
  // A size pays m/B only while that is at most half its time: on a shaped
  // link small messages ride tbf's bucket at line rate, and charging them at
  // B gave alpha -10 us at 10 Mbit/s (256 B at B is 214 us, measured 17 us).
  std::vector<double> latencies;
  for (const ProbePoint& p : points) {
    const double transfer_s = p.message_bytes * slope;
    if (p.message_bytes <= 1024 && 2 * transfer_s <= p.median_one_way_s) {
      latencies.push_back(p.median_one_way_s - transfer_s);
    }
  }
  if (latencies.empty()) latencies.push_back((st - slope * sm) / n);
  std::sort(latencies.begin(), latencies.end());
  const std::size_t mid = latencies.size() / 2;
  const double alpha = latencies.size() % 2 ? latencies[mid] : (latencies[mid - 1] + latencies[mid]) / 2;
  return LinkFit{alpha, 1 / slope};
}

std::vector<LinkProbeRow> LinkProbeRows(const LinkProbeResult& result) {
  std::string hosts;
  for (const std::string& host : result.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  std::vector<LinkProbeRow> rows;
  for (const ProbePoint& p : result.points) {
    rows.push_back({.profile = result.profile,
                    .bandwidth_bits_per_s = result.network.bandwidth_bits_per_s,
                    .latency_s = result.network.latency_s,
                    .message_bytes = p.message_bytes,
                    .repetitions = p.repetitions,
                    .median_one_way_s = p.median_one_way_s,
                    .alpha_s = result.fit.alpha_s,
                    .bandwidth_bytes_per_s = result.fit.bandwidth_bytes_per_s,
                    .time_unix_s = result.time_unix_s,
                    .hosts = hosts});
  }
  return rows;
}

}  // namespace dmlbench
