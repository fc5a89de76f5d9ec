#include "orchestrator/model/observations.h"

#include <map>
#include <sstream>

#include "orchestrator/core/statistics.h"
#include "orchestrator/store/epoch_validity.h"

namespace dmlbench {
namespace {

double Real(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  return 0;
}

std::int64_t Integer(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return static_cast<std::int64_t>(*d);
  return 0;
}

std::string Textual(const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

std::vector<int> Widths(const std::string& hidden) {
  std::vector<int> widths;
  std::istringstream in(hidden);
  for (std::string part; std::getline(in, part, ',');) widths.push_back(std::stoi(part));
  return widths;
}

// SQL string literal.
std::string Literal(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string ExperimentFilter(const std::vector<std::string>& experiments) {
  if (experiments.empty()) return "";
  std::string list;
  for (const std::string& name : experiments) list += (list.empty() ? "" : ", ") + Literal(name);
  return " AND e.name IN (" + list + ")";
}

// Every complete run of `experiments` (all when empty) with its
// configuration, by run id; no times yet.
std::vector<RunObservation> ReadRuns(const Store& store, const std::vector<std::string>& experiments) {
  const QueryResult runs = store.Query(R"(
    SELECT r.run_id, r.run_key, r.split, e.name, r.architecture, r.workers, r.servers, r.batch_size, r.overlap,
           r.bucket_bytes, r.hidden, r.max_iterations_per_epoch, r.network_bandwidth_bits_per_s,
           r.network_latency_s, a.parameters, a.iterations_per_epoch, a.train_samples,
           (SELECT max(CAST(json_extract(h.tags_json, '$.cpu_cores') AS REAL))
              FROM attempt_hosts ah JOIN hosts h USING (host_id) WHERE ah.attempt_id = a.attempt_id),
           )" + store.RunsColumnOrZero("partition_bytes") + R"(, r.repetition, )" +
                               store.RunsColumnOrZero("pulls_in_turn") + R"(
    FROM runs r JOIN experiments e USING (experiment_id) JOIN attempts a ON a.attempt_id = r.complete_attempt_id
    WHERE r.status = 'complete')" + ExperimentFilter(experiments) + " ORDER BY r.run_id");
  std::vector<RunObservation> observations;
  for (const auto& row : runs.rows) {
    RunObservation run;
    run.run_id = Integer(row[0]);
    run.run_key = Textual(row[1]);
    run.split = Textual(row[2]);
    run.experiment = Textual(row[3]);
    run.config.architecture = FromText<Architecture>(Textual(row[4])).value_or(Architecture::kRing);
    run.config.workers = static_cast<int>(Integer(row[5]));
    run.config.servers = static_cast<int>(Integer(row[6]));
    run.config.batch_size = static_cast<int>(Integer(row[7]));
    run.config.overlap = Integer(row[8]) != 0;
    run.config.bucket_bytes = Integer(row[9]);
    run.config.hidden = Widths(Textual(row[10]));
    run.config.max_iterations_per_epoch = Integer(row[11]);
    run.config.bandwidth_bits_per_s = Real(row[12]);
    run.config.latency_s = Real(row[13]);
    run.parameters = Integer(row[14]);
    run.iterations_per_epoch = Integer(row[15]);
    run.config.train_samples = Integer(row[16]);
    run.config.cpu_cores = Real(row[17]);
    run.config.partition_bytes = Integer(row[18]);
    run.repetition = static_cast<int>(Integer(row[19]));
    run.config.pulls_in_turn = Integer(row[20]) != 0;
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
  const QueryResult epochs = store.Query(R"(
    SELECT s.run_id, s.wall_s, s.warmup_included, s.iterations,
           s.forward_mean_s, s.backward_mean_s, s.update_mean_s, s.exchange_mean_s, s.exposed_comm_mean_s,
           s.samples
    FROM steady_epochs s ORDER BY s.run_id, s.epoch)");
  EpochPhases phases;
  std::map<std::int64_t, std::pair<int, std::string>> faults;  // per run id: epochs left out, the first reason
  for (const auto& row : epochs.rows) {
    const auto it = index.find(Integer(row[0]));
    if (it == index.end()) continue;
    RunObservation& run = runs[it->second];
    if (const auto why = EpochFault(Real(row[1]), Integer(row[3]), Integer(row[9]))) {
      auto& [count, first] = faults[run.run_id];
      if (count++ == 0) first = *why;
      continue;
    }
    run.steady_epoch_s.push_back(Real(row[1]));
    run.warmup_included = Integer(row[2]) != 0;
    const double iterations = std::max<double>(1, static_cast<double>(Integer(row[3])));
    phases[run.run_id].push_back({Real(row[4]) / iterations, Real(row[5]) / iterations, Real(row[6]) / iterations,
                                  Real(row[7]) / iterations, Real(row[8]) / iterations});
  }
  for (const auto& [run_id, fault] : faults) {
    left_out.push_back(LeftOutText(fault.first, runs[index.at(run_id)].run_key, fault.second));
  }
  return phases;
}

// The busiest rank's CPU time per iteration of each role, per run id and
// steady epoch.
struct CpuTimes {
  std::map<std::int64_t, std::vector<double>> worker, server;
};
CpuTimes ReadCpuTimes(const Store& store) {
  const QueryResult cpu = store.Query(R"(
    SELECT s.run_id, p.role, max(p.cpu_s) / max(1, s.iterations)
    FROM steady_epochs s JOIN rank_phases p ON p.attempt_id = s.attempt_id AND p.epoch = s.epoch
    WHERE p.cpu_s IS NOT NULL
    GROUP BY s.run_id, s.epoch, p.role ORDER BY s.run_id, s.epoch)");
  CpuTimes times;
  for (const auto& row : cpu.rows) {
    (Textual(row[1]) == "server" ? times.server : times.worker)[Integer(row[0])].push_back(Real(row[2]));
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
  const QueryResult probes = store.Query(R"(
    SELECT p.link_probe_id, p.bandwidth_bits_per_s, p.latency_s, p.alpha_s, p.bandwidth_bytes_per_s, p.time_unix_s
    FROM link_probes p
    WHERE p.split = 'calibration' AND p.time_unix_s = (
      SELECT max(q.time_unix_s) FROM link_probes q
      WHERE q.split = 'calibration' AND q.bandwidth_bits_per_s = p.bandwidth_bits_per_s
        AND q.latency_s = p.latency_s)
    ORDER BY p.bandwidth_bits_per_s, p.latency_s, p.link_probe_id)");
  std::vector<LinkObservation> links;
  for (const auto& row : probes.rows) {
    const double bandwidth = Real(row[1]), latency = Real(row[2]);
    if (links.empty() || links.back().bandwidth_bits_per_s != bandwidth || links.back().latency_s != latency) {
      links.push_back(LinkObservation{bandwidth, latency, Real(row[3]), Real(row[4]), {}});
    }
    links.back().probe_ids.push_back(Integer(row[0]));
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
    if (link.bandwidth_bits_per_s == config.bandwidth_bits_per_s && link.latency_s == config.latency_s) return link;
  }
  return std::nullopt;
}

}  // namespace dmlbench
