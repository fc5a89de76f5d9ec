// Attempt: one try of one run, from its row begun in the database to its
// phases stored: it owns the attempt's id, the Ingest its events go through,
// its clock and what its events said. The one type every try of every run
// is, alone in its job or sharing one (run/job.h). Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_H_
#define DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "orchestrator/ingest/ingest.h"
#include "orchestrator/plan/plan.h"
#include "orchestrator/run/attempt_phases.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

class Attempt {
 public:
  // Begins the attempt of `item` in `store` (at `order` of its sweep) with
  // `clock` as it stands at the launch. Throws StoreError.
  Attempt(Store& store, const PlanItem& item, SweepOrder order, AttemptClock clock);
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

  std::int64_t id() const { return id_; }
  Ingest& ingest() { return ingest_; }
  const Ingest& ingest() const { return ingest_; }
  AttemptClock& clock() { return clock_; }

  // The attempt's phases from its clock (its end at `end_s`) and its
  // events, stored; returned for the sweep's account. Throws StoreError.
  std::vector<PhaseTime> StorePhases(double end_s);

  // The database failed mid-attempt (a full disk): the attempt is stored
  // as interrupted with that error as its reason, so that the next sweep
  // does not book it as "the orchestrator stopped during this attempt",
  // trying for a while as the disk may be freed; else the reason is lost.
  void KeepWhyStopped(const StoreError& error);

 private:
  Store& store_;
  std::int64_t run_id_;
  std::int64_t id_;
  Ingest ingest_;
  AttemptClock clock_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_H_
