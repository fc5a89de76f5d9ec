#include "orchestrator/launch/cluster/cluster_launcher.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "orchestrator/core/clock.h"
#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/cluster/measured_start.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/ssh/collect_output.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/session.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {
namespace {

// Whether `line` is the trainer's run_end event (schemas/trainer-events.md).
bool IsRunEnd(std::string_view line) {
  if (line.empty() || line.front() != '{' || line.find("run_end") == std::string_view::npos) return false;
  const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  const auto kind = event.is_object() ? event.find("event") : event.end();
  return event.is_object() && kind != event.end() && *kind == "run_end";
}

// Lifts the quota of `hosts` into `lift` until it is destroyed. A cgroup
// that cannot be written leaves the job's exit capped, as it would be
// without: it only takes longer.
void LiftForExit(const ClusterState& hosts, int count, std::optional<QuotaLift>& lift) {
  try {
    lift.emplace(hosts, count);
  } catch (const ClusterError&) {
  }
}

class ClusterLauncher : public Launcher {
 public:
  ClusterLauncher(ClusterState state, Inventory inventory, std::unique_ptr<Launcher> ssh, std::string mpirun)
      : state_(std::move(state)),
        inventory_(std::move(inventory)),
        ssh_(std::move(ssh)),
        mpirun_(std::move(mpirun)),
        runner_(MakeSystemCommandRunner()),
        down_(state_.hosts.size(), false) {}

  std::vector<HostFacts> Prepare() override {
    // Provisioning (hashing the hosts' copies, mpirun --version, the ssh's
    // of the peer check) runs with the hosts' CPU uncapped, as a job's
    // start-up does: it is never measured, and at 0.02 core it took most
    // of its time waiting for the quota (bench/README.md,
    // bench_cluster_scale). The lock keeps it out of a job's capped part.
    std::lock_guard<std::mutex> lock(mutex_);
    QuotaLift lift(state_, static_cast<int>(state_.hosts.size()));
    std::vector<HostFacts> facts = ssh_->Prepare();
    for (HostFacts& host : facts) host.provider = "cluster";
    return facts;
  }

  std::string TrainerSha256() const override { return ssh_->TrainerSha256(); }

  int max_concurrent_runs() const override { return 1; }

  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override {
    std::lock_guard<std::mutex> lock(mutex_);
    LaunchResult failed;
    if (spec.ranks > static_cast<int>(state_.hosts.size())) {
      failed.failure_reason = "needs " + std::to_string(spec.ranks) + " ranks but cluster " + state_.name +
                              " has " + std::to_string(state_.hosts.size()) + " hosts of one slot";
      return failed;
    }
    const std::vector<size_t> chosen = ChooseHosts(spec.ranks, &failed);
    if (chosen.empty()) return failed;
    const double shaping = MonotonicNow();
    try {
      // The links as the state records them, not as this launcher left
      // them: another command (`cluster probe`, another sweep) may have
      // shaped them since, and one that failed half way records "unknown".
      state_.network = LoadClusterState(state_.state_dir).network;
      ReshapeCluster(state_, spec.network, *runner_);
    } catch (const ClusterError& e) {
      failed.failure_reason = "cannot shape the links to " + ProfileLabel(spec.network) + ": " + e.what();
      return failed;
    }
    const double link_shaping_s = MonotonicNow() - shaping;
    // One rank per host, the first `ranks` hosts that are up; the files are
    // the hosts' provisioned copies (the work directory is the same path on
    // every host). The hostfile lives in the attempt's output directory,
    // which goes with the attempt even when the orchestrator is killed
    // (run/output_dir.h).
    const std::filesystem::path hostfile_dir = spec.output_dir.empty() ? state_.state_dir : spec.output_dir;
    const std::string hostfile = (hostfile_dir / ("hostfile-" + spec.run_key)).string();
    std::vector<std::string> names;
    ClusterState used = state_;  // the hosts whose quota the job lifts
    used.hosts.clear();
    {
      std::ofstream out(hostfile, std::ios::trunc);
      for (const size_t i : chosen) {
        out << state_.hosts[i].address << " slots=1\n";
        names.push_back(state_.hosts[i].name);
        used.hosts.push_back(state_.hosts[i]);
      }
      if (!out.flush()) {
        failed.failure_reason = "cannot write " + hostfile;
        return failed;
      }
    }
    LocalLauncherOptions options;
    options.mpirun = mpirun_;
    options.mpirun_args = inventory_.mpi_args;
    options.mpirun_args.insert(options.mpirun_args.end(), {"--hostfile", hostfile});
    options.ranks_on_this_machine = false;
    options.trainer = inventory_.work_dir + "/dmlbench-trainer";
    // Decoded once per host, by the first run that reads the hosts' copy.
    options.dataset_cache_dir = inventory_.work_dir + "/dataset-cache";
    LaunchSpec remote = spec;
    if (!remote.dataset_dir.empty()) remote.dataset_dir = inventory_.work_dir + "/dataset";
    if (state_.cpu_cores > 0) remote.trainer_args.insert(remote.trainer_args.end(), {"--await-cpu-quota-s", "30"});
    // The ranks write their output in their hosts' own work directories,
    // fetched over SSH once the job has ended.
    if (!spec.output_dir.empty()) {
      options.ranks_output_dir = RemoteOutputDir(inventory_.work_dir, spec.run_key, spec.output_dir);
    }
    // A job starts (daemons, MPI_Init, the dataset) with the hosts' CPU
    // uncapped and runs capped from the trainer's first event (run_start) on:
    // start-up at 0.15 core took seconds per run and is never measured, and
    // the switch falls in the first epoch, which is warm-up and never used;
    // the trainer waits for it before epoch 2 (--await-cpu-quota-s above).
    // It is lifted again on the last run's run_end, the trainer's last line,
    // which follows every epoch and evaluation: what follows (MPI_Finalize,
    // the daemons' and ssh's exit, the output's collection) is never
    // measured, and at 0.15 core took 2.8 s per run, more than the steady
    // epochs. Between the runs of a job that trains several, it stays.
    QuotaLift lift(used, spec.ranks);
    std::optional<QuotaLift> exit_lift;
    MeasuredStart measured;
    int run_ends = 0;
    LaunchResult result = LocalLauncher(options).Launch(
        remote,
        [&](std::string_view line) {
          lift.Restore();
          measured.Observe(line);
          if (!exit_lift && IsRunEnd(line) && ++run_ends >= spec.runs) LiftForExit(used, spec.ranks, exit_lift);
          on_line(line);
        },
        cancel);
    if (result.failure_reason.empty()) result.failure_reason = QuotaCameBackLate(lift, measured);
    result.link_shaping_s = link_shaping_s;
    result.hosts = names;
    if (result.exit_code != 0 && !result.timed_out && !result.interrupted) FindLostHosts(chosen, &result);
    if (!options.ranks_output_dir.empty()) {
      std::vector<size_t> hosts;
      for (const size_t i : chosen) {
        if (!down_[i]) hosts.push_back(InventoryIndex(i));
      }
      CollectOutput(inventory_, hosts, options.ranks_output_dir, spec.output_dir);
    }
    std::error_code ignored;
    std::filesystem::remove(hostfile, ignored);
    return result;
  }

 private:
  // A warm-up so short that it ended before the quota came back leaves
  // the measured epochs uncapped (measured_start.h): such an attempt
  // measured another machine, and is failed to be run again. "" when the
  // quota was back in time.
  std::string QuotaCameBackLate(const QuotaLift& lift, const MeasuredStart& measured) const {
    if (!measured.unix_s() || lift.restored_unix_s() <= *measured.unix_s()) return "";
    std::ostringstream reason;
    reason.precision(3);
    reason << "the hosts' CPU quota of " << state_.cpu_cores << " cores came back " << std::fixed
           << (lift.restored_unix_s() - *measured.unix_s()) * 1e3
           << " ms after the measured epochs began (the warm-up epoch ended first), so they ran uncapped; "
              "the attempt does not count";
    return reason.str();
  }

  // The first `ranks` hosts that are up; none, with the reason in `failed`
  // (permanent: no later run can have more), when too few are.
  std::vector<size_t> ChooseHosts(int ranks, LaunchResult* failed) const {
    std::vector<size_t> chosen;
    std::string down;
    for (size_t i = 0; i < state_.hosts.size(); ++i) {
      if (down_[i]) {
        down += (down.empty() ? "" : ", ") + state_.hosts[i].name;
      } else if (static_cast<int>(chosen.size()) < ranks) {
        chosen.push_back(i);
      }
    }
    if (static_cast<int>(chosen.size()) == ranks) return chosen;
    failed->failure_reason = "needs " + std::to_string(ranks) + " ranks but " +
                             std::to_string(state_.hosts.size() - std::count(down_.begin(), down_.end(), true)) +
                             " hosts of cluster " + state_.name + " are up (lost in this sweep: " + down + ")";
    failed->permanent = true;
    return {};
  }

  // A host lost under mpirun shows up as a failing job: each host of the job
  // whose sshd no longer answers is named in the reason and left out for
  // the rest of the sweep, and the attempt is a host failure (launcher.h).
  void FindLostHosts(const std::vector<size_t>& chosen, LaunchResult* result) {
    for (const size_t i : chosen) {
      try {
        SshSession probe(MakeTarget(inventory_, inventory_.hosts[InventoryIndex(i)]));
      } catch (const SshError& error) {
        down_[i] = true;
        result->host_failure = true;
        result->failure_reason += "; lost " + std::string(error.what());
      }
    }
  }

  // The inventory's index of the cluster's host `i` (the inventory `cluster
  // up` wrote lists the same hosts; matched by name).
  size_t InventoryIndex(size_t i) const {
    for (size_t n = 0; n < inventory_.hosts.size(); ++n) {
      if (inventory_.hosts[n].name == state_.hosts[i].name) return n;
    }
    return i;
  }

  std::mutex mutex_;
  ClusterState state_;
  const Inventory inventory_;
  std::unique_ptr<Launcher> ssh_;
  const std::string mpirun_;
  std::unique_ptr<CommandRunner> runner_;
  std::vector<bool> down_;  // by index of state_.hosts: lost in this sweep
};

}  // namespace

std::unique_ptr<Launcher> MakeClusterLauncher(const std::string& state_dir, const std::string& trainer_path,
                                              const std::string& dataset_dir, const std::string& mpirun) {
  ClusterState state;
  try {
    state = LoadClusterState(state_dir);
  } catch (const ClusterError& e) {
    throw LaunchError(e.what());
  }
  Inventory inventory = LoadInventory(state.inventory_path());
  // The emulated hosts share this machine's CPUs and its kernel's links:
  // jobs at once would measure each other, not the hosts.
  if (inventory.max_concurrent_runs > 1) {
    throw LaunchError(state.inventory_path() + ": max_concurrent_runs = " +
                      std::to_string(inventory.max_concurrent_runs) +
                      ": the emulated cluster's hosts share this machine's CPUs and links, so jobs at once would "
                      "slow each other and their timings would not be the hosts'; set it to 1 (one job at a time)");
  }
  std::unique_ptr<Launcher> ssh = MakeSshLauncher(state.inventory_path(), trainer_path, dataset_dir);
  return std::make_unique<ClusterLauncher>(std::move(state), std::move(inventory), std::move(ssh), mpirun);
}

}  // namespace dmlbench
