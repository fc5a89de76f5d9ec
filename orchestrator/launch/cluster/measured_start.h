// When the measured part of a run began, read from the trainer's events as
// they stream past: the first epoch is warm-up (never used), so measurement
// begins with epoch 2. Its event names the time it began (`start_unix_s`);
// until it arrives, and from trainers that do not write that field, the
// estimate is run_start's time plus epoch 1's wall and evaluation time (the
// trainer does nothing else in between but a barrier and a gather, which
// only make epoch 2 start later).
//
// The cluster launcher lifts the hosts' CPU quota while a job starts and
// puts it back on the trainer's first line. When the measured epochs began
// before that, they ran uncapped: a 1-worker run of 80 batches of 25 took
// 20 ms instead of 140 ms. The launcher compares the time it restored the
// quota with this one and fails such an attempt, so that it is run again.
// A warm-up of a few iterations ends within milliseconds of run_start,
// before the quota can be back: the launcher asks the trainer to wait for
// it before epoch 2 (--await-cpu-quota-s), and epoch 2's own start time
// then shows that it did.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_

#include <optional>
#include <string_view>

namespace dmlbench {

class MeasuredStart {
 public:
  // One stdout line of the trainer; lines that are not run_start or the
  // first two epoch events are ignored.
  void Observe(std::string_view line);

  // The unix time epoch 2 began: as its event says, else the earliest it
  // can have begun (for a one-epoch run: the time it ended, so a quota back
  // only after that capped nothing); empty until run_start and epoch 1 have
  // both been seen.
  std::optional<double> unix_s() const;

 private:
  std::optional<double> run_start_unix_s_;
  std::optional<double> warmup_s_;
  std::optional<double> epoch_2_start_unix_s_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_MEASURED_START_H_
