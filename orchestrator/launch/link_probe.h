// LinkProbe: what every link probe shares, wherever its two hosts are (the
// emulated cluster's namespaces, launch/cluster/link_probe.h; an SSH/EC2
// inventory, launch/ssh/ssh_link_probe.h): the command line of
// dmlbench-linkprobe (MPI ping-pong, trainer/link_probe_main.cc), the lines
// it prints, the fit t(m) = alpha + m/B and the link_probes rows
// (schemas/migrations/002_link_probes.sql). Starts nothing. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_LINK_PROBE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_LINK_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// A probe that could not run, printed something else than its lines, or
// measured what no link does. what() says which and, for a run, how it ended.
class LinkProbeError : public Error {
 public:
  using Error::Error;
};

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
  std::string profile;                // link_probes.profile, the name the rows carry
  NetworkProfile network;             // the shaping configured while probing; {} = unshaped
  std::vector<ProbePoint> points;     // by size
  LinkFit fit;
  std::vector<std::string> hosts;     // inventory names of the two hosts
  double time_unix_s = 0;
};

// Sizes 1 B .. max_bytes, doubling; at least 3 round trips each, else as
// many as fit in max_seconds_per_size.
struct ProbeSizes {
  std::int64_t max_bytes = 4 << 20;
  double max_seconds_per_size = 0.5;
};

// dmlbench-linkprobe's arguments (after its path) for these sizes.
std::vector<std::string> ProbeArguments(const ProbeSizes& sizes);

// A number as the probe's command lines and messages write it: every
// digit a double holds ("%.17g"), so nothing is rounded away.
std::string ExactNumber(double value);

// Parses one JSON line of dmlbench-linkprobe; throws LinkProbeError
// "link probe printed an invalid line: <line>" for anything else.
ProbePoint ParseProbeLine(std::string_view line);

// The points of the probe's whole output: each line that starts with `{"`
// (Open MPI's own messages may come between them). Throws LinkProbeError.
std::vector<ProbePoint> ParseProbeOutput(std::string_view output);

// Fit of t = alpha + m/B (Hockney): B from the slope over the large
// messages (within a factor 64 of the largest: smaller ones ride tbf's burst
// bucket), alpha the median of t - m/B over messages up to 1 KiB whose m/B
// is at most half their time t (the others rode the bucket too).
// Throws LinkProbeError "cannot fit alpha and B: ..." for fewer than two
// sizes or a slope that is not positive.
LinkFit FitLink(const std::vector<ProbePoint>& points);

// One link_probes row per probed size, each carrying the fit.
std::vector<LinkProbeRow> LinkProbeRows(const LinkProbeResult& result);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_LINK_PROBE_H_
