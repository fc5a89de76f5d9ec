// Records: the rows the Store reads and writes, as plain values (tables and
// views in schemas/database.md). They hold no connection and no SQLite type;
// the Store (store.h) fills and consumes them. Plain data: thread-safe to
// copy, not to share while one thread writes.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_RECORDS_H_
#define DMLBENCH_ORCHESTRATOR_STORE_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "orchestrator/core/enums.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/slurm_job.h"

namespace dmlbench {

// Provenance of a run that is known before it starts (DESIGN.md section 5).
struct RunProvenance {
  std::string trainer_sha256;
  std::string dataset_sha256;
  std::optional<std::string> git_commit;  // repository holding the matrix file
  std::optional<bool> git_dirty;
  std::string system;  // where the run is measured (part of its key); "" = not recorded (runs.system NULL)
};

// A run as the database holds it: its parameters rebuilt from their columns,
// its state, and what the commands that choose stored runs (plan, forget,
// logs, compare) show and filter on.
struct RunRecord {
  std::int64_t run_id = 0;
  std::string run_key;
  RunParams params;
  std::string split;
  RunState status = RunState::kPending;
  int attempts = 0;
  int failures = 0;  // attempts that failed or timed out (interrupted ones are not the run's doing)
  std::string failure_reason;
  std::vector<std::string> tags;  // sorted
  // Names of the experiments that planned it (experiment_runs), the one
  // that first did first, each name once.
  std::vector<std::string> experiments;
  std::string trainer_sha256;
  std::string system;  // where it is measured; "" = not recorded (stored before systems were)
};

// A run as a sweep registers it (Store::AddExperimentRuns).
struct NewRun {
  const PlannedRun* run = nullptr;  // borrowed for the call
  std::string run_key;
  RunProvenance provenance;
};

// Where in its sweep's order an attempt ran.
struct SweepOrder {
  std::uint64_t seed = 0;
  int position = 0;  // 0-based
};

// The trainer's run_start event (schemas/trainer-events.md).
struct RunStartRecord {
  std::string mpi_library_version;
  std::int64_t world_size = 0;
  std::int64_t parameters = 0;
  std::int64_t iterations_per_epoch = 0;
  std::int64_t train_samples = 0;
  std::int64_t test_samples = 0;
  std::string dataset_sha256;
  std::int64_t threads = 0;
};

struct PhaseStats {
  double max_s = 0, mean_s = 0, min_s = 0;
};

struct RankPhaseRecord {
  int rank = 0;
  std::string role;  // worker | server
  double forward_s = 0, backward_s = 0, exchange_s = 0, update_s = 0;
  double exposed_comm_s = 0, comm_s = 0, wait_s = 0;
  std::int64_t bytes_sent = 0, bytes_received = 0, messages_sent = 0;
  std::optional<double> cpu_s;  // absent from an older trainer's events
  // The CPU quota of the rank's cgroup over the epoch: quota periods, those
  // that ran out of quota, seconds stopped. Absent without a quota (and
  // from an older trainer); all three or none.
  std::optional<std::int64_t> quota_periods, throttled_periods;
  std::optional<double> throttled_s;
};

// The trainer's epoch event.
struct EpochRecord {
  int epoch = 0;
  std::int64_t iterations = 0;
  std::int64_t samples = 0;
  double wall_s = 0;
  double throughput_samples_per_s = 0;
  std::optional<double> loss;
  std::optional<double> test_accuracy;  // absent when not evaluated
  std::optional<double> eval_s;
  std::optional<double> overlap_ratio;
  PhaseStats forward, backward, exchange, update, exposed_comm, comm;
  std::vector<RankPhaseRecord> ranks;
  // Rank 0's wall time of each iteration, seconds; element i for iteration
  // i + 1. Empty when the trainer did not report them (an older trainer).
  std::vector<double> iteration_wall_s;
};

// The trainer's run_end event.
// Where the trainer's rank 0 spent total_wall_s (run_end's `phases`).
struct TrainerPhases {
  double mpi_init_s = 0, dataset_load_s = 0, setup_s = 0, epochs_s = 0, teardown_s = 0;
};

struct RunEndRecord {
  std::string status;  // ok | error
  std::string error;
  std::string parameter_checksum;
  std::optional<double> total_wall_s;
  std::optional<std::int64_t> peak_rss_bytes;
  std::optional<TrainerPhases> phases;  // absent from older trainers and failed runs
};

// One phase of an attempt (attempt_phases; the names are the table's CHECK).
struct PhaseTime {
  std::string phase;
  double seconds = 0;
};

// How an attempt ended, as the run loop decided it.
struct AttemptOutcome {
  AttemptState status = AttemptState::kRunning;  // how it ended: ok | failed | timed_out | interrupted
  std::optional<int> exit_code;
  std::string reason;  // one line, empty when ok
  std::string stderr_tail;
  std::string command_line;
  std::vector<std::string> hosts;
  bool host_failure = false;
  double end_unix_s = 0;
  std::string note;    // one line on what the numbers of an ok attempt hide; "" when none
  std::optional<SlurmJobFacts> slurm;  // the Slurm job its ranks ran in, if any
};

// The next status of the run when an attempt that is not ok ends.
enum class RunDisposition { kRetry, kFailed, kInterrupted };

// What the summary table shows of a complete run: its epochs, and the
// means over its steady ones (warm-up excluded, as in steady_epochs).
struct RunMeasures {
  int epochs = 0;
  double epoch_s_mean = 0;
  double throughput_mean = 0;  // samples per second
  std::optional<double> final_test_accuracy;
};

// A steady epoch of a complete run (the steady_epochs view: its completing
// attempt's epochs without the first, warm-up, unless that is the only one).
struct SteadyEpoch {
  std::int64_t run_id = 0;
  int epoch = 0;
  double wall_s = 0;
  bool warmup_included = false;  // a one-epoch run: its warm-up epoch is all there is
  std::int64_t iterations = 0;
  // Over the epoch's iterations, the mean over the workers of each phase's
  // total, seconds (the epoch event's phase means).
  double forward_mean_s = 0, backward_mean_s = 0, update_mean_s = 0, exchange_mean_s = 0,
         exposed_comm_mean_s = 0;
};

// A host's tags (hosts.tags_json), as the store read and checked them: a
// JSON object; each value's text (a string's own, any other its JSON).
struct HostTags {
  std::map<std::string, std::string> tags;
  double cpu_cores = 0;  // the cpu_cores tag (the emulated cluster's share of a core); 0 without one (uncapped)
};

// A complete run as the performance model reads it: its parameters, the
// experiment that first planned it, what its completing attempt's trainer
// reported at run_start, and the CPU share of the hosts it ran on.
struct CompleteRun {
  std::int64_t run_id = 0;
  std::string run_key;
  std::string split;
  std::string experiment;                // the experiment that first planned it (runs.experiment_id)
  RunParams params;
  std::int64_t parameters = 0;           // run_start: P
  std::int64_t iterations_per_epoch = 0;
  std::int64_t train_samples = 0;
  double cpu_cores = 0;                  // the largest cpu_cores tag of its hosts; 0 = none (uncapped)
};

// One steady epoch's busiest rank of a role: its CPU seconds per iteration.
struct BusiestCpu {
  std::int64_t run_id = 0;
  int epoch = 0;
  std::string role;                      // worker | server
  double cpu_s_per_iteration = 0;
};

// A fitted performance model as stored (schemas/migrations/003_model.sql):
// model_fits with its parameters, the calibration runs it used (with their
// residuals) and the probes it used.
struct ModelParameterRow {
  std::string name;
  double value = 0;
  std::optional<double> ci_low, ci_high;  // 95%; empty for a probe's value or one held
  std::string unit;
  std::string source;                     // fitted | measured | probe | run_start | fixed
  std::string scope;                      // "" or what the value applies to (a profile, an architecture)
};
struct ModelFitRunRow {
  std::int64_t run_id = 0;
  double measured_iteration_s = 0;
  double fitted_iteration_s = 0;
};
// A fit's prediction interval for one regime (schemas/migrations/
// 016_prediction_intervals.sql): a prediction p of an epoch time of that
// regime stands for [p·e^-log_half_width, p·e^+log_half_width] at `level`.
struct ModelIntervalRow {
  std::string scope;                      // "" = every regime, else a scheme ("ring", "ps k=2")
  double level = 0;                       // e.g. 0.9
  double log_half_width = 0;
  int configurations = 0;                 // left-out calibration configurations it rests on
  int beyond_workers = 0;                 // 0, or: for predictions of more workers (migration 18)
};
struct ModelFitRecord {
  std::int64_t fit_id = 0;                // set by the store
  std::string model;
  int model_version = 1;
  double created_unix_s = 0;
  std::string code_commit;
  std::string scope;                      // experiments fitted on, "" = all
  int points = 0;
  std::optional<double> residual_rms_s;
  std::vector<ModelParameterRow> parameters;
  std::vector<ModelFitRunRow> runs;
  std::vector<std::int64_t> probe_ids;
  std::vector<ModelIntervalRow> intervals;  // empty: the fit has no interval
};
// A prediction for one run (the predictions table).
struct PredictionRow {
  std::int64_t fit_id = 0;
  std::int64_t run_id = 0;
  std::string split;
  std::int64_t iterations_per_epoch = 0;
  double predicted_iteration_s = 0, predicted_epoch_s = 0;
  double compute_s = 0, update_s = 0, comm_s = 0, hidden_comm_s = 0;
  double measured_epoch_s = 0;
  double relative_error = 0;
  // The model's CPU account (nullopt / empty where it keeps none): CPU s
  // per iteration of the busiest worker and server, and what sets the
  // iteration ("path", "worker CPU", "server CPU"); beside it the run's own
  // reports, where its trainer gave them.
  std::optional<double> predicted_worker_cpu_s, predicted_server_cpu_s;
  std::string limited_by;
  std::optional<double> measured_worker_cpu_s, measured_server_cpu_s;
  // The fit's interval of predicted_epoch_s at interval_level; empty when
  // the fit has none.
  std::optional<double> interval_level, predicted_epoch_low_s, predicted_epoch_high_s;
};

// One stream an attempt printed: a rank's standard output or error, or
// mpirun's own standard error (no rank).
struct AttemptLog {
  std::optional<int> rank;
  std::string stream;       // "stdout" | "stderr"
  // To KeepAttemptLogs: the plain file to keep. From AttemptLogs: the kept
  // gzip file, relative to logs_dir().
  std::string file;
  std::int64_t bytes = 0;   // uncompressed size (from AttemptLogs)
};

// An attempt of a run as `logs` lists it.
struct AttemptRecord {
  std::int64_t attempt_id = 0;
  int number = 0;
  AttemptState status = AttemptState::kRunning;
  std::string reason;
  std::string note;         // AttemptOutcome::note; "" when none (and before schema version 15)
  std::string log_dir;      // relative to logs_dir(); "" when it kept no output
};

// What belongs to a set of runs, as `forget` counts it.
struct RunContents {
  std::int64_t attempts = 0;
  std::int64_t epochs = 0;
  std::int64_t log_files = 0;
  std::int64_t predictions = 0;       // model predictions for them (recomputed by `model validate`)
  std::vector<std::int64_t> fit_ids;  // model fits that used them, ascending
};

// Result of a free-form query: column names and typed cells.
using Cell = std::variant<std::nullptr_t, std::int64_t, double, std::string>;
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_RECORDS_H_
