#include "orchestrator/launch/cluster/cluster_launcher.h"

#include <mutex>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/launch/ssh/ssh_launcher.h"

namespace dmlbench {
namespace {

class ClusterLauncher : public Launcher {
 public:
  ClusterLauncher(ClusterState state, std::unique_ptr<Launcher> ssh)
      : state_(std::move(state)), ssh_(std::move(ssh)), runner_(MakeSystemCommandRunner()) {}

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
    try {
      ReshapeCluster(state_, spec.network, *runner_);
    } catch (const ClusterError& e) {
      LaunchResult result;
      result.failure_reason = "cannot shape the links to " + ProfileLabel(spec.network) + ": " + e.what();
      return result;
    }
    return ssh_->Launch(spec, on_line, cancel);
  }

 private:
  std::mutex mutex_;
  ClusterState state_;
  std::unique_ptr<Launcher> ssh_;
  std::unique_ptr<CommandRunner> runner_;
};

}  // namespace

std::unique_ptr<Launcher> MakeClusterLauncher(const std::string& state_dir, const std::string& trainer_path,
                                              const std::string& dataset_dir) {
  ClusterState state;
  try {
    state = LoadClusterState(state_dir);
  } catch (const ClusterError& e) {
    throw LaunchError(e.what());
  }
  std::unique_ptr<Launcher> ssh = MakeSshLauncher(state.inventory_path(), trainer_path, dataset_dir);
  return std::make_unique<ClusterLauncher>(std::move(state), std::move(ssh));
}

}  // namespace dmlbench
