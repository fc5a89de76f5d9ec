// ProgressLine: the live progress of a sweep on a terminal (one line redrawn
// with \r) or a log (a line per event): runs done/total, the current run and
// epoch, elapsed time and an ETA from the mean duration of finished runs.
// Writes only to the stream it is given; not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_
#define DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace dmlbench {

class ProgressLine {
 public:
  // `out` may be null (silent).
  ProgressLine(std::ostream* out, bool redraw, int total, int done);

  void StartRun(const std::string& what, int attempt, int epochs);
  void Epoch(int epochs_done);
  // `counted`: the run is now done (it adds to done/total).
  void FinishRun(bool counted, const std::string& outcome);
  // What the current run waits on before its job runs ("slurm job 12
  // pending: Resources"), shown after its epoch until ""; a log gets a
  // line each time it changes.
  void Status(const std::string& waiting_on);
  void SetRemaining(int remaining) { remaining_ = remaining; }
  void End();

 private:
  void Show();

  std::ostream* out_;
  bool redraw_;
  int total_;
  int done_;
  int remaining_ = 0;
  double start_;
  double run_start_ = 0;
  std::vector<double> durations_;
  std::string what_;
  int attempt_ = 1;
  int epochs_ = 0;
  int epochs_done_ = 0;
  std::string waiting_on_;
};

// "1:05" or "1:02:03".
std::string ClockText(double seconds);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_PROGRESS_H_
