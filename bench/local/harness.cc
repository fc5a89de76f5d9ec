#include "bench/local/harness.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "orchestrator/core/statistics.h"

namespace dmlbench::bench {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double TimeSeconds(const std::function<void()>& body) {
  const double start = WallSeconds();
  body();
  return WallSeconds() - start;
}

double CpuSeconds(CpuOf whose) {
  if (whose == CpuOf::kThisThread) {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
  }
  rusage usage{};
  getrusage(whose == CpuOf::kProcess ? RUSAGE_SELF : RUSAGE_CHILDREN, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

std::vector<double> Repeat(int warmup, int repetitions, const std::function<double()>& measure) {
  for (int i = 0; i < warmup; ++i) measure();
  std::vector<double> values;
  values.reserve(std::size_t(std::max(repetitions, 0)));
  for (int i = 0; i < repetitions; ++i) values.push_back(measure());
  return values;
}

Summary Summarize(const std::vector<double>& values) {
  if (values.empty()) return Summary{};
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return Summary{int(values.size()), Median(values),
                 std::accumulate(values.begin(), values.end(), 0.0) / double(values.size()), *low, *high};
}

std::string Describe(const Summary& summary, double scale, std::string_view unit, int decimals) {
  char line[160];
  const int u = int(unit.size());
  std::snprintf(line, sizeof line, "median %.*f %.*s, %.*f-%.*f %.*s over %d", decimals, scale * summary.median,
                u, unit.data(), decimals, scale * summary.min, decimals, scale * summary.max, u, unit.data(),
                summary.n);
  return line;
}

CLI::Option* AddRepetitions(CLI::App& app, int* reps, int least, const std::string& name,
                            const std::string& description) {
  return app.add_option(name, *reps, description)
      ->capture_default_str()
      ->check(CLI::Range(least, 1000000));
}

}  // namespace dmlbench::bench
