// Databases for the model stage's tests: complete runs stored through the
// Store's own calls, with epoch times the test chooses (e.g. generated from
// known model parameters), and link probes. Header-only; not thread-safe.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_MODEL_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_MODEL_FIXTURE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/store/store.h"
#include "common/sha256.h"

namespace dmlbench::testing {

class ModelDatabase {
 public:
  explicit ModelDatabase(Store& store, double cpu_cores = 0.25) : store_(store) {
    Experiment experiment;
    experiment.name = "model-test";
    experiment.source_path = "experiments/model-test.toml";
    experiment.source_text = "name = 'model-test'";
    experiment.source_sha256 = Sha256Hex(experiment.source_text);
    experiment_id_ = store_.AddExperiment(experiment, 1);
    HostFacts host;
    host.name = "h1";
    host.provider = "cluster";
    host.tags_json = "{\"cpu_cores\":\"" + std::to_string(cpu_cores) + "\"}";
    host_id_ = store_.AddHost(host, 1);
  }

  // A complete run of `params` with these epoch times (the first is warm-up);
  // forward and backward take `compute_s` per iteration in a 1:2 ratio, and
  // each epoch's iterations take the times IterationTimes gives them. With
  // `worker_cpu_s` (CPU seconds per iteration), rank 0 is a worker that
  // burned that much, and with `server_cpu_s` rank 1 a server.
  std::int64_t AddRun(const RunParams& params, const std::string& split, const std::vector<double>& epoch_s,
                      std::int64_t parameters = 104938, std::int64_t iterations = 0, double compute_s = 0,
                      std::optional<double> worker_cpu_s = std::nullopt,
                      std::optional<double> server_cpu_s = std::nullopt) {
    PlannedRun run{params, split};
    run.params.epochs = static_cast<int>(epoch_s.size());
    const std::string key = Sha256Hex("run " + std::to_string(++runs_));
    RunProvenance provenance{std::string(64, 't'), "synthetic:1:60000", std::nullopt, std::nullopt};
    const std::int64_t run_id = store_.AddRun(experiment_id_, run, key, provenance);
    const std::int64_t attempt = store_.BeginAttempt(run_id, 2);
    RunStartRecord start;
    start.world_size = params.ranks();
    start.parameters = parameters;
    start.train_samples = 60000;
    start.iterations_per_epoch =
        iterations > 0 ? iterations : 60000 / (static_cast<std::int64_t>(params.batch_size) * params.workers);
    store_.RecordRunStart(attempt, start);
    for (std::size_t e = 0; e < epoch_s.size(); ++e) {
      EpochRecord epoch;
      epoch.epoch = static_cast<int>(e + 1);
      epoch.iterations = start.iterations_per_epoch;
      epoch.samples = epoch.iterations * params.batch_size * params.workers;
      epoch.wall_s = epoch_s[e];
      epoch.throughput_samples_per_s = static_cast<double>(epoch.samples) / epoch_s[e];
      const double per_epoch_compute = compute_s * static_cast<double>(epoch.iterations);
      epoch.forward = {per_epoch_compute / 3, per_epoch_compute / 3, per_epoch_compute / 3};
      epoch.backward = {2 * per_epoch_compute / 3, 2 * per_epoch_compute / 3, 2 * per_epoch_compute / 3};
      epoch.iteration_wall_s = IterationTimes(epoch_s[e], epoch.iterations, e == 0);
      const double iterations_done = static_cast<double>(epoch.iterations);
      for (const auto& [role, cpu_s] : {std::pair{"worker", worker_cpu_s}, std::pair{"server", server_cpu_s}}) {
        if (!cpu_s) continue;
        RankPhaseRecord rank;
        rank.rank = static_cast<int>(epoch.ranks.size());
        rank.role = role;
        rank.cpu_s = *cpu_s * iterations_done;
        epoch.ranks.push_back(rank);
      }
      store_.AddEpoch(run_id, attempt, epoch);
    }
    RunEndRecord end;
    end.status = "ok";
    end.parameter_checksum = "feed";
    store_.RecordRunEnd(attempt, end);
    AttemptOutcome outcome;
    outcome.status = AttemptState::kOk;
    outcome.exit_code = 0;
    outcome.end_unix_s = 3;
    store_.FinishAttempt(run_id, attempt, outcome, RunDisposition::kFailed, {host_id_});
    // Where its time went: the epochs (the first is warm-up when more
    // follow), and fixed start-up and ingest.
    double steady_s = 0;
    for (std::size_t e = epoch_s.size() > 1 ? 1 : 0; e < epoch_s.size(); ++e) steady_s += epoch_s[e];
    std::vector<PhaseTime> phases = {{"launch", 0.5}, {"dataset_load", 0.25}, {"steady_epochs", steady_s},
                                     {"ingest", 0.125}};
    if (epoch_s.size() > 1) phases.push_back({"warmup_epochs", epoch_s[0]});
    store_.AddAttemptPhases(attempt, phases);
    return run_id;
  }

  // Rank 0's time of each of `iterations` iterations of an epoch that took
  // `epoch_s`, to the microsecond as the trainer reports them: a steady
  // epoch's vary by a few percent around their mean; a warm-up epoch's start
  // about five times slower and settle within a tenth of the epoch (for a
  // warm-up epoch 1.4 times a steady one, they settle at the steady mean).
  // Together they take the epoch time.
  static std::vector<double> IterationTimes(double epoch_s, std::int64_t iterations, bool warmup) {
    std::vector<double> times(static_cast<std::size_t>(iterations));
    const double settle = std::max(1.0, static_cast<double>(iterations) / 10);
    double sum = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      times[i] = 1 + 0.03 * static_cast<double>(static_cast<int>(i * 7 % 5) - 2);
      if (warmup) times[i] += 4 * std::exp(-static_cast<double>(i) / settle);
      sum += times[i];
    }
    for (double& t : times) t = std::round(t * epoch_s / sum * 1e6) / 1e6;
    return times;
  }

  // A probe of a profile: every row carries the fit alpha, B.
  void AddProbe(double bandwidth_bits_per_s, double alpha_s, double bytes_per_s, double time_unix_s = 10) {
    std::vector<LinkProbeRow> rows;
    for (std::int64_t bytes : {1, 1024, 1 << 20}) {
      rows.push_back({"p", bandwidth_bits_per_s, 0, bytes, 10, alpha_s + bytes / bytes_per_s, alpha_s, bytes_per_s,
                      time_unix_s, "h1,h2"});
    }
    store_.AddLinkProbe(rows);
  }

 private:
  Store& store_;
  std::int64_t experiment_id_ = 0;
  std::int64_t host_id_ = 0;
  int runs_ = 0;
};

// A small sweep for judging a model: ring and mpi on 1 Gbit/s (probed), at
// 1, 3, ..., 9 workers for calibration (3 runs each) and 2, 4, 6, 8 for
// validation (6 runs each, repetitions 0-5); each run's epochs are its
// scheme's line, 4 s + 0.3 s (ring) or 0.5 s (mpi) per worker, times a
// lognormal factor of 1 % drawn from a fixed seed.
inline void AddLinearSweep(Store& store) {
  ModelDatabase db(store);
  db.AddProbe(1e9, 12e-6, 1.25e8);
  std::mt19937 random(45);
  std::normal_distribution<double> noise(0, 0.01);
  for (const Architecture architecture : {Architecture::kRing, Architecture::kMpi}) {
    const double slope = architecture == Architecture::kRing ? 0.3 : 0.5;
    for (int workers = 1; workers <= 9; ++workers) {
      const bool calibration = workers % 2 == 1;
      for (int repetition = 0; repetition < (calibration ? 3 : 6); ++repetition) {
        RunParams p;
        p.architecture = architecture;
        p.workers = workers;
        p.batch_size = 100;
        p.repetition = repetition;
        p.network.name = "1gbit";
        p.network.bandwidth_bits_per_s = 1e9;
        const double epoch = (4 + slope * workers) * std::exp(noise(random));
        db.AddRun(p, calibration ? "calibration" : "validation", {1.4 * epoch, epoch, epoch});
      }
    }
  }
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_MODEL_FIXTURE_H_
