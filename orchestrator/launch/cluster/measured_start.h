// When the measured part of a run began, read from the trainer's events as
// they stream past: the first epoch is warm-up (never used), so measurement
// begins with epoch 2, no earlier than run_start's time plus epoch 1's wall
// and evaluation time (the trainer does nothing else in between but a
// barrier and a gather, which only make epoch 2 start later).
//
// The cluster launcher lifts the hosts' CPU quota while a job starts and
// puts it back on the trainer's first line. When a whole warm-up epoch
// finished before that line got through, the measured epochs ran uncapped:
// a 1-worker run of 80 batches of 25 took 20 ms instead of 140 ms. The
// launcher compares the time it restored the quota with this estimate and
// fails such an attempt, so that it is run again.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_

#include <optional>
#include <string_view>

namespace dmlbench {

class MeasuredStart {
 public:
  // One stdout line of the trainer; lines that are not run_start or the
  // first epoch event are ignored.
  void Observe(std::string_view line);

  // The earliest unix time epoch 2 can have begun (for a one-epoch run: the
  // time it ended, so a quota back only after that capped nothing); empty
  // until run_start and epoch 1 have both been seen.
  std::optional<double> unix_s() const;

 private:
  std::optional<double> run_start_unix_s_;
  std::optional<double> warmup_s_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_
