#include "orchestrator/model/observations.h"

#include <algorithm>
#include <map>

#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

// Every complete run of `experiments` (all when empty) with its
// configuration, by run id; no times yet.
std::vector<RunObservation> ReadRuns(const Store& store, const std::vector<std::string>& experiments) {
  std::vector<RunObservation> observations;
  for (CompleteRun& complete : store.CompleteRuns(experiments)) {
    RunObservation run;
    run.run_id = complete.run_id;
    run.run_key = std::move(complete.run_key);
    run.split = std::move(complete.split);
    run.experiment = std::move(complete.experiment);
    run.parameters = complete.parameters;
    run.iterations_per_epoch = complete.iterations_per_epoch;
    run.config = ModelConfig{std::move(complete.params), complete.train_samples, complete.cpu_cores};
    observations.push_back(std::move(run));
  }
  return observations;
}

// Per run id: per steady epoch, the per-iteration means of forward,
// backward, update, exchange and exposed communication.
using EpochPhases = std::map<std::int64_t, std::vector<std::vector<double>>>;

// Each run's steady epochs into steady_epoch_s and warmup_included; returns
// their phases. Epochs EpochFault refuses are left out, and each run that
// had some gets a line in `left_out`.
EpochPhases ReadSteadyEpochs(const Store& store, std::vector<RunObservation>& runs,
                             std::vector<std::string>& left_out) {
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < runs.size(); ++i) index[runs[i].run_id] = i;
  std::map<std::int64_t, std::string> faults;  // per run id: its LeftOutText
  EpochPhases phases;
  for (const SteadyEpoch& epoch : store.SteadyEpochs(&faults)) {
    const auto it = index.find(epoch.run_id);
    if (it == index.end()) continue;
    RunObservation& run = runs[it->second];
    run.steady_epoch_s.push_back(epoch.wall_s);
    run.warmup_included = epoch.warmup_included;
    const double iterations = std::max<double>(1, static_cast<double>(epoch.iterations));
    phases[run.run_id].push_back({epoch.forward_mean_s / iterations, epoch.backward_mean_s / iterations,
                                  epoch.update_mean_s / iterations, epoch.exchange_mean_s / iterations,
                                  epoch.exposed_comm_mean_s / iterations});
  }
  for (const auto& [run_id, line] : faults) {
    if (index.count(run_id)) left_out.push_back(line);
  }
  return phases;
}

// The busiest rank's CPU time per iteration of each role, per run id and
// steady epoch.
struct CpuTimes {
  std::map<std::int64_t, std::vector<double>> worker, server;
};
CpuTimes ReadCpuTimes(const Store& store) {
  CpuTimes times;
  for (const BusiestCpu& rank : store.BusiestCpuPerIteration()) {
    (rank.role == "server" ? times.server : times.worker)[rank.run_id].push_back(rank.cpu_s_per_iteration);
  }
  return times;
}

// The runs with a steady epoch and an iteration, each with its medians and
// its phases' means over its steady epochs.
std::vector<RunObservation> Measured(std::vector<RunObservation> runs, EpochPhases& phases, const CpuTimes& cpu) {
  std::vector<RunObservation> kept;
  for (RunObservation& run : runs) {
    if (run.steady_epoch_s.empty() || run.iterations_per_epoch < 1) continue;
    run.epoch_s = Median(run.steady_epoch_s);
    run.iteration_s = run.epoch_s / static_cast<double>(run.iterations_per_epoch);
    std::vector<double> sums(5, 0);
    for (const auto& epoch : phases[run.run_id]) {
      for (std::size_t p = 0; p < 5; ++p) sums[p] += epoch[p];
    }
    const double count = static_cast<double>(phases[run.run_id].size());
    run.forward_s = sums[0] / count;
    run.backward_s = sums[1] / count;
    run.update_s = sums[2] / count;
    run.exchange_s = sums[3] / count;
    run.exposed_comm_s = sums[4] / count;
    if (const auto it = cpu.worker.find(run.run_id); it != cpu.worker.end()) run.worker_cpu_s = Median(it->second);
    if (const auto it = cpu.server.find(run.run_id); it != cpu.server.end()) run.server_cpu_s = Median(it->second);
    kept.push_back(std::move(run));
  }
  return kept;
}

// The latest calibration probe of each configured profile.
std::vector<LinkObservation> ReadLinks(const Store& store) {
  std::vector<LinkObservation> links;
  for (const LinkProbeRow& row : store.LatestCalibrationProbes()) {
    if (links.empty() || links.back().bandwidth_bits_per_s != row.bandwidth_bits_per_s ||
        links.back().latency_s != row.latency_s) {
      links.push_back(LinkObservation{row.bandwidth_bits_per_s, row.latency_s, row.alpha_s,
                                      row.bandwidth_bytes_per_s, {}});
    }
    links.back().probe_ids.push_back(row.link_probe_id);
  }
  return links;
}

}  // namespace

ModelData LoadModelData(const Store& store, const std::vector<std::string>& experiments) {
  ModelData data;
  std::vector<RunObservation> runs = ReadRuns(store, experiments);
  EpochPhases phases = ReadSteadyEpochs(store, runs, data.left_out);
  data.runs = Measured(std::move(runs), phases, ReadCpuTimes(store));
  data.links = ReadLinks(store);
  return data;
}

std::optional<LinkObservation> FindLink(const std::vector<LinkObservation>& links, const ModelConfig& config) {
  for (const LinkObservation& link : links) {
    if (link.bandwidth_bits_per_s == config.network.bandwidth_bits_per_s && link.latency_s == config.network.latency_s) {
      return link;
    }
  }
  return std::nullopt;
}

}  // namespace dmlbench
