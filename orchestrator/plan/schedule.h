// Schedule: what a sweep starts next, as ninja's Plan::FindWork answers it
// for its Builder. Holds the runs a sweep still has to start, in the sweep's
// order, groups them into jobs ([execution] runs_per_job) and gives each job
// hosts no other job in flight holds, as many jobs at once as the hosts and
// max_concurrent allow. Knows nothing of how a job runs (run/ does); reads
// and writes no database. Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_PLAN_SCHEDULE_H_
#define DMLBENCH_ORCHESTRATOR_PLAN_SCHEDULE_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/launch/launcher.h"
#include "orchestrator/plan/plan.h"

namespace dmlbench {

// What the schedule may hand out. With no hosts (a launcher that places
// its jobs itself: this machine, the emulated cluster, a Slurm allocation),
// one job at a time.
struct JobCapacity {
  std::vector<LaunchHost> hosts;  // in the order jobs are given them (an inventory's)
  int max_concurrent = 1;       // jobs in flight at once; at most 1 without hosts
};

// One job: runs trained in turn by one MPI job, on its hosts.
struct ScheduledJob {
  int id = 0;                        // the schedule's, unique within it
  std::vector<std::size_t> runs;     // plan indices, in the order the job trains them
  int ranks = 0;                     // of each of its runs (they share a job only at equal ranks)
  std::vector<std::string> hosts;    // its own while it runs; empty = the launcher places it
};

class Schedule {
 public:
  // `plan` is the sweep's items, `order` the indices in the sweep's order
  // (shuffled or not), `runnable(i)` whether plan[i] still needs a try. A
  // run of several epochs shares its job with the next runnable ones in
  // that order of the same ranks, dataset and network, up to runs_per_job,
  // never with another repetition of its own configuration: repetitions
  // stay as independent as separate launches make them.
  Schedule(const std::vector<PlanItem>& plan, std::vector<std::size_t> order, int runs_per_job,
           std::function<bool(std::size_t)> runnable, JobCapacity capacity);

  // The next job that can start now: the first run in order (runs to try
  // again first) whose ranks fit the hosts free now, grouped with the runs
  // that can share its job; nullopt when none can start until a job in
  // flight ends, or none is left. Its hosts are held until Finished().
  std::optional<ScheduledJob> FindWork();

  // `job` ended: its hosts are free again, except `lost` ones (a host the
  // launcher lost is given to no later job), and each run of `again` (plan
  // indices: a run to try again, or a run the job did not reach) is started
  // next, in a job of its own, in the order given.
  void Finished(const ScheduledJob& job, const std::vector<std::size_t>& again,
                const std::vector<std::string>& lost = {});

  // No run is left to start (jobs may still be in flight).
  bool Exhausted();
  int in_flight() const { return in_flight_; }
  // The most ranks of any run not yet started (0 when none is left).
  int RemainingRanks();
  // Ranks the hosts hold in all, or 0 without hosts.
  int TotalSlots() const;
  // Jobs in flight at once, at most.
  int max_concurrent() const { return capacity_.max_concurrent; }
  // The first run left that the hosts still up can never hold (hosts were
  // lost), with why; nullopt when every run left fits.
  std::optional<std::pair<std::size_t, std::string>> Unplaceable();

 private:
  // Drops runs that are no longer runnable from the front of the queues.
  void Prune();
  // Hosts free now with `ranks` slots in all (first fit in pool order), or
  // empty when they do not hold it.
  std::vector<std::size_t> FreeHostsFor(int ranks) const;
  bool SameJob(std::size_t a, std::size_t b) const;
  bool Shareable(std::size_t index) const;

  const std::vector<PlanItem>& plan_;
  std::function<bool(std::size_t)> runnable_;
  std::size_t per_job_;
  std::deque<std::size_t> alone_;     // to start next, each in a job of its own
  std::vector<std::size_t> pending_;  // not started yet, in the sweep's order
  std::vector<bool> started_;         // by plan index
  JobCapacity capacity_;
  std::vector<bool> busy_, lost_;     // by host
  int in_flight_ = 0;
  int next_id_ = 1;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_PLAN_SCHEDULE_H_
