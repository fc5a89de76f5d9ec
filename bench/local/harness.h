// What the C++ benchmarks share: the clocks they read, the repetition loop
// (warm-up calls discarded), the summary of a quantity over its repetitions
// (median from orchestrator/core/statistics.h, mean and range) and the one
// line that states it, and the --reps option. Each benchmark prints its own
// table; this owns no output beyond that line. Pure functions and clocks:
// thread-safe.
#ifndef DMLBENCH_BENCH_LOCAL_HARNESS_H_
#define DMLBENCH_BENCH_LOCAL_HARNESS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace dmlbench::bench {

// Seconds on the steady clock since an arbitrary origin.
double WallSeconds();

// Wall seconds that body() takes.
double TimeSeconds(const std::function<void()>& body);

// User + system CPU seconds: of this process (every thread), of its
// children that have ended and been waited for, or of the calling thread.
enum class CpuOf { kProcess, kEndedChildren, kThisThread };
double CpuSeconds(CpuOf whose);

// Calls measure() `warmup` times, discarding what it returns, then
// `repetitions` times; returns those values in order.
std::vector<double> Repeat(int warmup, int repetitions, const std::function<double()>& measure);

// One quantity over its repetitions; all zero for an empty sample.
struct Summary {
  int n = 0;
  double median = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
};
Summary Summarize(const std::vector<double>& values);

// "median 1.05 s, 1.02-1.07 s over 6": the summary times `scale` (e.g. 1e3
// for seconds in ms), with `decimals` digits after the point.
std::string Describe(const Summary& summary, double scale, std::string_view unit, int decimals);

// Adds `name` (default --reps; a name without dashes is positional), a count
// of at least `least`, to app; `reps` keeps its value as the default.
CLI::Option* AddRepetitions(CLI::App& app, int* reps, int least = 1, const std::string& name = "--reps",
                            const std::string& description = "measured repetitions");

}  // namespace dmlbench::bench

#endif  // DMLBENCH_BENCH_LOCAL_HARNESS_H_
