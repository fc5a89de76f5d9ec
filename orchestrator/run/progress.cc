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

void ProgressLine::StartRun(const std::string& what, int attempt, int epochs) {
  what_ = TerminalText(what);
  attempt_ = attempt;
  epochs_ = epochs;
  epochs_done_ = 0;
  waiting_on_.clear();
  run_start_ = MonotonicNow();
  Show();
}

void ProgressLine::Status(const std::string& waiting_on) {
  const std::string text = TerminalText(waiting_on);
  if (text == waiting_on_) return;
  waiting_on_ = text;
  Show();
}

void ProgressLine::Epoch(int epochs_done) {
  epochs_done_ = epochs_done;
  if (redraw_) Show();
}

void ProgressLine::FinishRun(bool counted, const std::string& outcome) {
  durations_.push_back(MonotonicNow() - run_start_);
  if (counted) ++done_;
  if (!out_) return;
  if (redraw_) *out_ << "\r\033[K";
  *out_ << "[" << done_ << "/" << total_ << "] " << what_ << ": " << TerminalText(outcome) << " ("
        << ClockText(durations_.back()) << ")\n";
  out_->flush();
}

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
  line << "[" << done_ << "/" << total_ << "] " << what_;
  if (attempt_ > 1) line << " attempt " << attempt_;
  line << " epoch " << epochs_done_ << "/" << epochs_;
  if (!waiting_on_.empty()) line << " | " << waiting_on_;
  line << " | elapsed " << ClockText(now - start_) << " | ETA ";
  if (durations_.empty()) {
    line << "--";
  } else {
    double sum = 0;
    for (double d : durations_) sum += d;
    const double mean = sum / static_cast<double>(durations_.size());
    line << ClockText(std::max(0.0, mean * remaining_ - (now - run_start_)));
  }
  if (redraw_) {
    *out_ << "\r\033[K" << line.str();
  } else {
    *out_ << line.str() << "\n";
  }
  out_->flush();
}

}  // namespace dmlbench
