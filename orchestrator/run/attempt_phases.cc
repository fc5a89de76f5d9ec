#include "orchestrator/run/attempt_phases.h"

#include <algorithm>
#include <cstdio>

namespace dmlbench {

std::vector<PhaseTime> AttemptPhases(const AttemptClock& clock, const EventTimes& events) {
  std::vector<PhaseTime> phases;
  const auto add = [&phases](const char* phase, double seconds) {
    phases.push_back({phase, std::max(0.0, seconds)});
  };
  // Before mpirun: the hosts, the plan and the store's bookkeeping, the links.
  if (clock.host_preparation_s > 0) add("host_preparation", clock.host_preparation_s);
  add("plan_to_launch", clock.launch_s - clock.previous_end_s - clock.host_preparation_s);
  if (clock.link_shaping_s > 0) add("link_shaping", clock.link_shaping_s);
  const double mpirun_started = clock.launch_s + clock.link_shaping_s;
  if (!events.run_start_at_s) {
    // The trainer never got past its input: all of the job is its start.
    add("launch", clock.returned_s - mpirun_started);
  } else {
    // The trainer's own account of the time before its run_start, when it
    // gives one; the rest since mpirun started is mpirun's start.
    const TrainerPhases trainer = events.trainer.value_or(TrainerPhases{});
    add("launch", *events.run_start_at_s - mpirun_started - trainer.mpi_init_s - trainer.dataset_load_s -
                      trainer.setup_s);
    if (events.trainer) {
      add("mpi_init", trainer.mpi_init_s);
      add("dataset_load", trainer.dataset_load_s);
      add("setup", trainer.setup_s);
    }
    // Epoch 1 is warm-up when later ones follow; a sole epoch is steady.
    const double epochs_s = events.first_epoch_s + events.later_epochs_s;
    if (epochs_s > 0) {
      const bool several = events.later_epochs_s > 0;
      if (several) add("warmup_epochs", events.first_epoch_s);
      add("steady_epochs", several ? events.later_epochs_s : events.first_epoch_s);
      add("evaluation", events.evaluation_s);
    }
    // Without the trainer's account, its span as the orchestrator saw it.
    const double span = events.trainer ? trainer.epochs_s
                                       : events.run_end_at_s.value_or(clock.returned_s) - *events.run_start_at_s;
    add("between_epochs", span - epochs_s - events.evaluation_s);
    if (events.trainer) add("teardown", trainer.teardown_s);
  }
  if (events.run_end_at_s) add("mpirun_exit", clock.returned_s - *events.run_end_at_s);
  add("ingest", clock.end_s - clock.returned_s);
  return phases;
}

void SweepTime::Add(const std::vector<PhaseTime>& phases, int ranks) {
  for (const PhaseTime& phase : phases) {
    phase_s[phase.phase] += phase.seconds;
    if (phase.phase == "steady_epochs") rank_steady_s += ranks * phase.seconds;
  }
}

namespace {

// The attempts' time: the sweep's wall time, or the sum of the attempts'
// phases when attempts ran at once.
double AttemptSeconds(const SweepTime& time) {
  double accounted = 0;
  for (const auto& [phase, seconds] : time.phase_s) accounted += seconds;
  return std::max(time.wall_s, accounted);
}

}  // namespace

double SweepTime::efficiency() const {
  const double attempts_s = AttemptSeconds(*this);
  if (attempts_s <= 0) return 0;
  const auto steady = phase_s.find("steady_epochs");
  return steady == phase_s.end() ? 0 : steady->second / attempts_s;
}

double SweepTime::utilisation() const {
  if (slots <= 0 || wall_s <= 0) return 0;
  return rank_steady_s / (slots * wall_s);
}

std::vector<PhaseTime> SweepTime::LargestOverheads(int count) const {
  std::vector<PhaseTime> overheads;
  double accounted = 0;
  for (const auto& [phase, seconds] : phase_s) {
    accounted += seconds;
    if (phase != "steady_epochs") overheads.push_back({phase, seconds});
  }
  if (wall_s - accounted > 0) overheads.push_back({"unaccounted", wall_s - accounted});
  std::stable_sort(overheads.begin(), overheads.end(),
                   [](const PhaseTime& a, const PhaseTime& b) { return a.seconds > b.seconds; });
  if (overheads.size() > static_cast<std::size_t>(std::max(0, count))) overheads.resize(std::max(0, count));
  return overheads;
}

std::string SweepTime::Summary() const {
  const auto steady = phase_s.find("steady_epochs");
  const double attempts_s = AttemptSeconds(*this);
  char text[200];
  std::snprintf(text, sizeof text, "sweep %.1f s", wall_s);
  std::string line = text;
  if (attempts_s > wall_s) {
    std::snprintf(text, sizeof text, ", its attempts %.1f s side by side", attempts_s);
    line += text;
  }
  std::snprintf(text, sizeof text, ", of which steady epochs %.1f s: efficiency %.0f%%",
                steady == phase_s.end() ? 0.0 : steady->second, 100 * efficiency());
  line += text;
  if (slots > 0) {
    std::snprintf(text, sizeof text, ", utilisation %.0f%% of %d slot%s", 100 * utilisation(), slots,
                  slots == 1 ? "" : "s");
    line += text;
  }
  const char* separator = "; largest overheads: ";
  for (const PhaseTime& overhead : LargestOverheads(3)) {
    std::snprintf(text, sizeof text, "%s%s %.1f s (%.0f%%)", separator, overhead.phase.c_str(), overhead.seconds,
                  attempts_s > 0 ? 100 * overhead.seconds / attempts_s : 0.0);
    line += text;
    separator = ", ";
  }
  return line;
}

}  // namespace dmlbench
