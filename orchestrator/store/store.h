// Store: the results database (tables and views in schemas/database.md,
// created by the numbered files of schemas/migrations/). The one module that
// uses SQLite: every other module reads and writes through these typed calls
// and sees only StoreError. Not thread-safe: one Store per thread; SQLite
// (WAL, busy timeout) arbitrates between processes.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_STORE_H_
#define DMLBENCH_ORCHESTRATOR_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// Any failure of the database. what() is "<db path>: <SQLite's message>";
// extended_code() is SQLite's extended result code (-1 when the error is
// not SQLite's own, e.g. a schema newer than this program).
class StoreError : public Error {
 public:
  StoreError(const std::string& message, int extended_code)
      : Error(message), extended_code_(extended_code) {}
  int extended_code() const { return extended_code_; }

 private:
  int extended_code_;
};

// Provenance of a run that is known before it starts (DESIGN.md section 5).
struct RunProvenance {
  std::string trainer_sha256;
  std::string dataset_sha256;
  std::optional<std::string> git_commit;  // repository holding the matrix file
  std::optional<bool> git_dirty;
};

struct StoredRun {
  std::int64_t run_id = 0;
  RunState status = RunState::kPending;
  std::string split;
  int attempts = 0;
  int failures = 0;  // attempts that failed or timed out (interrupted ones are not the run's doing)
  std::string failure_reason;
  std::vector<std::string> tags;  // sorted
  // Names of the experiments that planned it (experiment_runs), the one
  // that first did first, each name once.
  std::vector<std::string> experiments;
};

// A run as the database holds it: its parameters rebuilt from their columns
// and what the commands that choose stored runs (forget, logs, compare) show
// and filter on.
struct RunRecord {
  std::int64_t run_id = 0;
  std::string run_key;
  RunParams params;
  std::string split;
  RunState status = RunState::kPending;
  int attempts = 0;
  std::vector<std::string> tags;  // sorted
  // Names of the experiments that planned it (experiment_runs), the one
  // that first did first, each name once.
  std::vector<std::string> experiments;
  std::string trainer_sha256;
};

// A run as a sweep registers it (Store::AddExperimentRuns).
struct NewRun {
  const PlannedRun* run = nullptr;  // borrowed for the call
  std::string run_key;
  RunProvenance provenance;
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
struct RunEndRecord {
  std::string status;  // ok | error
  std::string error;
  std::string parameter_checksum;
  std::optional<double> total_wall_s;
  std::optional<std::int64_t> peak_rss_bytes;
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
};

// The next status of the run when an attempt that is not ok ends.
enum class RunDisposition { kRetry, kFailed, kInterrupted };

// What the summary table shows of a complete run, over its epochs.
struct RunMeasures {
  int epochs = 0;
  double epoch_s_mean = 0;
  double throughput_mean = 0;  // samples per second
  std::optional<double> final_test_accuracy;
};

// A fitted performance model as stored (schemas/migrations/003_model.sql):
// model_fits with its parameters, the calibration runs it used (with their
// residuals) and the probes it used.
struct ModelParameterRow {
  std::string name;
  double value = 0;
  std::optional<double> ci_low, ci_high;  // 95%; empty when not fitted
  std::string unit;
  std::string source;                     // fitted | probe | run_start | fixed
  std::string scope;                      // "" or what the value applies to (a profile, an architecture)
};
struct ModelFitRunRow {
  std::int64_t run_id = 0;
  double measured_iteration_s = 0;
  double fitted_iteration_s = 0;
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
  // The model's CPU account (schema version 12; nullopt / empty where it
  // keeps none): CPU s per iteration of the busiest worker and server, and
  // what sets the iteration ("path", "worker CPU", "server CPU"); beside it
  // the run's own reports, where its trainer gave them.
  std::optional<double> predicted_worker_cpu_s, predicted_server_cpu_s;
  std::string limited_by;
  std::optional<double> measured_worker_cpu_s, measured_server_cpu_s;
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

// SQL functions a caller adds to one connection, for what SQL lacks (the
// report's medians and their confidence intervals). A function that throws
// makes its query fail with the exception's message.
using ScalarFunction = std::function<Cell(const std::vector<Cell>& arguments)>;
// Called once per group with the arguments of each of its rows, in the
// order SQLite visits them; with no rows for an empty input.
using AggregateFunction = std::function<Cell(const std::vector<std::vector<Cell>>& rows)>;

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly, kReadOnlyScratch };

  // kReadWrite creates the file if needed and applies pending migrations; it
  // refuses a database of another program (tables but no dmlbench schema).
  // kReadOnly opens an existing database without writing to it, also on a
  // read-only file system; kReadOnlyScratch too, but allows temporary tables
  // and views (they live in the connection's own temporary database and
  // vanish with it). All refuse a database whose schema is newer than this
  // program.
  explicit Store(const std::string& path, Mode mode = Mode::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;
  // Highest migration this program knows (schemas/migrations/NNN_*.sql).
  static int KnownSchemaVersion();
  // The schema version from which runs.partition_bytes exists (migration
  // 10). A read-only store is never migrated: readers of an older one take
  // 0, for its runs all exchanged whole.
  static constexpr int kPartitionBytesVersion = 10;
  // The same for runs.pulls_in_turn (migration 13); older runs' servers all
  // sent at once (0).
  static constexpr int kPullsInTurnVersion = 13;
  // `r.COLUMN` of table runs as an SQL expression, or `0` where this
  // database's schema predates the column (partition_bytes,
  // pulls_in_turn), for readers of an older database.
  std::string RunsColumnOrZero(std::string_view column) const;
  // "SQLite <version>" of the library in use.
  static std::string LibraryVersion();

  // Returns the id of the experiment with this text, adding it if new.
  std::int64_t AddExperiment(const Experiment& experiment, double now_unix_s);
  // One transaction (or the open batch): the experiment (AddExperiment) and
  // each of `runs` (AddRun). Returns the experiment id and fills `run_ids`,
  // in the order of `runs`.
  std::int64_t AddExperimentRuns(const Experiment& experiment, const std::vector<NewRun>& runs,
                                 double now_unix_s, std::vector<std::int64_t>* run_ids);
  // Returns the id of a host row with exactly these facts, adding it if new.
  std::int64_t AddHost(const HostFacts& facts, double now_unix_s);
  // The CPU shares of hosts, each their `cpu_cores` tag as "%g" text ("0"
  // without one): of the hosts `host_ids`, and per run_id of the hosts of
  // every complete run's complete attempt.
  std::set<std::string> HostCpuShares(const std::vector<std::int64_t>& host_ids) const;
  std::map<std::int64_t, std::set<std::string>> CompleteRunCpuShares() const;

  // Runs with these keys that exist in the database, by key.
  std::unordered_map<std::string, StoredRun> FindRuns(const std::vector<std::string>& run_keys) const;
  // Adds a pending run unless its key exists, and makes it a member of the
  // experiment (a run belongs to every experiment text that planned it);
  // returns its id either way.
  std::int64_t AddRun(std::int64_t experiment_id, const PlannedRun& run, const std::string& run_key,
                      const RunProvenance& provenance);

  // Every run, by run_id.
  std::vector<RunRecord> Runs() const;
  // Gives a run these tags (those it has already are kept as they are).
  void TagRun(std::int64_t run_id, const std::vector<std::string>& tags, double now_unix_s);

  // What the runs with these ids hold.
  RunContents Contents(const std::vector<std::int64_t>& run_ids) const;
  // Removes `runs` and everything that belongs to them (attempts, epochs,
  // rank phases, iteration times, host links, tags, log rows, model
  // predictions) and records each in forgotten_runs with `filter` and the
  // time, in one transaction; then removes their directories in logs_dir()
  // (missing ones are no error). Throws StoreError, removing nothing, when a model fit used one
  // of them: a fit keeps the runs it rests on.
  void Forget(const std::vector<RunRecord>& runs, const std::string& filter, double now_unix_s);

  // Marks runs and attempts left `running` by an orchestrator that died as
  // interrupted. Call only while holding the run lock. Returns how many runs.
  int RecoverInterrupted(double now_unix_s);

  // Starts attempt number attempts+1 of a run: the run becomes `running`
  // and epochs stored by its earlier unsuccessful attempts are removed, so
  // that a run never holds two partial copies. Returns the attempt id.
  // The attempt records where in its sweep's order it ran, when known.
  struct SweepOrder {
    std::uint64_t seed = 0;
    int position = 0;                     // 0-based
  };
  std::int64_t BeginAttempt(std::int64_t run_id, double now_unix_s,
                            std::optional<SweepOrder> order = std::nullopt);
  // Group commit for bursts of events: between BeginBatch() and
  // CommitBatch() the writes below share one transaction instead of one each.
  // An open batch is rolled back if the Store is destroyed first.
  void BeginBatch();
  void CommitBatch();
  bool batch_open() const { return batch_open_; }

  void RecordRunStart(std::int64_t attempt_id, const RunStartRecord& record);
  // The epoch row, its per-rank rows and its per-iteration rows, in one
  // transaction (or the batch).
  void AddEpoch(std::int64_t run_id, std::int64_t attempt_id, const EpochRecord& record);
  void RecordRunEnd(std::int64_t attempt_id, const RunEndRecord& record);
  // One transaction: the attempt's outcome and the run's new status. With
  // outcome.status "ok" the run becomes complete (the attempt must have a
  // stored run_end with status ok, or StoreError is thrown); otherwise the
  // run follows `disposition`. host_ids link the attempt to the hosts table.
  void FinishAttempt(std::int64_t run_id, std::int64_t attempt_id, const AttemptOutcome& outcome,
                     RunDisposition disposition, const std::vector<std::int64_t>& host_ids);

  // The directory beside the database that holds the attempts' output:
  // "<path>.logs" (schemas/database.md).
  std::string logs_dir() const { return path_ + ".logs"; }
  // Compresses `logs` (plain files, each a rank's or mpirun's stream) into
  // logs_dir()/<run key>/attempt-<number>/ and records them with the
  // attempt, in one transaction. Throws StoreError naming a file it cannot
  // read or write.
  void KeepAttemptLogs(std::int64_t attempt_id, const std::vector<AttemptLog>& logs);
  // What KeepAttemptLogs kept of an attempt: by rank, stdout before stderr,
  // mpirun's stream last.
  std::vector<AttemptLog> AttemptLogs(std::int64_t attempt_id) const;
  // The attempts of a run, by number.
  std::vector<AttemptRecord> Attempts(std::int64_t run_id) const;

  // The rows of one link probe, in one transaction.
  void AddLinkProbe(const std::vector<LinkProbeRow>& rows);

  // A fit with everything it used, in one transaction; returns its id. The
  // database refuses (StoreError) a fit that used a validation run.
  std::int64_t AddModelFit(const ModelFitRecord& fit);
  // Predictions, in one transaction; a row for the same fit and run replaces
  // the old one. The database refuses a row whose split is not its run's.
  void AddPredictions(const std::vector<PredictionRow>& rows);
  // The most recent fit of `model` with its parameters, runs and probes, if any.
  std::optional<ModelFitRecord> LatestModelFit(const std::string& model) const;
  // The fit of that id, whichever model, likewise.
  std::optional<ModelFitRecord> ModelFitById(std::int64_t fit_id) const;

  // Means over the epochs of a complete run; nullopt for other runs.
  std::optional<RunMeasures> CompleteRunMeasures(std::int64_t run_id) const;

  // The steady epochs of every complete run (the steady_epochs view: its
  // completing attempt's epochs without the first, warm-up, unless that is
  // the only one), by run id and epoch.
  struct SteadyEpoch {
    std::int64_t run_id = 0;
    int epoch = 0;
    double wall_s = 0;
    bool warmup_included = false;  // a one-epoch run: its warm-up epoch is all there is
  };
  std::vector<SteadyEpoch> SteadyEpochs() const;

  // Free-form SQL (the `query` command): one statement, any the mode
  // allows; text after it other than white space and comments is refused.
  QueryResult Query(const std::string& sql) const;
  // Every statement of a script, rows discarded (the report's temporary
  // views); what the mode does not allow fails.
  void ExecuteScript(const std::string& sql);
  // Names of every table and view, tables first, each group by name.
  std::vector<std::string> TablesAndViews() const;

  // Adds a deterministic SQL function of `arguments` arguments to this
  // connection (replacing one of the same name and arity).
  void AddScalarFunction(const std::string& name, int arguments, ScalarFunction function);
  void AddAggregateFunction(const std::string& name, int arguments, AggregateFunction function);

 private:
  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
  bool batch_open_ = false;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_STORE_H_
