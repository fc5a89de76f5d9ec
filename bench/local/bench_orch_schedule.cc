// Cluster utilisation of the run loop's schedule: a sweep of 200 runs of
// 1 to 8 ranks (ring, workers 1..8 × 25 batch sizes, shuffled) on a
// 64-host inventory of one slot each, through the real Runner, Schedule and
// Store (a real SQLite file), with hosts whose trainer sleeps: each job
// prints the events of its run, epoch 1 (warm-up) 10 ms and 4 steady epochs
// of 25 to 100 ms (by batch size), sleeping each, so that the stored
// steady epochs are the time the hosts spent. Utilisation = Σ ranks ×
// steady-epoch seconds / (64 × sweep wall seconds), as `run` prints it.
// One job at a time (max_concurrent_runs = 1, the runner before jobs ran
// at once) and 64 at once, in turn, `--reps` times; medians and their
// ratio. Nothing runs on the hosts but sleeps: the figure is the
// schedule's and the orchestrator's, not a trainer's.
//   build-dir/bench/bench_orch_schedule [--reps N]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/run/runner.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/fake_launcher.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace {

namespace bench = dmlbench::bench;
using dmlbench::testing::FakeJob;
using dmlbench::testing::FakeLauncher;

constexpr int kHosts = 64;
constexpr double kTarget = 0.80;

std::string Matrix() {
  std::string batches = "[";
  for (int b = 1; b <= 25; ++b) batches += std::to_string(8 * b) + (b < 25 ? ", " : "]");
  return "[experiment]\nname = \"schedule\"\n[defaults]\ndataset = \"synthetic\"\nepochs = 5\n"
         "max_iterations_per_epoch = 5\n[matrix]\narchitecture = [\"ring\"]\nworkers = [1, 2, 3, 4, 5, 6, 7, 8]\n"
         "batch_size = " + batches + "\n[execution]\norder_seed = 7\ntimeout_s = 60\n"
         "[split]\ncalibration = { workers = [1] }\n";
}

// A host's trainer that sleeps: a valid run whose epochs took what it slept.
class SleepLauncher : public FakeLauncher {
 public:
  SleepLauncher()
      : FakeLauncher([](const dmlbench::LaunchSpec&, int) { return FakeJob{}; }) {}

  dmlbench::LaunchResult Launch(const dmlbench::LaunchSpec& spec,
                                const std::function<void(std::string_view line)>& on_line,
                                const std::atomic<bool>& cancel) override {
    dmlbench::testing::RunFacts facts = dmlbench::testing::FactsOf(spec);
    facts.iterations_per_epoch = 5;
    on_line(dmlbench::testing::RunStartLine(facts));
    const double steady_s = 0.025 * (1 + facts.batch_size / 67.0);
    for (int epoch = 1; epoch <= facts.epochs && !cancel.load(); ++epoch) {
      const double wall_s = epoch == 1 ? 0.010 : steady_s;
      std::this_thread::sleep_for(std::chrono::duration<double>(wall_s));
      on_line(dmlbench::testing::EpochLine(epoch, spec.ranks, wall_s));
    }
    on_line(dmlbench::testing::RunEndLine());
    dmlbench::LaunchResult result;
    result.exit_code = 0;
    result.hosts = spec.hosts;
    result.command_line = "sleep";
    return result;
  }
};

struct Sweep {
  double wall_s = 0;
  double utilisation = 0;
  int complete = 0;
  std::string failure;  // a reason of a run that did not complete
};

Sweep RunSweep(int max_concurrent) {
  dmlbench::testing::TempDir dir;
  dmlbench::testing::WriteFile(dir / "matrix.toml", Matrix());
  const dmlbench::Experiment experiment = dmlbench::LoadExperiment(dir / "matrix.toml");
  SleepLauncher launcher;
  std::vector<dmlbench::LaunchHost> hosts;
  for (int i = 1; i <= kHosts; ++i) hosts.push_back({"h" + std::to_string(i), 1});
  launcher.SetPool(hosts, max_concurrent);
  const std::string db = dir / "results.db";
  const dmlbench::RunLock lock(db);
  dmlbench::Store store(db);
  const std::atomic<bool> cancel{false};
  const dmlbench::SweepReport report = dmlbench::Runner(store, launcher, {}).Run(experiment, lock, cancel);
  Sweep sweep{report.time.wall_s, report.time.utilisation(), report.complete, ""};
  for (const dmlbench::RunReport& run : report.runs) {
    if (run.item.state != dmlbench::RunState::kComplete) sweep.failure = run.item.failure_reason;
  }
  return sweep;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  CLI::App app("utilisation of a 200-run sweep on 64 sleeping hosts: one job at a time against 64 at once");
  bench::AddRepetitions(app, &reps, 1);
  CLI11_PARSE(app, argc, argv);
  std::vector<double> one_wall, one_use, many_wall, many_use;
  for (int rep = 0; rep < reps; ++rep) {
    for (const int concurrent : {1, kHosts}) {
      const Sweep sweep = RunSweep(concurrent);
      if (sweep.complete != 200) {
        std::fprintf(stderr, "expected 200 complete runs, got %d: %s\n", sweep.complete, sweep.failure.c_str());
        return 1;
      }
      std::printf("rep %d, %2d job(s) at once: sweep %.1f s, utilisation %.1f%%\n", rep + 1, concurrent,
                  sweep.wall_s, 100 * sweep.utilisation);
      (concurrent == 1 ? one_wall : many_wall).push_back(sweep.wall_s);
      (concurrent == 1 ? one_use : many_use).push_back(sweep.utilisation);
    }
  }
  const double one = bench::Summarize(one_use).median, many = bench::Summarize(many_use).median;
  std::printf("200 runs of 1-8 ranks on %d hosts, medians of %d: one job at a time %.1f s, utilisation %.1f%%; "
              "%d at once %.1f s, utilisation %.1f%% (%.1fx); target >= %.0f%%: %s\n",
              kHosts, reps, bench::Summarize(one_wall).median, 100 * one, kHosts, bench::Summarize(many_wall).median,
              100 * many, many / one, 100 * kTarget, many >= kTarget ? "met" : "MISSED");
  return many >= kTarget ? 0 : 1;
}
