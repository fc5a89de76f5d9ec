#include "orchestrator/launch/ssh/ssh_link_probe.h"

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <sstream>

#include "common/sha256.h"
#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/launch/launcher.h"

namespace dmlbench {
namespace {

constexpr double kKillAfterS = 10;         // `timeout` sends SIGKILL this long after SIGTERM
constexpr int kTimeoutExitStatus = 124;    // `timeout`'s status when the limit was reached
constexpr std::size_t kSummaryLines = 8;   // of mpirun's stderr in an error

std::string Names(const std::vector<InventoryHost>& hosts) {
  std::string names;
  for (const InventoryHost& host : hosts) names += (names.empty() ? "" : ", ") + host.name;
  return names;
}

std::string Pair(const std::vector<InventoryHost>& hosts) {
  return "hosts '" + hosts[0].name + "' and '" + hosts[1].name + "'";
}

// ": " and the last lines of mpirun's stderr that say something (Open MPI
// frames its messages with lines of dashes), on one line; "" when none do.
std::string Summary(const std::string& text) {
  std::vector<std::string> kept;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.find_first_not_of("-= \t") == std::string::npos) continue;
    kept.push_back(line.substr(start));
  }
  std::string summary;
  for (std::size_t i = kept.size() > kSummaryLines ? kept.size() - kSummaryLines : 0; i < kept.size(); ++i) {
    summary += (summary.empty() ? "" : " / ") + kept[i];
  }
  return summary.empty() ? "" : ": " + summary;
}

}  // namespace

std::string DefaultProbeProfile(const Inventory& inventory) {
  return "ssh-" + std::filesystem::path(inventory.source_path).stem().string();
}

std::vector<InventoryHost> ProbeHosts(const Inventory& inventory, const std::vector<std::string>& names) {
  std::vector<InventoryHost> hosts;
  if (names.empty()) {
    if (inventory.hosts.size() < 2) {
      throw LinkProbeError("the link probe needs 2 hosts, " + inventory.source_path + " has " +
                           std::to_string(inventory.hosts.size()));
    }
    hosts = {inventory.hosts[0], inventory.hosts[1]};
  } else {
    if (names.size() != 2) {
      std::string given;
      for (const std::string& name : names) given += (given.empty() ? "" : ", ") + name;
      throw LinkProbeError("the link probe needs 2 hosts, got " + std::to_string(names.size()) + ": " + given);
    }
    if (names[0] == names[1]) {
      throw LinkProbeError("the link probe needs 2 different hosts, got '" + names[0] + "' twice");
    }
    for (const std::string& name : names) {
      const InventoryHost* found = nullptr;
      for (const InventoryHost& host : inventory.hosts) {
        if (host.name == name) found = &host;
      }
      if (found == nullptr) {
        throw LinkProbeError(inventory.source_path + " has no host '" + name + "' (its hosts: " +
                             Names(inventory.hosts) + ")");
      }
      hosts.push_back(*found);
    }
  }
  if (hosts[0].address == hosts[1].address) {
    throw LinkProbeError(Pair(hosts) + " have the same address " + hosts[0].address +
                         ": mpirun would start both ranks on one machine");
  }
  return hosts;
}

std::string ProbeCommand(const Inventory& inventory, const std::vector<InventoryHost>& hosts,
                         const std::string& work_dir, const SshLinkProbeOptions& options) {
  std::vector<std::string> words = {"timeout", "-k", ExactNumber(kKillAfterS), ExactNumber(options.timeout_s), "env",
                                    "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  words.insert(words.end(), std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  // -H lists each host once: one slot, so one rank, on each.
  words.insert(words.end(), {"mpirun", "-H", hosts[0].address + "," + hosts[1].address, "-np", "2"});
  words.insert(words.end(), inventory.mpi_args.begin(), inventory.mpi_args.end());
  words.push_back(work_dir + "/" + kRemoteProbeName);
  const std::vector<std::string> probe_args = ProbeArguments(options.sizes);
  words.insert(words.end(), probe_args.begin(), probe_args.end());
  return ShellJoin(words) + " </dev/null";
}

LinkProbeResult ProbeSshLink(const Inventory& inventory, const SshLinkProbeOptions& options,
                             const ConnectFunction& connect) {
  if (!inventory.emulated_cluster_toml.empty()) {
    throw LinkProbeError(inventory.source_path +
                         " is the emulated cluster's inventory: its links are shaped per run; probe them with "
                         "`dmlbench cluster probe`");
  }
  const std::vector<InventoryHost> hosts = ProbeHosts(inventory, options.hosts);
  std::error_code error;
  if (!std::filesystem::is_regular_file(options.probe_binary, error)) {
    throw LinkProbeError("the link probe program " + options.probe_binary +
                         " does not exist: build dmlbench-linkprobe or name it with --probe");
  }

  // Both hosts as runs get them: the probe uploaded when it differs, mpirun
  // present, one Open MPI, each reaching the other over ssh as mpirun will.
  Inventory pair = inventory;
  pair.hosts = hosts;
  const ProvisionPlan plan{inventory.work_dir,
                           {{options.probe_binary, kRemoteProbeName, Sha256FileHex(options.probe_binary)}}};
  const std::vector<HostProvision> provisioned = ProvisionHosts(pair, plan, connect);

  LinkProbeResult result;
  result.profile = options.profile.empty() ? DefaultProbeProfile(inventory) : options.profile;
  result.hosts = {hosts[0].name, hosts[1].name};
  result.time_unix_s = UnixNow();
  const std::string command = ProbeCommand(inventory, hosts, provisioned[0].work_dir, options);
  const ExecResult run = connect(hosts[0])->Exec(command, options.timeout_s + kKillAfterS + 5);
  if (run.timed_out || run.exit_status == kTimeoutExitStatus) {
    throw LinkProbeError("link probe between " + Pair(hosts) + " timed out after " + ExactNumber(options.timeout_s) +
                         " s" + Summary(run.err));
  }
  if (run.exit_status != 0) {
    throw LinkProbeError("link probe between " + Pair(hosts) + " failed (mpirun on '" + hosts[0].name +
                         "' exited with status " + std::to_string(run.exit_status) + ")" + Summary(run.err));
  }
  try {
    result.points = ParseProbeOutput(run.out);
    result.fit = FitLink(result.points);
  } catch (const LinkProbeError& e) {
    throw LinkProbeError("link probe between " + Pair(hosts) + ": " + e.what());
  }
  return result;
}

}  // namespace dmlbench
