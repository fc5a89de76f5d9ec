// A study for the report's tests and benchmark, built through the Store's
// own calls so that it is the same database, byte for byte, at every build.
// Small: ring, p2p and ps(k=1) at 1 to 4 workers (calibration at 1, 2 and
// 4) on 1 Gbit/s, the ring also at batch 50 and 200 and with overlap on.
// Paper-sized (the shape of experiments/paper-reproduction, settling and
// overlap): ps(k=1,2,4), p2p, ring, mpi at 1 to 7 workers on 100 Mbit/s and
// 1 Gbit/s, and every scheme at 4 workers with batch 50 and 200 and with
// overlap on. Both: 6 repetitions with a fixed spread, a warm-up epoch (its
// first iterations several times slower: ModelDatabase::IterationTimes gives
// every epoch its per-iteration times), probes of the profiles, and every
// model fitted and validated as `dmlbench model fit` and `model validate`
// do. Header-only; not thread-safe.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_REPORT_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_REPORT_FIXTURE_H_

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/model/interval.h"
#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/validation.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/model_fixture.h"

namespace dmlbench::testing {

// What a report test wants in its database.
struct ReportStudyOptions {
  bool fit_models = true;    // fit and validate every model
  bool paper_sized = false;
};

inline void BuildReportStudy(const std::string& path, const ReportStudyOptions& options = {}) {
  constexpr double kAlpha = 20e-6, kEfficiency = 0.9, kShare = 0.25;
  constexpr std::int64_t kParameters = 104938;  // the trainer's 784-128-32-10 network
  Store store(path);
  ModelDatabase db(store, kShare);
  const std::vector<double> bandwidths = options.paper_sized ? std::vector<double>{1e8, 1e9} : std::vector<double>{1e9};
  for (double bandwidth : bandwidths) db.AddProbe(bandwidth, kAlpha, bandwidth / 8 * kEfficiency);
  // Per iteration, the shape the corrected model assumes: the slower of the
  // critical path (compute, the exchange's alpha-beta terms) and each side's
  // CPU work (compute, per-byte, per-message and per-wait costs of the
  // exchange, counted over every overlap bucket by Traffic) at
  // the host's CPU share; overlap hides 30% of the link time. Returns
  // compute, iteration and each side's measured CPU time per iteration: its
  // work, or all its share allows where a CPU binds and the rank waits on
  // others. The warm-up epoch is 40% slower.
  auto iteration_s = [&](const RunParams& p) {
    const ModelConfig config{p, kFashionMnistTrainSamples, 0};
    const double bytes_per_s = config.network.bandwidth_bits_per_s / 8 * kEfficiency;
    const IterationTraffic t = Traffic(config, 4.0 * kParameters);
    const double compute = 2e-4 + 6e-6 * p.batch_size;
    const double paced = PacedBytes(t.link_bytes, t.link_bursts, config.network.bandwidth_bits_per_s);
    const double link = t.latency_steps * kAlpha + paced / bytes_per_s;
    const double critical = compute + link * (p.overlap ? 0.7 : 1.0);
    const double worker =
        compute + 1.2e-9 * t.worker_cpu_bytes + 30e-6 * t.worker_cpu_messages + 40e-6 * t.worker_cpu_waits;
    const double server = p.architecture == Architecture::kPs
                              ? 2e-4 + 1.2e-9 * t.server_cpu_bytes + 30e-6 * t.server_cpu_messages +
                                    40e-6 * t.server_cpu_waits
                              : 0.0;
    const double iteration = std::max({critical, worker / kShare, server / kShare});
    const bool binds = std::max(worker, server) / kShare > critical;
    const bool exchanges = p.workers > 1 || p.architecture == Architecture::kPs;
    const double worker_cpu = exchanges && binds && worker >= server ? kShare * iteration : worker;
    std::optional<double> server_cpu;
    if (p.architecture == Architecture::kPs) server_cpu = binds && server > worker ? kShare * iteration : server;
    return std::make_tuple(compute, iteration, worker_cpu, server_cpu);
  };
  auto add = [&](Architecture architecture, int servers, int workers, int batch, bool overlap, const std::string& split,
                 double bandwidth = 1e9) {
    RunParams p;
    p.architecture = architecture;
    p.servers = servers;
    p.workers = workers;
    p.batch_size = batch;
    p.overlap = overlap;
    p.bucket_bytes = 16384;
    p.network.name = bandwidth == 1e9 ? "1gbit" : "100mbit";
    p.network.bandwidth_bits_per_s = bandwidth;
    const auto [compute, iteration, worker_cpu, server_cpu] = iteration_s(p);
    const std::int64_t iterations = 60000 / (batch * workers);
    const double epoch = iteration * static_cast<double>(iterations);
    for (int rep = 0; rep < 6; ++rep) {
      p.repetition = rep;
      const double spread = 1 + 0.01 * ((rep * 7) % 5 - 2);
      db.AddRun(p, split, {1.4 * epoch, epoch * spread}, kParameters, iterations, compute, worker_cpu * spread,
                server_cpu ? std::optional<double>(*server_cpu * spread) : std::nullopt);
    }
  };
  if (options.paper_sized) {
    const std::vector<std::pair<Architecture, int>> schemes = {
        {Architecture::kPs, 1},   {Architecture::kPs, 2},   {Architecture::kPs, 4},
        {Architecture::kP2p, 0},  {Architecture::kRing, 0}, {Architecture::kMpi, 0}};
    for (double bandwidth : bandwidths) {
      for (const auto& [architecture, servers] : schemes) {
        for (int w = 1; w <= 7; ++w) {
          add(architecture, servers, w, 100, false, w == 1 || w == 2 || w == 4 ? "calibration" : "validation",
              bandwidth);
        }
      }
    }
    for (const auto& [architecture, servers] : schemes) {
      for (int b : {50, 200}) add(architecture, servers, 4, b, false, "validation");
      add(architecture, servers, 4, 100, true, "validation");
    }
    add(Architecture::kRing, 0, 1, 50, false, "calibration");
    add(Architecture::kRing, 0, 1, 200, false, "calibration");
  } else {
    for (const auto& [architecture, servers] : std::vector<std::pair<Architecture, int>>{
             {Architecture::kPs, 1}, {Architecture::kP2p, 0}, {Architecture::kRing, 0}}) {
      for (int w : {1, 2, 4}) add(architecture, servers, w, 100, false, "calibration");
      add(architecture, servers, 3, 100, false, "validation");
    }
    for (int b : {50, 200}) {
      add(Architecture::kRing, 0, 1, b, false, "calibration");
      add(Architecture::kRing, 0, 4, b, false, "validation");
    }
    add(Architecture::kRing, 0, 4, 100, true, "validation");
  }
  if (!options.fit_models) return;
  ModelData calibration = LoadModelData(store, {});
  std::erase_if(calibration.runs, [](const RunObservation& run) { return run.split != "calibration"; });
  // counts cannot be fitted on this small study: none of its runs has both
  // ends of a transfer shared on the path (ps with several servers), so its
  // link_balance_exponent is not identified. The report shows the models
  // that have a fit.
  const auto reported = [](const PerformanceModel& model) { return model.name() != "counts"; };
  for (const auto& model : Models()) {
    if (!reported(*model)) continue;
    ModelFitRecord fit = FitWithInterval(*model, calibration, {});
    fit.code_commit = "report-test";
    fit.created_unix_s = 100;
    store.AddModelFit(fit);
  }
  const ModelData all = LoadModelData(store, {});
  for (const auto& model : Models()) {
    if (!reported(*model)) continue;
    const ModelFitRecord fit = *store.LatestModelFit(std::string(model->name()));
    store.AddPredictions(Validate(*model, fit, all).predictions);
  }
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_REPORT_FIXTURE_H_
