// LinkProbe: measures a cluster link's latency alpha and bandwidth B. Runs
// dmlbench-linkprobe (MPI ping-pong, trainer/link_probe_main.cc) between the
// first two emulated hosts with the inventory's MPI settings, fits
// t(m) = alpha + m/B to the median one-way times and stores the points in
// the link_probes table (schemas/migrations/002_link_probes.sql) as
// calibration data. Does not shape links (cluster.h does). Stateless.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/launcher.h"

namespace dmlbench {

// One line of the probe: a message size and its median one-way time.
struct ProbePoint {
  std::int64_t message_bytes = 0;
  double median_one_way_s = 0;
  int repetitions = 0;
};

struct LinkFit {
  double alpha_s = 0;                 // per-message latency
  double bandwidth_bytes_per_s = 0;   // B
};

struct LinkProbeResult {
  NetworkProfile network;             // the shaping probed
  std::vector<ProbePoint> points;     // by size
  LinkFit fit;
  std::vector<std::string> hosts;     // inventory names of the two hosts
  double time_unix_s = 0;
};

struct LinkProbeOptions {
  std::string probe_binary;           // dmlbench-linkprobe
  std::string mpirun = "mpirun";
  std::int64_t max_bytes = 4 << 20;   // sizes 1 B .. max_bytes, doubling
  double max_seconds_per_size = 0.5;  // at least 3 round trips each
  double timeout_s = 300;
};

// Parses one JSON line of dmlbench-linkprobe; throws ClusterError
// "link probe printed an invalid line: <line>" for anything else.
ProbePoint ParseProbeLine(std::string_view line);

// Fit of t = alpha + m/B (Hockney): B from the slope over the large
// messages (within a factor 64 of the largest: smaller ones ride tbf's burst
// bucket), alpha the median of t - m/B over messages up to 1 KiB whose m/B
// is at most half their time t (the others rode the bucket too).
// Throws ClusterError "cannot fit alpha and B: ..." for fewer than two
// sizes or a slope that is not positive.
LinkFit FitLink(const std::vector<ProbePoint>& points);

// One link_probes row per probed size, each carrying the fit.
std::vector<LinkProbeRow> LinkProbeRows(const LinkProbeResult& result);

// Probes the cluster's links as they are shaped now (state.network). Needs
// at least two hosts. Throws ClusterError with the probe's stderr tail when
// it fails.
LinkProbeResult ProbeLinks(const ClusterState& state, const LinkProbeOptions& options);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_
