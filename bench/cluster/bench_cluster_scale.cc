// Provisioning and launch on many hosts, through the launcher `dmlbench run`
// uses on the emulated cluster (orchestrator/launch/cluster/
// cluster_launcher.h), against a cluster brought up beforehand
// (bench_cluster_scale.sh brings up 64 hosts). Times three things, each
// wall clock, total and per host:
//   first provisioning   the trainer and the dataset uploaded to every host
//   provisioning         unchanged hosts (upload check by sha256, host facts,
//                        the hosts reaching each other): what every sweep pays
//   launch               one trivial job, a rank on every host (mpirun
//                        starting its daemons over ssh and `true` as the
//                        trainer), start to exit
// Targets (issue 47): 64 hosts provisioned in <= 10 s, launched in <= 3 s.
//   bench_cluster_scale --state-dir DIR --trainer FILE [--dataset DIR] [--reps N]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/launch/cluster/cluster_launcher.h"
#include "orchestrator/launch/cluster/cluster_state.h"

namespace {

namespace bench = dmlbench::bench;

void PrintRow(const char* what, const std::vector<double>& seconds, size_t hosts) {
  const bench::Summary total = bench::Summarize(seconds);
  std::printf("%-20s total %s; per host %.1f ms\n", what, bench::Describe(total, 1, "s", 2).c_str(),
              total.median / static_cast<double>(hosts) * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  std::string state_dir;
  std::string trainer;
  std::string dataset;
  std::string trivial = "/bin/true";
  int reps = 5;
  CLI::App app("provisioning and launching on every host of an emulated cluster, total and per host");
  app.add_option("--state-dir", state_dir, "the cluster's state directory (`cluster up --state-dir`)")->required();
  app.add_option("--trainer", trainer, "the trainer binary provisioned")->required();
  app.add_option("--dataset", dataset, "the dataset directory provisioned");
  app.add_option("--job", trivial, "the program each rank of the launched job runs")->capture_default_str();
  bench::AddRepetitions(app, &reps);
  CLI11_PARSE(app, argc, argv);

  const size_t hosts = dmlbench::LoadClusterState(state_dir).hosts.size();
  const auto launcher = dmlbench::MakeClusterLauncher(state_dir, trainer, dataset);
  const double first = bench::TimeSeconds([&] { launcher->Prepare(); });
  const std::vector<double> provisioning = bench::Repeat(0, reps, [&] {
    return bench::TimeSeconds([&] { launcher->Prepare(); });
  });

  // The job's launcher has the trivial program as its trainer: provisioned
  // once (an upload), then launched on every host.
  const auto job = dmlbench::MakeClusterLauncher(state_dir, trivial);
  job->Prepare();
  dmlbench::LaunchSpec spec;
  spec.run_key = "scale";
  spec.ranks = static_cast<int>(hosts);
  spec.timeout_s = 300;
  const std::atomic<bool> cancel{false};
  int failed = 0;
  const std::vector<double> launch = bench::Repeat(1, reps, [&] {
    return bench::TimeSeconds([&] {
      const dmlbench::LaunchResult result = job->Launch(spec, [](std::string_view) {}, cancel);
      if (result.exit_code != 0) {
        std::fprintf(stderr, "launch failed: %s\n%s\n", result.failure_reason.c_str(), result.stderr_tail.c_str());
        ++failed;
      }
    });
  });

  std::printf("%zu hosts, median of %d\n", hosts, reps);
  PrintRow("first provisioning", {first}, hosts);
  PrintRow("provisioning", provisioning, hosts);
  PrintRow("launch", launch, hosts);
  std::printf("targets: provisioning <= 10 s, launch <= 3 s (64 hosts)\n");
  return failed == 0 ? 0 : 1;
}
