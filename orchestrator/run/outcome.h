// Outcome: the policy that turns what a launch returned and what the trainer
// reported into how an attempt ended (ok, failed, timed out, interrupted)
// with a one-line reason, whether another attempt could end otherwise, and
// a note on an ok attempt whose epochs say it was stalled. Pure;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_
#define DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_

#include "orchestrator/ingest/ingest.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

struct Decision {
  AttemptOutcome outcome;
  // The failure is the configuration's, not luck's: Open MPI cannot execute
  // the program or has fewer slots than ranks, the launcher says the job
  // cannot start, or the trainer refused its input (an error before its
  // run_start: options, dataset). Every attempt of this run, and as a rule
  // of the sweep's other runs, would fail the same way.
  bool permanent = false;
};

// An interrupted launch wins, then a timeout, a malformed event stream, a
// failing mpirun (with the trainer's own error appended), a trainer that
// ended without a run_end ok; else the attempt is ok, with the note of
// SlowEpochNote on its epochs.
Decision DecideOutcome(const LaunchResult& launch, const Ingest& ingest, double end_unix_s);

// An epoch is far slower than the run's others when it took more than this
// many times the median of the run's other steady epochs. A link down for
// 10 s made an epoch of 13.5 s among epochs of 0.5 s; the epochs of an
// undisturbed run stay well within 2 times their median.
inline constexpr double kSlowEpochFactor = 3;

// The note on a run whose steady epochs (all but the first, the warm-up)
// hold one or more far slower than the others (kSlowEpochFactor), naming
// the slowest: "epoch 3 took 13.5 s, 27.0 times the median of the run's
// other steady epochs (0.500 s): something stalled it, such as a link
// down". "" when none is, and for runs of fewer than 3 epochs (one steady
// epoch has no others to be judged against).
std::string SlowEpochNote(const std::vector<double>& epoch_wall_s);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_
