// Attempt phases: where one attempt's time went, cut into the phases of the
// attempt_phases table (schemas/database.md), from the orchestrator's
// monotonic clock at the attempt's steps and what its events said
// (ingest.h's EventTimes); and a sweep's efficiency from the phases of its
// attempts. Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_PHASES_H_
#define DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_PHASES_H_

#include <map>
#include <string>
#include <vector>

#include "orchestrator/ingest/ingest.h"
#include "orchestrator/store/records.h"

namespace dmlbench {

// The orchestrator's monotonic clock (MonotonicNow, seconds; the Ingest's
// clock too) at the steps of one attempt, and the steps it timed itself.
struct AttemptClock {
  double previous_end_s = 0;      // the sweep's previous attempt stored, or the sweep's start
  double host_preparation_s = 0;  // the hosts prepared since previous_end_s (a sweep's first attempt)
  double launch_s = 0;            // Launcher::Launch called
  double link_shaping_s = 0;      // of it, shaping the links (LaunchResult)
  double returned_s = 0;          // Launch returned
  double end_s = 0;               // the attempt's logs, outcome and run stored
};

// The attempt's phases, in the order they happen, those it reached:
// host_preparation, plan_to_launch, link_shaping, launch (mpirun's start to
// the trainer's main, or to the first event when the trainer does not
// report its own phases), the trainer's mpi_init, dataset_load and setup,
// warmup_epochs (epoch 1 of several), steady_epochs (the others, or a sole
// epoch: as the steady_epochs view counts them), evaluation,
// between_epochs, teardown, then mpirun_exit (run_end to mpirun's exit) and
// ingest (from there until the attempt is stored). Differences of clocks
// that cross below zero are 0.
std::vector<PhaseTime> AttemptPhases(const AttemptClock& clock, const EventTimes& events);

// A sweep's account: its wall time, the sum of its attempts' phases, and
// what its hosts could have held.
struct SweepTime {
  double wall_s = 0;
  std::map<std::string, double> phase_s;  // by phase
  double rank_steady_s = 0;  // over attempts: ranks x steady_epochs seconds
  int slots = 0;             // ranks the sweep's hosts hold at once; 0 = unknown

  // An attempt's phases, its job `ranks` wide.
  void Add(const std::vector<PhaseTime>& phases, int ranks = 0);
  // steady_epochs over the attempts' time: wall_s, or the sum of their
  // phases when attempts ran at once (0 without either).
  double efficiency() const;
  // What users pay by: rank_steady_s over slots x wall_s, the share of the
  // hosts' time spent measuring (0 when unknown).
  double utilisation() const;
  // The `count` largest phases other than steady_epochs, largest first;
  // the wall time in no attempt's phase competes as "unaccounted".
  std::vector<PhaseTime> LargestOverheads(int count) const;
  // One line for people: "sweep 41.2 s, of which steady epochs 5.8 s:
  // efficiency 14%, utilisation 12% of 2 slots; largest overheads: launch
  // 12.1 s (29%), ..." (the three largest, each with its share of the
  // attempts' time; utilisation when slots are known).
  std::string Summary() const;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_ATTEMPT_PHASES_H_
