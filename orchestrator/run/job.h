// Job: one launch of the trainer that trains 1..N runs in turn, each its
// own Attempt (a single run is a job of one). The first attempt begins at
// the launch, each next one when the run before it ended, each stored as
// soon as its run_end ok arrived (so a crash of the orchestrator keeps it);
// when the launch returns, the run under way takes the job's outcome and
// the runs after it are handed back. It is told the job's output lines and
// its end by its sweep, which keeps the policy (JobOwner); it never calls
// the launcher itself. Not thread-safe: one thread drives it.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_JOB_H_
#define DMLBENCH_ORCHESTRATOR_RUN_JOB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/launch/launcher.h"
#include "orchestrator/plan/plan.h"
#include "orchestrator/plan/schedule.h"
#include "orchestrator/run/attempt.h"
#include "orchestrator/run/outcome.h"
#include "orchestrator/run/output_dir.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// What a job asks of the sweep it belongs to.
class JobOwner {
 public:
  virtual ~JobOwner() = default;
  // Begins the attempt of plan item `index` in job `job`, launched at
  // `launch_s` (monotonic): its place in the sweep's order and its clock's
  // start.
  virtual std::unique_ptr<Attempt> BeginAttempt(int job, std::size_t index, double launch_s) = 0;
  // Stores how `attempt` of item `index` ended and moves the item to its
  // new state; returns whether the run is done trying.
  virtual bool Conclude(int job, std::size_t index, Attempt& attempt, const Decision& decision) = 0;
  // An attempt's end at `end_s` (monotonic): stores its phases and adds
  // them, `ranks` ranks wide, to the sweep's account.
  virtual void Account(Attempt& attempt, double end_s, int ranks) = 0;
  // A run of a job ended at `end_s` (monotonic) and the next one of the
  // job begins: the time between counts from there.
  virtual void RunEnded(double end_s) = 0;
  // The job's current run has stored `epochs` epochs.
  virtual void Epochs(int job_id, int epochs) = 0;
  // The database ids of hosts by name (those the sweep prepared).
  virtual std::vector<std::int64_t> HostIds(const std::vector<std::string>& names) const = 0;
};

class Job {
 public:
  // `plan` holds the items `scheduled` names; `spec` is the launch of its
  // runs (its output_dir is the job's own). Throws RunnerError when the
  // output directory cannot be made.
  Job(Store& store, JobOwner& owner, const std::vector<PlanItem>& plan, ScheduledJob scheduled, LaunchSpec spec);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  const ScheduledJob& scheduled() const { return scheduled_; }
  const LaunchSpec& spec() const { return spec_; }

  // The launch starts now (`launch_s`): the first run's attempt begins.
  void Start(double launch_s);
  // One line of the job's standard output.
  void Line(std::string_view line);
  // Commits the events its current attempt has stored (before another
  // job's events are stored in the same database).
  void Flush();
  // The launch returned: stores the attempts that ended within the job
  // with the job's facts, and the current one with the job's outcome.
  // Returns the plan items to start again, each in a job of its own, in
  // order: the current run when it has tries left, then the runs the job
  // did not reach. Throws StoreError.
  std::vector<std::size_t> End(const LaunchResult& launch);
  // The database failed mid-job: the current attempt keeps why.
  void KeepWhyStopped(const StoreError& error);

 private:
  struct Ended {  // a run stored before the job ended, and when
    std::unique_ptr<Attempt> attempt;
    double end_s;
  };

  Store& store_;
  JobOwner& owner_;
  const std::vector<PlanItem>& plan_;
  ScheduledJob scheduled_;
  OutputDir output_;
  LaunchSpec spec_;
  std::size_t position_ = 0;  // of the current run in scheduled_.runs
  std::unique_ptr<Attempt> current_;
  std::vector<Ended> ended_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_JOB_H_
