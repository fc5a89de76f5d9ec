// Runner: the run loop. Plans an experiment against the database (which of
// its runs are done, pending, failed or interrupted), registers the
// experiment with all its runs, and executes every chosen run that is not
// complete and has tries left, through a Launcher: retries up to `attempts` failures
// per run over all sweeps, per-run timeouts, cancellation, events streamed
// into the Store as they arrive, a live progress line. A failure no retry
// can fix stops the sweep. With [execution] max_repetitions, rounds of one
// more repetition follow for the chosen points still measured too loosely
// (repetitions.h). One sweep per database at a time (RunLock). Not
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_RUNNER_H_
#define DMLBENCH_ORCHESTRATOR_RUN_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/plan/plan.h"
#include "orchestrator/run/attempt_phases.h"
#include "orchestrator/run/run_lock.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A problem that stops a whole sweep before it starts (a second sweep on
// the same database). Failing runs are never RunnerErrors: they are stored
// with their reason.
class RunnerError : public Error {
 public:
  using Error::Error;
};

struct RunnerOptions {
  std::string trainer;                // the local dmlbench-trainer (dataset checksums)
  std::string dataset_dir;            // IDX files for `fashion-mnist` runs
  Filter only;                        // the runs of the experiment to consider; empty = all
  bool retry_failed = true;           // false: a run that failed stays failed and is not run again
  std::vector<std::string> tags;      // given, with the experiment's, to every run considered
  std::ostream* progress = nullptr;   // live progress; nullptr = silent
  bool progress_redraws = false;      // one line redrawn with \r (a terminal), else a line per event
  std::optional<HostSlots> slots;     // the hosts' slots, when known before they are contacted
  std::string system;                 // where the runs are measured: part of their keys (plan.h PlanInputs)
  // Called once, after the plan is checked and the hosts are prepared, when
  // the sweep has a run to execute (the local link probe: nothing is probed
  // for a sweep that refuses its input or has nothing to run).
  std::function<void()> before_first_launch;
};

// One row of the summary table.
struct RunReport {
  PlanItem item;          // state as after the sweep
  bool ran_now = false;   // executed by this sweep (else it was already done)
  std::optional<RunMeasures> measures;  // complete runs
};

struct SweepReport {
  int planned = 0;         // runs of the experiment, before `only` chose among them
  std::vector<RunReport> runs;  // the runs `only` chose, in plan order
  int complete = 0, failed = 0, interrupted = 0, pending = 0;
  int recovered = 0;       // runs left running by a dead orchestrator, redone
  // Chosen runs not tried because they failed `attempts` times before
  // (those --no-retry-failed leaves alone are not counted).
  int exhausted = 0;
  bool cancelled = false;  // stopped by the cancel flag (SIGINT/SIGTERM)
  // Why the sweep stopped before its end: a run failed in a way every
  // attempt would ("" = it did not). The runs after it were not started.
  std::string stopped;
  // Chosen runs complete before this sweep whose hosts had another CPU share
  // (the `cpu_cores` tag) than the hosts prepared now: a run is its
  // parameters, not its hosts, so they were not run again. `elsewhere`
  // names the shares, "0.15 core (these hosts: 0.3 core)".
  int measured_elsewhere = 0;
  std::string elsewhere;
  // [execution] max_repetitions: the repetitions added after the planned
  // ones (run now or found complete from an earlier sweep; in `runs` and
  // `planned` too), and the points that reached max_repetitions with their
  // interval still wider than interval_within (RepetitionRound).
  int more_repetitions = 0;
  std::vector<std::string> still_loose;
  // The sweep's wall time and where its attempts' time went (their
  // attempt_phases rows, summed).
  SweepTime time;
};

class Runner {
 public:
  // `store` and `launcher` must outlive the Runner.
  Runner(Store& store, Launcher& launcher, RunnerOptions options);

  // Plans the experiment, keeps the runs `only` matches (PlanError when it
  // matches none, or when a chosen run needs more ranks than `slots`, before
  // any host is touched), prepares the hosts, records the experiment with
  // every run it plans, and executes every chosen run that is not complete,
  // has failed fewer than `attempts` times over all sweeps, and is not
  // failed when retry_failed is false. `lock` must hold the store's
  // database file. Returns when all ran, a run failed in a way no retry can
  // fix, or `cancel` became true (the current run is stopped and stored as
  // interrupted). Throws RunnerError, PlanError, LaunchError (from Prepare)
  // or StoreError; the database stays consistent, and the experiment is
  // recorded only once its plan is made and its hosts are prepared.
  SweepReport Run(const Experiment& experiment, const RunLock& lock, const std::atomic<bool>& cancel);

 private:
  class Sweep;

  Store& store_;
  Launcher& launcher_;
  RunnerOptions options_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_RUNNER_H_
