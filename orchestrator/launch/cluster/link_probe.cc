#include "orchestrator/launch/cluster/link_probe.h"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/ssh/inventory.h"

namespace dmlbench {
namespace {

std::string Real(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string Tail(const std::string& text, std::size_t bytes) {
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

}  // namespace

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
    throw ClusterError("link probe printed an invalid line: " + std::string(line));
  }
}

LinkFit FitLink(const std::vector<ProbePoint>& points) {
  if (points.size() < 2) {
    throw ClusterError("cannot fit alpha and B: need at least 2 message sizes, got " +
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
    throw ClusterError("cannot fit alpha and B: time does not grow with message size");
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

LinkProbeResult ProbeLinks(const ClusterState& state, const LinkProbeOptions& options) {
  if (state.hosts.size() < 2) {
    throw ClusterError("the link probe needs at least 2 hosts, cluster " + state.name + " has " +
                       std::to_string(state.hosts.size()));
  }
  Inventory inventory;
  try {
    inventory = LoadInventory(state.inventory_path());
  } catch (const InventoryError& e) {
    throw ClusterError(e.what());
  }
  // The hosts have disks of their own: the probe goes onto both first.
  const std::string probe = CopyToHosts(state, {state.hosts[0], state.hosts[1]}, options.probe_binary);
  std::vector<std::string> argv = {options.mpirun};
  argv.insert(argv.end(), inventory.mpi_args.begin(), inventory.mpi_args.end());
  argv.insert(argv.end(), {"-H", state.hosts[0].address + "," + state.hosts[1].address, "-np", "2",
                           probe, "--max-bytes", std::to_string(options.max_bytes),
                           "--max-seconds-per-size", Real(options.max_seconds_per_size)});

  LinkProbeResult result;
  result.network = state.network;
  result.hosts = {state.hosts[0].name, state.hosts[1].name};
  result.time_unix_s = UnixNow();
  ChildOptions child;
  child.extra_env.assign(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  child.merge_stderr = true;
  const CommandOutput run = RunCommand(argv, options.timeout_s, child);
  if (run.exit_code != 0) {
    const std::string how = run.exit_code == -1 ? "timed out after " + Real(options.timeout_s) + " s"
                                                : "exit " + std::to_string(run.exit_code);
    throw ClusterError("link probe failed (" + how + "): `" + ShellJoin(argv) + "`: " +
                       Tail(run.out, 2048));
  }
  // Standard output and error arrive interleaved: the JSON lines are ours.
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("{\"", 0) == 0) result.points.push_back(ParseProbeLine(line));
  }
  result.fit = FitLink(result.points);
  return result;
}

std::vector<LinkProbeRow> LinkProbeRows(const LinkProbeResult& result) {
  std::string hosts;
  for (const std::string& host : result.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  std::vector<LinkProbeRow> rows;
  for (const ProbePoint& p : result.points) {
    rows.push_back({.profile = ProfileLabel(result.network),
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
