#include "orchestrator/launch/cluster/link_probe.h"

#include <cstdio>
#include <iterator>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/launch/ssh/inventory.h"

namespace dmlbench {
namespace {

std::string Tail(const std::string& text, std::size_t bytes) {
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

}  // namespace

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
                           probe});
  const std::vector<std::string> probe_args = ProbeArguments({options.max_bytes, options.max_seconds_per_size});
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());

  LinkProbeResult result;
  result.profile = ProfileLabel(state.network);
  result.network = state.network;
  result.hosts = {state.hosts[0].name, state.hosts[1].name};
  result.time_unix_s = UnixNow();
  ChildOptions child;
  child.extra_env.assign(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  child.merge_stderr = true;
  // The probe measures the link; what a CPU quota costs is the model's CPU
  // terms. Under 0.15 core, both ranks' waits burn their quotas and a round
  // trip waits for the next quota period whenever the two hosts' periods
  // fall out of step: alpha read 11 us in one study and 1.3 to 5 ms in
  // others, with the same links (uncapped: 9.5 us).
  QuotaLift lift(state, 2);
  const CommandOutput run = RunCommand(argv, options.timeout_s, child);
  lift.Restore();
  if (run.exit_code != 0) {
    const std::string how = run.exit_code == -1 ? "timed out after " + ExactNumber(options.timeout_s) + " s"
                                                : "exit " + std::to_string(run.exit_code);
    throw ClusterError("link probe failed (" + how + "): `" + ShellJoin(argv) + "`: " +
                       Tail(run.out, 2048));
  }
  // Standard output and error arrive interleaved: the JSON lines are ours.
  result.points = ParseProbeOutput(run.out);
  result.fit = FitLink(result.points);
  return result;
}

}  // namespace dmlbench
