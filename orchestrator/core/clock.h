// Clock: the two clocks the orchestrator reads. Wall time (UnixNow) is what
// the database records (`_unix_s` columns); monotonic time (MonotonicNow)
// measures durations and deadlines, immune to clock changes. Header-only,
// stateless, thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_CLOCK_H_
#define DMLBENCH_ORCHESTRATOR_CORE_CLOCK_H_

#include <chrono>

namespace dmlbench {

// Seconds since the Unix epoch, wall clock.
inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Seconds on the monotonic clock (arbitrary origin): for durations only.
inline double MonotonicNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_CLOCK_H_
