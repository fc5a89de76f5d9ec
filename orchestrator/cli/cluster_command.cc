// `dmlbench cluster up|status|down|probe`: the emulated cluster on this
// machine (needs root), with `up --slurm` also a Slurm whose nodes are its hosts. Each prints its result on standard output. --name is
// honoured or refused: a state directory holds one cluster. SIGINT or
// SIGTERM during `up` rolls it back and ends with 130 or 143.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/programs.h"
#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/cluster_slurm.h"
#include "orchestrator/launch/cluster/link_probe.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/cluster/privileges.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

struct ClusterCliOptions {
  ClusterOptions cluster;
  CLI::Option* name = nullptr;           // --name, to tell whether it was given
  std::string bandwidth;                 // "" = unshaped
  std::string latency = "0";
  bool no_pin = false;                   // up --no-pin
  std::vector<std::string> profiles;     // probe: "BANDWIDTH[,LATENCY]"
  std::string probe_binary;
  std::string mpirun = "mpirun";
  double probe_seconds_per_size = 0.5;
};

// "100mbit" or "1gbit,0.1ms" -> a profile named after its values.
NetworkProfile ParseProfile(const std::string& text) {
  const std::size_t comma = text.find(',');
  NetworkProfile profile;
  profile.bandwidth_bits_per_s = ParseBandwidth(text.substr(0, comma));
  if (comma != std::string::npos) profile.latency_s = ParseLatency(text.substr(comma + 1));
  profile.name = ProfileLabel(profile);
  return profile;
}

std::atomic<bool> g_cancel{false};
std::atomic<int> g_signal{0};

void OnSignal(int signal) {
  g_signal.store(signal);
  g_cancel.store(true);
}

// The cluster in the state directory, which must be the one --name names
// if it was given.
ClusterState LoadNamedState(const ClusterCliOptions& o) {
  ClusterState state = LoadClusterState(o.cluster.state_dir);
  if (o.name->count() > 0 && state.name != o.cluster.name) {
    throw ClusterError("state directory " + state.state_dir + " holds cluster " + state.name + ", not " +
                       o.cluster.name + ": use --name " + state.name + " (or leave --name out)");
  }
  return state;
}

void Up(const ClusterCliOptions& o) {
  ClusterOptions options = o.cluster;
  if (!o.bandwidth.empty()) options.network.bandwidth_bits_per_s = ParseBandwidth(o.bandwidth);
  options.network.latency_s = ParseLatency(o.latency);
  options.pin_cpus = !o.no_pin;
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  const std::unique_ptr<CommandRunner> runner = MakeSystemCommandRunner();
  ClusterState state;
  try {
    state = ClusterUp(options, *runner, &g_cancel);
  } catch (const ClusterInterrupted& e) {
    std::cerr << "dmlbench: " << e.what() << "\n";
    throw CLI::RuntimeError(ExitStatusOfSignal(g_signal.load() == SIGTERM ? SIGTERM : SIGINT));
  }
  std::cout << ClusterStatus(state, *runner);
  if (options.slurm) {
    std::cout << "for provider \"slurm\": export SLURM_CONF=" << ClusterSlurmConf(state.runtime_dir) << "\n";
  }
}

void Status(const ClusterCliOptions& o) {
  const std::unique_ptr<CommandRunner> runner = MakeSystemCommandRunner();
  std::cout << ClusterStatus(LoadNamedState(o), *runner);
}

void Down(const ClusterCliOptions& o) {
  // The state directory names the cluster it holds; without one, --name
  // does. ClusterDown refuses a --name that differs.
  std::string name = o.cluster.name;
  if (o.name->count() == 0) {
    const std::string held = ClusterNameIn(o.cluster.state_dir);
    if (!held.empty()) name = held;
  }
  ValidateClusterName(name);
  CheckClusterPrivileges(o.cluster.cgroup_root);
  const std::unique_ptr<CommandRunner> runner = MakeSystemCommandRunner();
  ClusterDown(name, o.cluster.state_dir, o.cluster.cgroup_root, *runner);
  const std::vector<std::string> left = ClusterLeftovers(name, o.cluster.cgroup_root, *runner);
  if (!left.empty()) throw ClusterError("cluster " + name + " is not completely down: " + left.front() + " remains");
  std::cout << "cluster " << name << " is down\n";
}

void Probe(const ClusterCliOptions& o, const std::string& db) {
  CheckClusterPrivileges(o.cluster.cgroup_root);
  ClusterState state = LoadNamedState(o);
  std::vector<NetworkProfile> profiles;
  for (const std::string& text : o.profiles) profiles.push_back(ParseProfile(text));
  if (profiles.empty()) profiles.push_back(state.network);
  const NetworkProfile before = state.network;
  const std::unique_ptr<CommandRunner> runner = MakeSystemCommandRunner();
  LinkProbeOptions options;
  options.probe_binary = o.probe_binary;
  options.mpirun = o.mpirun;
  options.max_seconds_per_size = o.probe_seconds_per_size;
  Store store(db);
  for (const NetworkProfile& profile : profiles) {
    ReshapeCluster(state, profile, *runner);
    const LinkProbeResult result = ProbeLinks(state, options);
    const std::vector<LinkProbeRow> rows = LinkProbeRows(result);
    store.AddLinkProbe(rows);
    char line[256];
    std::snprintf(line, sizeof line, "%-22s alpha %.1f us  B %.3f MB/s", ProfileLabel(state.network).c_str(),
                  result.fit.alpha_s * 1e6, result.fit.bandwidth_bytes_per_s / 1e6);
    std::cout << line;
    if (state.network.bandwidth_bits_per_s > 0) {
      std::snprintf(line, sizeof line, " (%.1f%% of the configured rate)",
                    100 * result.fit.bandwidth_bytes_per_s * 8 / state.network.bandwidth_bits_per_s);
      std::cout << line;
    }
    std::cout << "  " << rows.size() << " sizes stored in " << db << "\n";
  }
  ReshapeCluster(state, before, *runner);
}

}  // namespace

void AddClusterCommands(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<ClusterCliOptions>();
  o->probe_binary = SiblingProgram("dmlbench-linkprobe");
  CLI::App* cluster = app.add_subcommand("cluster", "an emulated cluster on this machine: network namespaces, "
                                                    "shaped links, CPU quotas, one sshd per host (needs root)");
  cluster->require_subcommand(1);
  o->name = cluster->add_option("--name", o->cluster.name,
                                "cluster name, 1-6 of a-z0-9; everything it makes is dmlb-<name>-* (default: main "
                                "for up, the one the state directory holds for the others)");
  cluster->add_option("--state-dir", o->cluster.state_dir, "where inventory.toml and the hosts' files are kept; "
                                                                  "it holds one cluster")
      ->capture_default_str();

  CLI::App* up = cluster->add_subcommand("up", "create the hosts and write the inventory for provider \"cluster\"");
  up->add_option("--hosts", o->cluster.hosts, "number of hosts (one MPI rank each)")->capture_default_str();
  up->add_option("--bandwidth", o->bandwidth, "link rate, each direction: 100mbit, 1gbit, ... (default unshaped)");
  up->add_option("--latency", o->latency, "one-way delay added per direction: 0.1ms, 50us, ...")
      ->capture_default_str();
  up->add_option("--cpu", o->cluster.cpu_cores, "CPU share per host in cores (0 = uncapped)")->capture_default_str();
  up->add_flag("--slurm", o->cluster.slurm,
               "also start Slurm with the hosts as its nodes: munged and slurmctld here, a slurmd in each host "
               "(for provider \"slurm\" with SLURM_CONF as up prints it)");
  up->add_flag("--no-pin", o->no_pin,
               "let every host run on any CPU (default: a host of at most one core runs on CPU i mod the CPUs)");
  up->callback([o] { Up(*o); });

  CLI::App* status = cluster->add_subcommand("status", "hosts, links and quotas as the kernel reports them");
  status->callback([o] { Status(*o); });

  CLI::App* down = cluster->add_subcommand("down", "remove the cluster, also what a crashed run left");
  down->callback([o] { Down(*o); });

  CLI::App* probe = cluster->add_subcommand("probe", "measure latency and bandwidth of the links (MPI ping-pong) "
                                                     "and store them in the database");
  probe->add_option("--profile", o->profiles, "BANDWIDTH[,LATENCY] to probe, repeatable (default: as shaped now)");
  probe->add_option("--probe", o->probe_binary, "dmlbench-linkprobe binary")->capture_default_str();
  probe->add_option("--mpirun", o->mpirun, "Open MPI launcher")->capture_default_str();
  probe->add_option("--seconds-per-size", o->probe_seconds_per_size, "time spent on each message size")
      ->capture_default_str();
  probe->callback([o, &global] { Probe(*o, global.db); });
}

}  // namespace dmlbench
