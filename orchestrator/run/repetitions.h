// Repetitions: more runs for a point whose measurement is still too loose to
// decide anything (Hoefler & Belli, SC'15, rule 5: repeat until the
// confidence interval is as narrow as the question needs). A point is the
// runs of one configuration that differ only in their repetition (and so
// their seed). When [execution] max_repetitions and interval_within are set,
// a point whose runs are all complete gets one more repetition while the 95%
// interval of the median of their epoch times (order statistics, so no
// normality is assumed) reaches further from the median than
// interval_within times it, until it has max_repetitions runs. The runner
// adds them in rounds after the planned runs (runner.h). Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_REPETITIONS_H_
#define DMLBENCH_ORCHESTRATOR_RUN_REPETITIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/plan/plan.h"

namespace dmlbench {

struct RepetitionRound {
  // The next repetition of every point that needs one: a copy of its last
  // run with repetition n and seed base + n, n being the runs it has.
  std::vector<PlannedRun> more;
  // Points with max_repetitions runs, all complete, whose interval is still
  // wider than asked: Describe() of their first run without its repetition,
  // with the interval, e.g. "ring w=4 b=100: 0.512 s [0.47, 0.58] over 12 runs".
  std::vector<std::string> still_loose;
};

// Whether a point's runs measure it as closely as `within` asks: their
// epoch times' median has a 95% interval (n >= 6: order statistics reach 95%
// only from 6 runs on) whose farther end lies within `within` x median.
bool CloseEnough(const std::vector<double>& epoch_s, double within);

// The round after `plan` (the runs planned so far, with their states):
// `epoch_s` holds the median steady-state epoch time of each complete run,
// by run id. A point with a run not complete (pending, failed, interrupted)
// is left alone: its interval is not known yet, or a failing configuration
// would be repeated in vain. Returns no runs when execution.max_repetitions
// is 0.
RepetitionRound NextRepetitions(const std::vector<PlanItem>& plan, const std::map<std::int64_t, double>& epoch_s,
                                const ExecutionOptions& execution);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_REPETITIONS_H_
