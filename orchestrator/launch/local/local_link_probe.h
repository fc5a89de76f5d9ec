// LocalLinkProbe: measures what carries messages between two ranks on this
// machine (Open MPI's shared memory), as the link probe of the other
// providers measures their links: dmlbench-linkprobe's MPI ping-pong over
// message sizes 1 B .. 4 MiB, two ranks through mpirun here, the fit of
// t(m) = alpha + m/B and the rows of launch/link_probe.h. The local runs'
// profile is the unshaped one, so the result carries network {} and the
// profile "local". Does not write the database. Stateless.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LINK_PROBE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LINK_PROBE_H_

#include <cstdint>
#include <string>

#include "orchestrator/launch/link_probe.h"

namespace dmlbench {

struct LocalLinkProbeOptions {
  std::string probe_binary;           // dmlbench-linkprobe
  std::string mpirun = "mpirun";
  ProbeSizes sizes;                   // 1 B .. 4 MiB, at least 3 round trips each
  double timeout_s = 120;
};

// Throws LinkProbeError naming the command and the end of its output when
// the probe cannot run, or when its output cannot be fitted.
LinkProbeResult ProbeThisMachine(const LocalLinkProbeOptions& options);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LINK_PROBE_H_
