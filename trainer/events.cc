#include "trainer/events.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace dmlbench {
namespace {

nlohmann::json Header(const char* kind) {
  return {{"event", kind}, {"format_version", kEventsFormatVersion}};
}

// max/mean/min over the worker ranks of one phase.
nlohmann::json Phase(const std::vector<RankEpochStats>& ranks, double RankEpochStats::*field) {
  double max = 0, sum = 0, min = std::numeric_limits<double>::infinity();
  int workers = 0;
  for (const RankEpochStats& rank : ranks) {
    if (rank.role != "worker") continue;
    const double value = rank.*field;
    max = std::max(max, value);
    min = std::min(min, value);
    sum += value;
    ++workers;
  }
  if (workers == 0) min = 0;
  return {{"max_s", max}, {"mean_s", workers ? sum / workers : 0.0}, {"min_s", min}};
}

}  // namespace

nlohmann::json ToJson(const RunStartEvent& event) {
  const RunConfig& c = event.config;
  nlohmann::json config = {
      {"architecture", c.architecture},
      {"servers", c.servers},
      {"batch_size", c.batch_size},
      {"epochs", c.epochs},
      {"hidden", c.hidden},
      {"learning_rate", c.learning_rate},
      {"seed", c.seed},
      {"max_iterations_per_epoch", c.max_iterations_per_epoch},
      {"warmup_iterations", c.warmup_iterations},
      {"overlap", c.overlap},
      {"bucket_bytes", c.bucket_bytes},
      {"partition_bytes", c.partition_bytes},
      {"dataset", c.dataset},
      {"evaluate", c.evaluate},
      {"pulls_in_turn", c.pulls_in_turn},
  };
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerInfo& layer : event.layers)
    layers.push_back({{"name", layer.name},
                      {"inputs", layer.inputs},
                      {"outputs", layer.outputs},
                      {"offset", layer.offset},
                      {"count", layer.count}});
  nlohmann::json json = Header("run_start");
  json["time_unix_s"] = event.time_unix_s;
  json["config"] = config;
  json["parameters"] = event.parameters;
  json["parameter_bytes"] = event.parameters * sizeof(float);
  json["layers"] = layers;
  json["world_size"] = event.world_size;
  json["workers"] = event.workers;
  json["servers"] = event.servers;
  json["iterations_per_epoch"] = event.iterations_per_epoch;
  json["train_samples"] = event.train_samples;
  json["test_samples"] = event.test_samples;
  json["dataset_sha256"] = event.dataset_sha256;
  json["mpi_library_version"] = event.mpi_library_version;
  json["hosts"] = event.hosts;
  json["roles"] = event.roles;
  json["threads"] = event.threads;
  return json;
}

nlohmann::json ToJson(const EpochEvent& event) {
  nlohmann::json json = Header("epoch");
  json["epoch"] = event.epoch;
  json["start_unix_s"] = event.start_unix_s;
  json["iterations"] = event.iterations;
  json["samples"] = event.samples;
  json["wall_s"] = event.wall_s;
  json["throughput_samples_per_s"] = event.wall_s > 0 ? event.samples / event.wall_s : 0.0;
  json["loss"] = event.loss;
  json["test_accuracy"] = event.test_accuracy ? nlohmann::json(*event.test_accuracy) : nullptr;
  json["eval_s"] = event.eval_s;
  json["phases"] = {
      {"forward", Phase(event.ranks, &RankEpochStats::forward_s)},
      {"backward", Phase(event.ranks, &RankEpochStats::backward_s)},
      {"exchange", Phase(event.ranks, &RankEpochStats::exchange_s)},
      {"update", Phase(event.ranks, &RankEpochStats::update_s)},
      {"exposed_comm", Phase(event.ranks, &RankEpochStats::exposed_comm_s)},
      {"comm", Phase(event.ranks, &RankEpochStats::comm_s)},
  };
  json["overlap_ratio"] = event.overlap_ratio;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankEpochStats& r : event.ranks) {
    nlohmann::json rank = {{"rank", r.rank},
                            {"role", r.role},
                            {"forward_s", r.forward_s},
                            {"backward_s", r.backward_s},
                            {"exchange_s", r.exchange_s},
                            {"update_s", r.update_s},
                            {"exposed_comm_s", r.exposed_comm_s},
                            {"comm_s", r.comm_s},
                            {"wait_s", r.wait_s},
                            {"bytes_sent", r.bytes_sent},
                            {"bytes_received", r.bytes_received},
                            {"messages_sent", r.messages_sent},
                            {"cpu_s", r.cpu_s}};
    if (r.quota) {
      rank["quota_periods"] = r.quota->periods;
      rank["throttled_periods"] = r.quota->throttled_periods;
      rank["throttled_s"] = r.quota->throttled_s;
    }
    ranks.push_back(std::move(rank));
  }
  json["ranks"] = ranks;
  json["iteration_wall_us"] = event.iteration_wall_us;
  return json;
}

nlohmann::json ToJson(const RunEndEvent& event) {
  nlohmann::json json = Header("run_end");
  json["status"] = event.status;
  if (event.status == "error") json["error"] = event.error;
  if (event.parameter_checksum) json["parameter_checksum"] = *event.parameter_checksum;
  json["total_wall_s"] = event.total_wall_s;
  json["peak_rss_bytes"] = event.peak_rss_bytes;
  if (event.phases) {
    const RunPhases& p = *event.phases;
    json["phases"] = {{"mpi_init_s", p.mpi_init_s},
                      {"dataset_load_s", p.dataset_load_s},
                      {"setup_s", p.setup_s},
                      {"epochs_s", p.epochs_s},
                      {"teardown_s", p.teardown_s}};
  }
  return json;
}

EventWriter::EventWriter(const std::string& path)
    : path_(path), file_(path == "-" ? stdout : std::fopen(path.c_str(), "w")) {
  if (!file_)
    throw EventsError("cannot open events file " + path + ": " + std::strerror(errno));
}

EventWriter::~EventWriter() {
  if (file_ != stdout) std::fclose(file_);
}

void EventWriter::Write(const nlohmann::json& event) {
  // Invalid UTF-8 (say, in a hostname) is replaced rather than thrown on;
  // non-finite numbers (a diverged loss) are written as null.
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw EventsError("cannot write events file " + path_ + ": " + std::strerror(errno));
}

}  // namespace dmlbench
