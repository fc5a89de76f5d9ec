#include "orchestrator/model/observations.h"

#include <map>
#include <sstream>

#include "orchestrator/core/statistics.h"

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

}  // namespace

ModelData LoadModelData(const Store& store, const std::vector<std::string>& experiments) {
  ModelData data;
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
  std::map<std::int64_t, std::size_t> index;
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
    index[run.run_id] = data.runs.size();
    data.runs.push_back(std::move(run));
  }

  const QueryResult epochs = store.Query(R"(
    SELECT s.run_id, s.wall_s, s.warmup_included, s.iterations,
           s.forward_mean_s, s.backward_mean_s, s.update_mean_s, s.exchange_mean_s, s.exposed_comm_mean_s
    FROM steady_epochs s ORDER BY s.run_id, s.epoch)");
  std::map<std::int64_t, std::vector<std::vector<double>>> phases;  // per run: per epoch, per-iteration phases
  for (const auto& row : epochs.rows) {
    const auto it = index.find(Integer(row[0]));
    if (it == index.end()) continue;
    RunObservation& run = data.runs[it->second];
    run.steady_epoch_s.push_back(Real(row[1]));
    run.warmup_included = Integer(row[2]) != 0;
    const double iterations = std::max<double>(1, static_cast<double>(Integer(row[3])));
    phases[run.run_id].push_back({Real(row[4]) / iterations, Real(row[5]) / iterations, Real(row[6]) / iterations,
                                  Real(row[7]) / iterations, Real(row[8]) / iterations});
  }
  // The busiest rank's CPU time of each role per steady epoch.
  const QueryResult cpu = store.Query(R"(
    SELECT s.run_id, p.role, max(p.cpu_s) / max(1, s.iterations)
    FROM steady_epochs s JOIN rank_phases p ON p.attempt_id = s.attempt_id AND p.epoch = s.epoch
    WHERE p.cpu_s IS NOT NULL
    GROUP BY s.run_id, s.epoch, p.role ORDER BY s.run_id, s.epoch)");
  std::map<std::int64_t, std::vector<double>> worker_cpu, server_cpu;
  for (const auto& row : cpu.rows) {
    (Textual(row[1]) == "server" ? server_cpu : worker_cpu)[Integer(row[0])].push_back(Real(row[2]));
  }
  std::vector<RunObservation> kept;
  for (RunObservation& run : data.runs) {
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
    if (const auto it = worker_cpu.find(run.run_id); it != worker_cpu.end()) run.worker_cpu_s = Median(it->second);
    if (const auto it = server_cpu.find(run.run_id); it != server_cpu.end()) run.server_cpu_s = Median(it->second);
    kept.push_back(std::move(run));
  }
  data.runs = std::move(kept);

  // The latest calibration probe of each configured profile.
  const QueryResult probes = store.Query(R"(
    SELECT p.link_probe_id, p.bandwidth_bits_per_s, p.latency_s, p.alpha_s, p.bandwidth_bytes_per_s, p.time_unix_s
    FROM link_probes p
    WHERE p.split = 'calibration' AND p.time_unix_s = (
      SELECT max(q.time_unix_s) FROM link_probes q
      WHERE q.split = 'calibration' AND q.bandwidth_bits_per_s = p.bandwidth_bits_per_s
        AND q.latency_s = p.latency_s)
    ORDER BY p.bandwidth_bits_per_s, p.latency_s, p.link_probe_id)");
  for (const auto& row : probes.rows) {
    const double bandwidth = Real(row[1]), latency = Real(row[2]);
    if (data.links.empty() || data.links.back().bandwidth_bits_per_s != bandwidth ||
        data.links.back().latency_s != latency) {
      data.links.push_back(LinkObservation{bandwidth, latency, Real(row[3]), Real(row[4]), {}});
    }
    data.links.back().probe_ids.push_back(Integer(row[0]));
  }
  return data;
}

std::optional<LinkObservation> FindLink(const std::vector<LinkObservation>& links, const ModelConfig& config) {
  for (const LinkObservation& link : links) {
    if (link.bandwidth_bits_per_s == config.bandwidth_bits_per_s && link.latency_s == config.latency_s) return link;
  }
  return std::nullopt;
}

}  // namespace dmlbench
