// FakeLauncher: a Launcher without processes, for unit tests of the run
// loop. Each Launch() asks the test's script what the job does — the event
// lines it prints and how it ends — and plays it back; a job may instead wait
// until it is cancelled. Records every spec it was given. With a pool
// (SetPool) it offers hosts and runs jobs at once, Launch() from several
// threads; the script is called under a lock. Header-only.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FAKE_LAUNCHER_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FAKE_LAUNCHER_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/launch/launcher.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench::testing {

// What one fake job does.
struct FakeJob {
  std::vector<std::string> lines;  // stdout lines, in order
  LaunchResult result;             // how it ends (hosts and command line are filled in)
  bool runs_until_cancelled = false;
  double hold_s = 0;               // in flight this long after its lines, unless cancelled
};

// A job whose mpirun exits with `status` after printing `lines`, with
// `stderr_tail` as its stderr.
inline FakeJob FailingJob(int status, std::vector<std::string> lines = {}, std::string stderr_tail = "") {
  FakeJob job;
  job.lines = std::move(lines);
  job.result.exit_code = status;
  job.result.failure_reason = "mpirun exited with status " + std::to_string(status);
  job.result.stderr_tail = std::move(stderr_tail);
  return job;
}

// The value of `--name` in a spec's trainer arguments ("" if absent).
inline std::string TrainerArg(const LaunchSpec& spec, const std::string& name) {
  for (size_t i = 0; i + 1 < spec.trainer_args.size(); ++i) {
    if (spec.trainer_args[i] == name) return spec.trainer_args[i + 1];
  }
  return "";
}

// What a trainer launched with `spec` reports of its run in run_start
// (synthetic data: the tests' matrices).
inline RunFacts FactsOf(const LaunchSpec& spec) {
  RunFacts facts;
  facts.architecture = TrainerArg(spec, "--architecture");
  facts.servers = std::stoi(TrainerArg(spec, "--servers"));
  facts.workers = spec.ranks - facts.servers;
  facts.batch_size = std::stoi(TrainerArg(spec, "--batch-size"));
  facts.epochs = std::stoi(TrainerArg(spec, "--epochs"));
  facts.dataset_sha256 = "synthetic:" + TrainerArg(spec, "--seed") + ":" + TrainerArg(spec, "--synthetic");
  return facts;
}

// A job that prints a valid run of the epochs `spec` asks for and exits 0.
inline FakeJob GoodJob(const LaunchSpec& spec) {
  const RunFacts facts = FactsOf(spec);
  FakeJob job;
  job.lines.push_back(RunStartLine(facts));
  for (int e = 1; e <= facts.epochs; ++e) job.lines.push_back(EpochLine(e));
  job.lines.push_back(RunEndLine());
  job.result.exit_code = 0;
  return job;
}

class FakeLauncher : public Launcher {
 public:
  using Script = std::function<FakeJob(const LaunchSpec& spec, int launch_number)>;

  explicit FakeLauncher(Script script) : script_(std::move(script)) {}

  std::vector<HostFacts> Prepare() override {
    std::vector<HostFacts> hosts;
    for (const LaunchHost& host : pool_.empty() ? std::vector<LaunchHost>{{"fake", 1}} : pool_) {
      HostFacts facts;
      facts.name = host.name;
      facts.provider = "local";
      facts.tags_json = host_tags_json_;
      hosts.push_back(facts);
    }
    return hosts;
  }
  // Hosts jobs may be given, `max_concurrent` jobs at once.
  void SetPool(std::vector<LaunchHost> hosts, int max_concurrent) {
    pool_ = std::move(hosts);
    max_concurrent_ = max_concurrent;
  }
  int max_concurrent_runs() const override { return max_concurrent_; }
  std::vector<LaunchHost> Hosts() const override { return pool_; }
  // Jobs in flight now, and the most at once so far.
  int in_flight() const { return in_flight_.load(); }
  int most_in_flight() const { return most_in_flight_.load(); }
  // The inventory tags of the fake host from the next Prepare() on.
  void SetHostTags(std::string tags_json) { host_tags_json_ = std::move(tags_json); }

  std::string TrainerSha256() const override { return trainer_sha256_; }
  // As if the trainer were rebuilt: TrainerSha256() answers `sha256` from now on.
  void SetTrainerSha256(std::string sha256) { trainer_sha256_ = std::move(sha256); }

  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override {
    FakeJob job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      specs_.push_back(spec);
      job = script_(spec, static_cast<int>(specs_.size()));
    }
    const int now = ++in_flight_;
    for (int most = most_in_flight_.load(); now > most && !most_in_flight_.compare_exchange_weak(most, now);) {
    }
    for (const std::string& line : job.lines) on_line(line);
    LaunchResult result = job.result;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(job.hold_s);
    while (std::chrono::steady_clock::now() < until && !cancel.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (job.runs_until_cancelled) {
      while (!cancel.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      result.interrupted = true;
      result.exit_code = 128 + 15;
      result.failure_reason = "interrupted";
    }
    result.hosts = spec.hosts.empty() ? std::vector<std::string>{"fake"} : spec.hosts;
    result.command_line = "fake-mpirun";
    --in_flight_;
    return result;
  }

  // Not while jobs are in flight.
  const std::vector<LaunchSpec>& specs() const { return specs_; }

 private:
  Script script_;
  std::mutex mutex_;
  std::vector<LaunchSpec> specs_;  // guarded by mutex_
  std::vector<LaunchHost> pool_;
  int max_concurrent_ = 1;
  std::atomic<int> in_flight_{0}, most_in_flight_{0};
  std::string trainer_sha256_ = std::string(64, 'f');
  std::string host_tags_json_ = "{}";
};

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FAKE_LAUNCHER_H_
