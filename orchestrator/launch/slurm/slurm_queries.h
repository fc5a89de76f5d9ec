// SlurmQueries: what the slurm provider asks Slurm besides salloc and srun —
// the facts and state of nodes (`scontrol show node`), the state of a job and
// where it holds CPUs (`scontrol show job`), a step's final state from
// accounting (`sacct`), the jobs of one name (`squeue`) — each a command run
// to completion (core/subprocess.h), its output read into a struct by a pure
// function that the tests feed with Slurm 22.05's own lines. Knows nothing of
// sweeps or attempts. Thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_QUERIES_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_QUERIES_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// The `Key=Value` words of one line of `scontrol --oneliner show ...`. A
// value runs to the next word that looks like `Key=` (values hold spaces:
// `OS=Linux 6.1.0 #1 SMP`, `Reason=maintenance [root@...]`).
std::map<std::string, std::string> ReadKeyValues(std::string_view line);

// A node as `scontrol show node` describes it.
struct SlurmNode {
  HostFacts facts;    // name, CPUs (CPUTot), memory (RealMemory), kernel (OS), features as tags
  std::string state;  // "IDLE", "ALLOCATED", "DOWN+DRAIN", ...
  std::string reason; // why it is down or drained, as the administrator gave it; "" when none
};
// One node per line of `scontrol --oneliner show node`.
std::vector<SlurmNode> ReadNodes(std::string_view scontrol_output);
// Whether a node in `state` can run nothing: DOWN, DRAIN(ED/ING), FAIL(ING),
// NOT_RESPONDING (the `*` of sinfo) or in maintenance.
bool NodeUnusable(std::string_view state);

// A job as `scontrol --details --oneliner show job` describes it.
struct SlurmJob {
  std::string state;      // JobState: "PENDING", "RUNNING", "TIMEOUT", "NODE_FAIL", ...
  std::string reason;     // Reason: "None", "NodeDown", "ReqNodeNotAvail,_UnavailableNodes:n2", ...
  std::string exit_code;  // ExitCode: "0:0" (exit status : signal)
  std::string node_list;  // NodeList as Slurm compresses it, "n[1-2]"; "" while pending
  // The CPUs it holds per node, in the order of the detail lines: node
  // expressions ("n[1-2]") with the count each of them holds.
  std::vector<std::pair<std::string, int>> cpus_per_nodes;
};
std::optional<SlurmJob> ReadJob(std::string_view scontrol_output);

// How a step ended according to accounting.
struct AccountedStep {
  std::string state;      // "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", ...
  std::string exit_code;  // "0:0"
};
// The row of `step_id` in `sacct --noheader --parsable2
// --format=JobID,State,ExitCode`; nullopt when it has none. "CANCELLED by 0"
// is read as "CANCELLED".
std::optional<AccountedStep> ReadAccountedStep(std::string_view sacct_output, std::string_view step_id);

// The queries, run against the controller SLURM_CONF names.

// nullopt when scontrol fails (no such node, no controller).
std::optional<std::vector<SlurmNode>> ShowNodes(const std::vector<std::string>& names);
// nullopt when the controller no longer knows the job (MinJobAge after its
// end) or cannot be asked.
std::optional<SlurmJob> ShowJob(const std::string& job_id);
// nullopt when the cluster keeps no accounting (sacct: "Slurm accounting
// storage is disabled") or has no row for the step yet.
std::optional<AccountedStep> AccountStep(const std::string& step_id);
// `scontrol show hostnames`: "n[1-2],m3" -> n1, n2, m3. Empty on failure.
std::vector<std::string> ExpandHostnames(const std::string& expression);
// The ids of this user's jobs named `name` (any state but finished), by squeue.
std::vector<std::string> JobsNamed(const std::string& name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SLURM_SLURM_QUERIES_H_
