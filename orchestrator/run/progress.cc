#include "orchestrator/run/progress.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/terminal_text.h"

namespace dmlbench {

std::string ClockText(double seconds) {
  const long total = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

ProgressLine::ProgressLine(std::ostream* out, bool redraw, int total, int done)
    : out_(out), redraw_(redraw), total_(total), done_(done), start_(MonotonicNow()) {}

void ProgressLine::StartRun(int job, const std::string& what, int attempt, int epochs) {
  InFlight& run = in_flight_[job];
  run = InFlight{TerminalText(what), attempt, epochs, 0, "", MonotonicNow()};
  Show();
}

void ProgressLine::Status(int job, const std::string& waiting_on) {
  const std::string text = TerminalText(waiting_on);
  InFlight& run = in_flight_[job];
  if (text == run.waiting_on) return;
  run.waiting_on = text;
  Show();
}

void ProgressLine::Epoch(int job, int epochs_done) {
  in_flight_[job].epochs_done = epochs_done;
  if (redraw_) Show();
}

void ProgressLine::FinishRun(int job, bool counted, const std::string& outcome) {
  const InFlight& run = in_flight_[job];
  durations_.push_back(MonotonicNow() - run.start);
  if (counted) ++done_;
  if (!out_) return;
  if (redraw_) *out_ << "\r\033[K";
  *out_ << "[" << done_ << "/" << total_ << "] " << run.what << ": " << TerminalText(outcome) << " ("
        << ClockText(durations_.back()) << ")\n";
  out_->flush();
}

void ProgressLine::EndJob(int job) { in_flight_.erase(job); }

void ProgressLine::End() {
  if (out_ && redraw_) {
    *out_ << "\r\033[K";
    out_->flush();
  }
}

void ProgressLine::Show() {
  if (!out_) return;
  const double now = MonotonicNow();
  std::ostringstream line;
  line << "[" << done_ << "/" << total_ << "] ";
  if (in_flight_.size() > 1) line << in_flight_.size() << " jobs: ";
  double started = now;
  const char* separator = "";
  for (const auto& [job, run] : in_flight_) {
    line << separator << run.what;
    if (run.attempt > 1) line << " attempt " << run.attempt;
    line << " epoch " << run.epochs_done << "/" << run.epochs;
    if (!run.waiting_on.empty()) line << " | " << run.waiting_on;
    started = std::min(started, run.start);
    separator = "; ";
  }
  line << " | elapsed " << ClockText(now - start_) << " | ETA ";
  if (durations_.empty()) {
    line << "--";
  } else {
    double sum = 0;
    for (double d : durations_) sum += d;
    const double mean = sum / static_cast<double>(durations_.size());
    // Runs in flight at once finish the rest that many at a time.
    const double width = static_cast<double>(std::max<std::size_t>(1, in_flight_.size()));
    line << ClockText(std::max(0.0, mean * remaining_ / width - (now - started)));
  }
  if (redraw_) {
    *out_ << "\r\033[K" << line.str();
  } else {
    *out_ << line.str() << "\n";
  }
  out_->flush();
}

}  // namespace dmlbench
