#include "orchestrator/launch/local/local_link_probe.h"

#include <unistd.h>

#include <iterator>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/launcher.h"

namespace dmlbench {

LinkProbeResult ProbeThisMachine(const LocalLinkProbeOptions& options) {
  std::vector<std::string> argv = {options.mpirun, "-np", "2", options.probe_binary};
  const std::vector<std::string> probe_args = ProbeArguments(options.sizes);
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  ChildOptions child;
  child.extra_env.assign(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  if (::geteuid() == 0) child.extra_env.insert(child.extra_env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  child.merge_stderr = true;
  LinkProbeResult result;
  result.profile = "local";
  result.hosts = {"local", "local"};
  result.time_unix_s = UnixNow();
  const CommandOutput run = RunCommand(argv, options.timeout_s, child);
  if (run.exit_code != 0) {
    const std::string how = run.exit_code == -1 ? "timed out after " + ExactNumber(options.timeout_s) + " s"
                                                : "exit " + std::to_string(run.exit_code);
    const std::string tail = run.out.size() <= 2048 ? run.out : run.out.substr(run.out.size() - 2048);
    throw LinkProbeError("link probe of this machine failed (" + how + "): `" + ShellJoin(argv) + "`: " + tail);
  }
  // Standard output and error arrive interleaved: the JSON lines are ours.
  result.points = ParseProbeOutput(run.out);
  result.fit = FitLink(result.points);
  return result;
}

}  // namespace dmlbench
