// Outcome: the policy that turns what a launch returned and what the trainer
// reported into how an attempt ended (ok, failed, timed out, interrupted)
// with a one-line reason. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_
#define DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_

#include "orchestrator/ingest/ingest.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// An interrupted launch wins, then a timeout, a malformed event stream, a
// failing mpirun (with the trainer's own error appended), a trainer that
// ended without a run_end ok; else the attempt is ok.
AttemptOutcome DecideOutcome(const LaunchResult& launch, const Ingest& ingest, double end_unix_s);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_OUTCOME_H_
