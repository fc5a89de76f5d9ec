// LinkProbe: measures a cluster link's latency alpha and bandwidth B. Runs
// dmlbench-linkprobe (MPI ping-pong, trainer/link_probe_main.cc) between the
// first two emulated hosts with the inventory's MPI settings; the fit of
// t(m) = alpha + m/B and the link_probes rows are launch/link_probe.h's.
// Does not shape links (cluster.h does) nor write the database. Stateless.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_

#include <cstdint>
#include <string>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/link_probe.h"

namespace dmlbench {

struct LinkProbeOptions {
  std::string probe_binary;           // dmlbench-linkprobe
  std::string mpirun = "mpirun";
  std::int64_t max_bytes = 4 << 20;   // sizes 1 B .. max_bytes, doubling
  double max_seconds_per_size = 0.5;  // at least 3 round trips each
  double timeout_s = 300;
};

// Probes the cluster's links as they are shaped now (state.network); the
// result's profile is ProfileLabel(state.network). Needs at least two hosts.
// Throws ClusterError with the probe's output tail when it fails, and
// LinkProbeError when its output cannot be fitted.
LinkProbeResult ProbeLinks(const ClusterState& state, const LinkProbeOptions& options);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINK_PROBE_H_
