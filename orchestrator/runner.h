// Runner: the run loop. Plans an experiment against the database (which of
// its runs are done, pending, failed or interrupted) and executes every run
// that is not complete, in order, through a Launcher: retries, per-run
// timeouts, cancellation, events streamed into the Store as they arrive,
// a live progress line. One sweep per database at a time (a lock file next
// to it). Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUNNER_H_
#define DMLBENCH_ORCHESTRATOR_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/launcher.h"
#include "orchestrator/matrix.h"
#include "orchestrator/store.h"

namespace dmlbench {

// Training samples of `dataset = "synthetic"` runs (--synthetic N).
inline constexpr std::int64_t kSyntheticTrainSamples = 10000;

// A problem that stops a whole sweep before or between runs (a second
// sweep on the same database, an unreadable dataset). Failing runs are
// never RunnerErrors: they are stored with their reason.
class RunnerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PlanItem {
  PlannedRun run;
  std::string run_key;
  std::string dataset_sha256;
  std::string state;  // done | pending | failed | interrupted | running
  int attempts = 0;   // stored so far
  std::string failure_reason;
};

// The runs of `experiment` with their keys and database state. dataset_dir
// holds the IDX files of `fashion-mnist` runs. Throws RunnerError when the
// dataset cannot be read.
std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const std::string& trainer_sha256,
                           const std::string& dataset_dir);

// The dataset checksum of a run as the trainer reports it in run_start:
// sha256 over the four IDX files as stored (".gz" preferred) or
// "synthetic:<seed>:<n>". Throws RunnerError.
std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir);

// The trainer's command-line arguments for a run (the launcher adds
// `--dataset DIR` from LaunchSpec::dataset_dir).
std::vector<std::string> TrainerArgs(const RunParams& params);

struct RunnerOptions {
  std::string dataset_dir;            // IDX files for `fashion-mnist` runs
  std::ostream* progress = nullptr;   // live progress; nullptr = silent
  bool progress_redraws = false;      // one line redrawn with \r (a terminal), else a line per event
};

// One row of the summary table.
struct RunReport {
  PlanItem item;          // state as after the sweep
  bool ran_now = false;   // executed by this sweep (else it was already done)
  std::optional<RunMeasures> measures;  // complete runs
};

struct SweepReport {
  std::vector<RunReport> runs;
  int complete = 0, failed = 0, interrupted = 0, pending = 0;
  int recovered = 0;       // runs left running by a dead orchestrator, redone
  bool cancelled = false;  // stopped by the cancel flag (SIGINT/SIGTERM)
};

class Runner {
 public:
  // `store` and `launcher` must outlive the Runner.
  Runner(Store& store, Launcher& launcher, RunnerOptions options);

  // Prepares the hosts and executes every run of the experiment that is not
  // complete. Returns when all ran or `cancel` became true (the current run
  // is stopped and stored as interrupted). Throws RunnerError, LaunchError
  // (from Prepare) or StoreError; the database stays consistent.
  SweepReport Run(const Experiment& experiment, const std::atomic<bool>& cancel);

 private:
  Store& store_;
  Launcher& launcher_;
  RunnerOptions options_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUNNER_H_
