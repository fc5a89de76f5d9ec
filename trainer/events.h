// Events: the trainer's JSON Lines report, format version 1, exactly as
// schemas/trainer-events.md defines it (that file is the contract; this one
// only fills it). Owns the output stream; the trainer writes through it on
// rank 0 only. Not thread-safe.
#ifndef DMLBENCH_TRAINER_EVENTS_H_
#define DMLBENCH_TRAINER_EVENTS_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmlbench {

inline constexpr int kEventsFormatVersion = 1;

// The one exception type of this module: the events output failed.
class EventsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunConfig {
  std::string architecture;
  int servers = 0;
  int batch_size = 0;
  int epochs = 0;
  std::vector<int> hidden;
  double learning_rate = 0;
  std::uint64_t seed = 0;
  std::int64_t max_iterations_per_epoch = 0;
  std::int64_t warmup_iterations = 0;   // epoch 1's own cap; 0 = none
  bool overlap = false;
  std::uint64_t bucket_bytes = 0;
  std::uint64_t partition_bytes = 0;
  std::string dataset;   // directory or "synthetic"
  bool evaluate = true;
  bool pulls_in_turn = false;  // ps, 1 server, whole exchange: the server's pulls one worker at a time
};

struct LayerInfo {
  std::string name;      // "fc1", "fc2", ...
  int inputs = 0;
  int outputs = 0;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

struct RunStartEvent {
  double time_unix_s = 0;
  RunConfig config;
  std::uint64_t parameters = 0;
  std::vector<LayerInfo> layers;
  int world_size = 0;
  int workers = 0;
  int servers = 0;
  std::int64_t iterations_per_epoch = 0;
  std::int64_t train_samples = 0;
  std::int64_t test_samples = 0;
  std::string dataset_sha256;
  std::string mpi_library_version;
  std::vector<std::string> hosts;
  std::vector<std::string> roles;   // "worker" | "server"
  int threads = 1;
};

// What the CPU quota of a rank's cgroup did over an epoch (cgroup cpu.stat;
// trainer/cpu_quota.h): quota periods, those the group ran out of its quota
// in, and how long it was stopped.
struct RankQuotaStats {
  std::uint64_t periods = 0;
  std::uint64_t throttled_periods = 0;
  double throttled_s = 0;
};

// One rank's sums over an epoch.
struct RankEpochStats {
  int rank = 0;
  std::string role;   // "worker" | "server"
  double forward_s = 0;
  double backward_s = 0;
  double exchange_s = 0;
  double update_s = 0;
  double exposed_comm_s = 0;
  double comm_s = 0;
  double wait_s = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
  double cpu_s = 0;  // CPU time of the rank's process over the epoch's iterations
  std::optional<RankQuotaStats> quota;  // absent when the rank's cgroup has no CPU quota
};

struct EpochEvent {
  int epoch = 0;   // 1-based
  double start_unix_s = 0;   // rank 0's clock as the epoch's start barrier released it
  std::int64_t iterations = 0;
  std::int64_t samples = 0;
  double wall_s = 0;
  double loss = 0;
  std::optional<double> test_accuracy;
  double eval_s = 0;
  double overlap_ratio = 0;
  std::vector<RankEpochStats> ranks;   // index = rank; `phases` is derived from the workers
  // Rank 0's wall time of each iteration, microseconds; index i = iteration i + 1.
  std::vector<std::int64_t> iteration_wall_us;
};

// Where rank 0's time went, from the process's start to run_end; the parts
// add up to run_end's total_wall_s (schemas/trainer-events.md, run_end).
struct RunPhases {
  double mpi_init_s = 0;      // MPI_Init
  double dataset_load_s = 0;  // reading the data, until the slowest rank has it
  double setup_s = 0;         // model, scheme and ranks' facts, until run_start is written
  double epochs_s = 0;        // from run_start to the last epoch's event: epochs, evaluations, reports
  double teardown_s = 0;      // from the last epoch's event to run_end
};

struct RunEndEvent {
  std::string status;                       // "ok" | "error"
  std::string error;                        // written when status is "error"
  std::optional<std::string> parameter_checksum;
  double total_wall_s = 0;
  std::int64_t peak_rss_bytes = 0;
  std::optional<RunPhases> phases;          // written after a successful run
};

nlohmann::json ToJson(const RunStartEvent& event);
nlohmann::json ToJson(const EpochEvent& event);
nlohmann::json ToJson(const RunEndEvent& event);

// Writes one event per line and flushes it, so that a reader following the
// stream sees each event as soon as it happened.
class EventWriter {
 public:
  // `path` "-" is standard output. Throws EventsError if it cannot be opened.
  explicit EventWriter(const std::string& path);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Throws EventsError if the line cannot be written.
  void Write(const nlohmann::json& event);

 private:
  std::string path_;
  std::FILE* file_;   // owned unless it is stdout
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_EVENTS_H_
