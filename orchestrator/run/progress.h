// ProgressLine: the live progress of a sweep on a terminal (one line redrawn
// with \r) or a log (a line per event): runs done/total, the run in flight
// and its epoch (or, with several jobs in flight, each job's run and
// epoch), elapsed time and an ETA from the mean duration of finished runs.
// Writes only to the stream it is given; not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_
#define DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace dmlbench {

class ProgressLine {
 public:
  // `out` may be null (silent).
  ProgressLine(std::ostream* out, bool redraw, int total, int done);

  // Job `job`'s run `what` starts (its attempt-th attempt, of `epochs`).
  void StartRun(int job, const std::string& what, int attempt, int epochs);
  void Epoch(int job, int epochs_done);
  // `counted`: the run is now done (it adds to done/total).
  void FinishRun(int job, bool counted, const std::string& outcome);
  // What job `job` waits on before it runs ("slurm job 12 pending:
  // Resources"), shown after its epoch until ""; a log gets a line each
  // time it changes.
  void Status(int job, const std::string& waiting_on);
  // Job `job` is no longer in flight.
  void EndJob(int job);
  void SetRemaining(int remaining) { remaining_ = remaining; }
  void End();

 private:
  struct InFlight {
    std::string what;
    int attempt = 1;
    int epochs = 0;
    int epochs_done = 0;
    std::string waiting_on;
    double start = 0;
  };
  void Show();

  std::ostream* out_;
  bool redraw_;
  int total_;
  int done_;
  int remaining_ = 0;
  double start_;
  std::vector<double> durations_;
  std::map<int, InFlight> in_flight_;  // by job
};

// "1:05" or "1:02:03".
std::string ClockText(double seconds);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_
