#include "orchestrator/run/repetitions.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

constexpr double kLevel = 0.95;

// "0.512 s [0.47, 0.58] over 12 runs".
std::string IntervalText(const MedianInterval& interval) {
  char text[128];
  std::snprintf(text, sizeof text, "%.4g s [%.4g, %.4g] over %d runs", interval.median, interval.low, interval.high,
                interval.n);
  return text;
}

// The point's label: Describe() without " rep=N".
std::string PointLabel(const RunParams& params) {
  std::string label = Describe(params);
  const std::size_t rep = label.rfind(" rep=");
  return rep == std::string::npos ? label : label.substr(0, rep);
}

}  // namespace

bool CloseEnough(const std::vector<double>& epoch_s, double within) {
  if (epoch_s.empty()) return false;
  const MedianInterval interval = MedianConfidenceInterval(epoch_s, kLevel);
  if (interval.coverage < kLevel) return false;
  return std::max(interval.median - interval.low, interval.high - interval.median) <= within * interval.median;
}

RepetitionRound NextRepetitions(const std::vector<PlanItem>& plan, const std::map<std::int64_t, double>& epoch_s,
                                const ExecutionOptions& execution) {
  RepetitionRound round;
  if (execution.max_repetitions <= 0) return round;
  // Points in the order their first run is planned, so that a round's runs
  // keep the plan's order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const PlanItem*>> points;
  for (const PlanItem& item : plan) {
    const std::string point = ConfigurationJson(item.run.params);
    auto [it, added] = points.try_emplace(point);
    if (added) order.push_back(point);
    it->second.push_back(&item);
  }
  for (const std::string& point : order) {
    const std::vector<const PlanItem*>& runs = points.at(point);
    std::vector<double> times;
    for (const PlanItem* item : runs) {
      const auto time = epoch_s.find(item->run_id);
      if (item->state != RunState::kComplete || time == epoch_s.end()) break;
      times.push_back(time->second);
    }
    if (times.size() != runs.size() || CloseEnough(times, execution.interval_within)) continue;
    const PlanItem* last = *std::max_element(runs.begin(), runs.end(), [](const PlanItem* a, const PlanItem* b) {
      return a->run.params.repetition < b->run.params.repetition;
    });
    const int next = last->run.params.repetition + 1;
    if (next >= execution.max_repetitions) {
      round.still_loose.push_back(PointLabel(last->run.params) + ": " +
                                  IntervalText(MedianConfidenceInterval(times, kLevel)));
      continue;
    }
    PlannedRun more = last->run;
    more.params.seed = last->run.params.seed - static_cast<std::uint64_t>(last->run.params.repetition) +
                       static_cast<std::uint64_t>(next);
    more.params.repetition = next;
    round.more.push_back(std::move(more));
  }
  return round;
}

}  // namespace dmlbench
