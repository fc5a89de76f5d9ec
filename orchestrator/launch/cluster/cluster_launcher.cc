#include "orchestrator/launch/cluster/cluster_launcher.h"

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "orchestrator/launch/cluster/cgroup.h"
#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/cluster/measured_start.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/ssh/collect_output.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {
namespace {

class ClusterLauncher : public Launcher {
 public:
  ClusterLauncher(ClusterState state, Inventory inventory, std::unique_ptr<Launcher> ssh, std::string mpirun)
      : state_(std::move(state)),
        inventory_(std::move(inventory)),
        ssh_(std::move(ssh)),
        mpirun_(std::move(mpirun)),
        runner_(MakeSystemCommandRunner()) {}

  std::vector<HostFacts> Prepare() override {
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
    try {
      ReshapeCluster(state_, spec.network, *runner_);
    } catch (const ClusterError& e) {
      failed.failure_reason = "cannot shape the links to " + ProfileLabel(spec.network) + ": " + e.what();
      return failed;
    }
    // One rank per host, the first `ranks` hosts; the files are the hosts'
    // provisioned copies (the work directory is the same path on every host).
    const std::string hostfile = (std::filesystem::path(state_.state_dir) / ("hostfile-" + spec.run_key)).string();
    std::vector<std::string> names;
    {
      std::ofstream out(hostfile, std::ios::trunc);
      for (int i = 0; i < spec.ranks; ++i) {
        out << state_.hosts[i].address << " slots=1\n";
        names.push_back(state_.hosts[i].name);
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
    LaunchSpec remote = spec;
    if (!remote.dataset_dir.empty()) remote.dataset_dir = inventory_.work_dir + "/dataset";
    // The ranks write their output in their hosts' own work directories,
    // fetched over SSH once the job has ended.
    if (!spec.output_dir.empty()) {
      options.ranks_output_dir = RemoteOutputDir(inventory_.work_dir, spec.run_key, spec.output_dir);
    }
    // A job starts (daemons, MPI_Init, the dataset) with the hosts' CPU
    // uncapped and runs capped from the trainer's first event (run_start) on:
    // start-up at 0.15 core took seconds per run and is never measured, and
    // the switch falls in the first epoch, which is warm-up and never used.
    QuotaLift lift(state_, spec.ranks);
    MeasuredStart measured;
    LaunchResult result = LocalLauncher(options).Launch(
        remote,
        [&](std::string_view line) {
          lift.Restore();
          measured.Observe(line);
          on_line(line);
        },
        cancel);
    // A warm-up so short that it ended before the quota came back leaves
    // the measured epochs uncapped (measured_start.h): such an attempt
    // measured another machine, and is failed to be run again.
    if (result.failure_reason.empty() && measured.unix_s() && lift.restored_unix_s() > *measured.unix_s()) {
      std::ostringstream reason;
      reason.precision(3);
      reason << "the hosts' CPU quota of " << state_.cpu_cores << " cores came back "
             << std::fixed << (lift.restored_unix_s() - *measured.unix_s()) * 1e3
             << " ms after the measured epochs began (the warm-up epoch ended first), so they ran uncapped; "
                "the attempt does not count";
      result.failure_reason = reason.str();
    }
    result.hosts = names;
    if (!options.ranks_output_dir.empty()) {
      std::vector<size_t> hosts(static_cast<size_t>(spec.ranks));
      for (size_t i = 0; i < hosts.size(); ++i) hosts[i] = i;
      CollectOutput(inventory_, hosts, options.ranks_output_dir, spec.output_dir);
    }
    std::error_code ignored;
    std::filesystem::remove(hostfile, ignored);
    return result;
  }

 private:
  std::mutex mutex_;
  ClusterState state_;
  const Inventory inventory_;
  std::unique_ptr<Launcher> ssh_;
  const std::string mpirun_;
  std::unique_ptr<CommandRunner> runner_;
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
  std::unique_ptr<Launcher> ssh = MakeSshLauncher(state.inventory_path(), trainer_path, dataset_dir);
  return std::make_unique<ClusterLauncher>(std::move(state), std::move(inventory), std::move(ssh), mpirun);
}

}  // namespace dmlbench
