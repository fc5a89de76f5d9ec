// Timeline: per-rank spans in the Chrome trace event format (schemas/
// timeline.md), opened by Perfetto and chrome://tracing. Owns an in-memory
// buffer of this rank's spans; Write() gathers every rank's buffer to rank 0,
// which writes the file. A disabled timeline (the default) costs one branch
// per call. Not thread-safe: one thread per track, see Track().
#ifndef DMLBENCH_TRAINER_TIMELINE_H_
#define DMLBENCH_TRAINER_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dmlbench {

class Timeline {
 public:
  // enabled=false: every call returns at once and nothing is recorded.
  explicit Timeline(bool enabled);

  bool enabled() const { return enabled_; }

  // Microseconds on the monotonic clock, relative to the run's common start
  // (SetOrigin after a barrier, so that ranks line up).
  double NowUs() const;
  void SetOrigin();

  // A complete span ("ph": "X") on this rank. `name` and `category` must be
  // string literals or otherwise outlive the timeline. thread 0 is the
  // training thread; a communication thread uses 1.
  void Span(const char* name, const char* category, double start_us,
            double end_us, int thread = 0, std::int64_t bytes = -1);

  // Collective over MPI_COMM_WORLD: rank 0 writes all spans to `path`.
  // Throws std::runtime_error if the file cannot be written.
  void Write(const std::string& path, int rank, const std::vector<std::string>& rank_labels);

 private:
  struct Event {
    const char* name;
    const char* category;
    double start_us;
    double dur_us;
    int thread;
    std::int64_t bytes;
  };
  bool enabled_;
  double origin_us_ = 0;
  std::vector<Event> events_;
};

// Records a span from construction to destruction (no-op when disabled).
class ScopedSpan {
 public:
  ScopedSpan(Timeline* timeline, const char* name, const char* category, int thread = 0)
      : timeline_(timeline && timeline->enabled() ? timeline : nullptr),
        name_(name), category_(category), thread_(thread),
        start_us_(timeline_ ? timeline_->NowUs() : 0) {}
  ~ScopedSpan() {
    if (timeline_) timeline_->Span(name_, category_, start_us_, timeline_->NowUs(), thread_);
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Timeline* timeline_;
  const char* name_;
  const char* category_;
  int thread_;
  double start_us_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_TIMELINE_H_
