#include "orchestrator/run/attempt.h"

#include <chrono>
#include <string>
#include <thread>

#include "orchestrator/core/clock.h"

namespace dmlbench {
namespace {

// How long an attempt stopped by its database tries to store why (a full
// disk freed again within this is common: a log rotated, a file deleted).
constexpr double kStoreRetryS = 10;

}  // namespace

Attempt::Attempt(Store& store, const PlanItem& item, SweepOrder order, AttemptClock clock)
    : store_(store), run_id_(item.run_id), id_(store.BeginAttempt(item.run_id, UnixNow(), order)),
      ingest_(store, item.run_id, id_, LaunchedRun{item.run.params, item.dataset_sha256}), clock_(clock) {}

std::vector<PhaseTime> Attempt::StorePhases(double end_s) {
  clock_.end_s = end_s;
  std::vector<PhaseTime> phases = AttemptPhases(clock_, ingest_.times());
  store_.AddAttemptPhases(id_, phases);
  return phases;
}

void Attempt::KeepWhyStopped(const StoreError& error) {
  AttemptOutcome outcome;
  outcome.status = AttemptState::kInterrupted;
  outcome.reason = std::string("the orchestrator stopped: ") + error.what();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStoreRetryS);
  while (true) {
    try {
      outcome.end_unix_s = UnixNow();
      store_.FinishAttempt(run_id_, id_, outcome, RunDisposition::kInterrupted, {});
      return;
    } catch (const StoreError&) {
      if (std::chrono::steady_clock::now() >= deadline) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
}

}  // namespace dmlbench
