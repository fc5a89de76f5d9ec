// Store: the results database (tables and views in schemas/database.md,
// created by the numbered files of schemas/migrations/). The one module that
// uses SQLite: every other module reads and writes through these typed calls
// on the records of records.h and sees only StoreError. The calls are
// implemented by table group: store.cc (opening, migrations, batches),
// runs_and_attempts.cc, events_and_epochs.cc, hosts_and_probes.cc,
// fits_and_predictions.cc, sql.cc (free SQL and SQL functions). Not
// thread-safe: one Store per thread; SQLite (WAL, busy timeout) arbitrates
// between processes.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_STORE_H_
#define DMLBENCH_ORCHESTRATOR_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/store/records.h"

namespace dmlbench {

// Any failure of the database. what() is "<db path>: <SQLite's message>";
// extended_code() is SQLite's extended result code (-1 when the error is
// not SQLite's own, e.g. a schema newer than this program).
class StoreError : public Error {
 public:
  StoreError(const std::string& message, int extended_code)
      : Error(message), extended_code_(extended_code) {}
  int extended_code() const { return extended_code_; }
  // Whether SQLite refused a write for breaking a rule of the schema (CHECK,
  // NOT NULL, UNIQUE, a key, a trigger's RAISE) rather than for a failure
  // of the database itself: the data was wrong, the database is fine.
  bool constraint_violation() const;

 private:
  int extended_code_;
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
  // read-only file system and in another user's directory (open_note());
  // kReadOnlyScratch too, but allows temporary tables
  // and views (they live in the connection's own temporary database and
  // vanish with it). All refuse a database whose schema is newer than this
  // program.
  explicit Store(const std::string& path, Mode mode = Mode::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  // One line for the person reading when opening read-only had to give
  // something up, else "": a database in a directory this user cannot
  // write (another user's) is read as an unchanging file, which misses
  // what a writer adds meanwhile. The commands print it on stderr.
  const std::string& open_note() const { return open_note_; }
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
  // The schema version from which attempts.note exists (migration 14);
  // readers of an older database read no notes.
  static constexpr int kAttemptNotesVersion = 15;
  // The schema version from which fits carry prediction intervals
  // (model_intervals, migration 16); an older database's fits have none.
  static constexpr int kIntervalsVersion = 16;
  // From which a fit's interval may have rows for predictions beyond its
  // calibration's workers (model_intervals.beyond_workers, migration 18);
  // an older database's rows are all for every prediction (0).
  static constexpr int kExtrapolationIntervalsVersion = 18;
  // `r.COLUMN` of table runs as an SQL expression, or `0` where this
  // database's schema predates the column (partition_bytes,
  // pulls_in_turn), for readers of an older database.
  std::string RunsColumnOrZero(std::string_view column) const;
  // "SQLite <version>" of the library in use.
  static std::string LibraryVersion();

  // A group commit, with the semantics of SQLiteCpp's Transaction: while a
  // Batch lives, the writes of this Store that say "(or the batch)" share
  // its one transaction instead of committing one each. Commit() keeps
  // them; the destructor rolls back whatever was not committed (also during
  // stack unwinding) and never throws. One at a time per Store; the Store
  // must outlive it.
  class Batch {
   public:
    // Throws StoreError when a batch of `store` is open already.
    explicit Batch(Store& store);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

    // Commits the writes made since the batch began. Afterwards the batch
    // is closed, also when the commit fails (StoreError; then none of them
    // is kept). Throws StoreError when it is closed already.
    void Commit();

   private:
    Store& store_;
    bool open_ = true;
  };
  // True while a Batch of this Store is open.
  bool batch_open() const;

  // ---- experiments, runs and attempts (runs_and_attempts.cc) ----

  // Returns the id of the experiment with this text, adding it if new.
  std::int64_t AddExperiment(const Experiment& experiment, double now_unix_s);
  // One transaction (or the batch): the experiment (AddExperiment) and each
  // of `runs` (AddRun). Returns the experiment id and fills `run_ids`, in
  // the order of `runs`.
  std::int64_t AddExperimentRuns(const Experiment& experiment, const std::vector<NewRun>& runs,
                                 double now_unix_s, std::vector<std::int64_t>* run_ids);

  // Runs with these keys that exist in the database, by key.
  std::unordered_map<std::string, RunRecord> FindRuns(const std::vector<std::string>& run_keys) const;
  // Adds a pending run unless its key exists, and makes it a member of the
  // experiment (a run belongs to every experiment text that planned it);
  // returns its id either way.
  std::int64_t AddRun(std::int64_t experiment_id, const PlannedRun& run, const std::string& run_key,
                      const RunProvenance& provenance);

  // Every run, by run_id.
  std::vector<RunRecord> Runs() const;
  // The complete runs whose first experiment is one of `experiments` (every
  // complete run when empty), by run_id.
  std::vector<CompleteRun> CompleteRuns(const std::vector<std::string>& experiments) const;
  // Gives a run these tags (those it has already are kept as they are).
  void TagRun(std::int64_t run_id, const std::vector<std::string>& tags, double now_unix_s);
  // Gives each of these runs the tag, recorded as given at `now_unix_s`, in
  // one transaction (`dmlbench tag`); a run that has it already keeps it
  // with its first time. Returns how many had it already.
  int TagRuns(const std::vector<std::int64_t>& run_ids, const std::string& tag, double now_unix_s);
  // Takes the tag from each of these runs, in one transaction (`dmlbench
  // untag`). Returns how many had it.
  int UntagRuns(const std::vector<std::int64_t>& run_ids, const std::string& tag);

  // What the runs with these ids hold.
  RunContents Contents(const std::vector<std::int64_t>& run_ids) const;
  // Removes `runs` and everything that belongs to them (attempts and their
  // phases, epochs, rank phases, iteration times, host links, tags, log rows, model
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
  std::int64_t BeginAttempt(std::int64_t run_id, double now_unix_s,
                            std::optional<SweepOrder> order = std::nullopt);
  // One transaction: the attempt's outcome and the run's new status. With
  // outcome.status "ok" the run becomes complete (the attempt must have a
  // stored run_end with status ok, or StoreError is thrown); otherwise the
  // run follows `disposition`. host_ids link the attempt to the hosts table.
  void FinishAttempt(std::int64_t run_id, std::int64_t attempt_id, const AttemptOutcome& outcome,
                     RunDisposition disposition, const std::vector<std::int64_t>& host_ids);
  // Completes a finished attempt with what its job was, when that was known
  // only after it was finished (a job that trains several runs tells its
  // exit status, command line and hosts when it ends): mpirun's exit
  // status, the command line, `hosts` (names) and host_ids, as
  // FinishAttempt stores them.
  void AddAttemptJob(std::int64_t attempt_id, std::optional<int> exit_code, const std::string& command_line,
                     const std::vector<std::string>& hosts, const std::vector<std::int64_t>& host_ids,
                     const std::optional<SlurmJobFacts>& slurm = std::nullopt);
  // The attempts of a run, by number.
  std::vector<AttemptRecord> Attempts(std::int64_t run_id) const;

  // Where an attempt's time went (attempt_phases), in one transaction (or
  // the batch); each phase at most once per attempt.
  void AddAttemptPhases(std::int64_t attempt_id, const std::vector<PhaseTime>& phases);
  // Those of an attempt, by phase name.
  std::vector<PhaseTime> AttemptPhases(std::int64_t attempt_id) const;

  // The directory beside the database that holds the attempts' output:
  // "<real path>.logs" (schemas/database.md), the database's path with
  // every symbolic link resolved once at opening, so that every name of it
  // finds the same logs. A file of two names (hard links) has no path to
  // tell which name's logs are its own: for it logs_dir() throws
  // StoreError, and no logs are kept, shown or forgotten through it.
  std::string logs_dir() const;
  // Compresses `logs` (plain files, each a rank's or mpirun's stream) into
  // logs_dir()/<run key>/attempt-<number>/ and records them with the
  // attempt, in one transaction. Throws StoreError naming a file it cannot
  // read or write.
  void KeepAttemptLogs(std::int64_t attempt_id, const std::vector<AttemptLog>& logs);
  // What KeepAttemptLogs kept of an attempt: by rank, stdout before stderr,
  // mpirun's stream last.
  std::vector<AttemptLog> AttemptLogs(std::int64_t attempt_id) const;

  // ---- the trainer's events and the epochs they hold (events_and_epochs.cc) ----

  void RecordRunStart(std::int64_t attempt_id, const RunStartRecord& record);
  // The epoch row, its per-rank rows and its per-iteration rows, in one
  // transaction (or the batch).
  void AddEpoch(std::int64_t run_id, std::int64_t attempt_id, const EpochRecord& record);
  void RecordRunEnd(std::int64_t attempt_id, const RunEndRecord& record);

  // Means over the epochs of a complete run; nullopt for other runs.
  std::optional<RunMeasures> CompleteRunMeasures(std::int64_t run_id) const;
  // The steady epochs of every complete run, by run id and epoch, less
  // those EpochFault (epoch_validity.h) refuses; `left_out`, when given,
  // gets by run id a LeftOutText line for each run that had such epochs.
  std::vector<SteadyEpoch> SteadyEpochs(std::map<std::int64_t, std::string>* left_out = nullptr) const;
  // For every steady epoch of a complete run with CPU times (an older
  // trainer reported none), the busiest rank of each role; by run id and
  // epoch, every one kept (none is refused).
  std::vector<BusiestCpu> BusiestCpuPerIteration() const;

  // ---- hosts and link probes (hosts_and_probes.cc) ----

  // Returns the id of a host row with exactly these facts, adding it if new.
  std::int64_t AddHost(const HostFacts& facts, double now_unix_s);
  // The CPU shares of hosts, each their `cpu_cores` tag as "%g" text ("0"
  // without one): of the hosts `host_ids`, and per run_id of the hosts of
  // every complete run's complete attempt.
  std::set<std::string> HostCpuShares(const std::vector<std::int64_t>& host_ids) const;
  std::map<std::int64_t, std::set<std::string>> CompleteRunCpuShares() const;
  // By run id, the tags of the hosts of every complete run's complete
  // attempt, each host once, in host order. Throws StoreError naming a
  // host whose tags are not a JSON object or whose cpu_cores is no share.
  std::map<std::int64_t, std::vector<HostTags>> CompleteRunHostTags() const;
  // The rows of one link probe, in one transaction.
  void AddLinkProbe(const std::vector<LinkProbeRow>& rows);
  // Of each configured profile (bandwidth and latency), the rows of its most
  // recent calibration probe; by bandwidth, latency and row id.
  std::vector<LinkProbeRow> LatestCalibrationProbes() const;

  // ---- model fits and predictions (fits_and_predictions.cc) ----

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

  // ---- free SQL and SQL functions (sql.cc) ----

  // Free-form SQL (the `query` command): one statement, any the mode
  // allows; text after it other than white space and comments is refused.
  // A store opened read-only refuses a statement that would write anything
  // (sqlite3_stmt_readonly), also to a file of its own as VACUUM INTO does.
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
  struct Impl;  // store_impl.h
  // The steps of opening (store.cc); each Open* returns the schema version found.
  int OpenReadOnly();
  int OpenReadWrite();
  void Migrate(int version);
  void PrepareStatements();

  // logs_dir() once resolved; when it cannot be, why (logs_refusal_).
  void ResolveLogsDir();

  std::string path_;
  Mode mode_;
  std::string logs_dir_;
  std::string logs_refusal_;
  std::string open_note_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_STORE_H_
