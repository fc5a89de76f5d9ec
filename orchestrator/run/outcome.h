// Outcome: the policy that turns what a launch returned and what the trainer
// reported into how an attempt ended (ok, failed, timed out, interrupted)
// with a one-line reason, and whether another attempt could end otherwise.
// Pure; thread-safe.
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
// ended without a run_end ok; else the attempt is ok.
Decision DecideOutcome(const LaunchResult& launch, const Ingest& ingest, double end_unix_s);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_
