#include "orchestrator/run/outcome.h"

#include <string>

namespace dmlbench {
namespace {

// The trainer's own one-line error, from its run_end or its stderr.
std::string TrainerDetail(const Ingest& ingest, const std::string& stderr_tail) {
  if (!ingest.trainer_error().empty()) return ingest.trainer_error();
  const std::string marker = "dmlbench-trainer: error: ";
  const size_t at = stderr_tail.rfind(marker);
  if (at == std::string::npos) return "";
  const size_t end = stderr_tail.find('\n', at);
  return stderr_tail.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

AttemptOutcome DecideOutcome(const LaunchResult& launch, const Ingest& ingest, double end_unix_s) {
  AttemptOutcome outcome;
  outcome.exit_code = launch.exit_code;
  outcome.stderr_tail = launch.stderr_tail;
  outcome.command_line = launch.command_line;
  outcome.hosts = launch.hosts;
  outcome.host_failure = launch.host_failure;
  outcome.end_unix_s = end_unix_s;
  const std::string detail = TrainerDetail(ingest, launch.stderr_tail);
  if (launch.interrupted) {
    outcome.status = AttemptState::kInterrupted;
    outcome.reason = "interrupted";
  } else if (launch.timed_out) {
    outcome.status = AttemptState::kTimedOut;
    outcome.reason = launch.failure_reason;
  } else if (!ingest.error().empty()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = "malformed trainer output: " + ingest.error();
  } else if (!launch.failure_reason.empty()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = launch.failure_reason + (detail.empty() ? "" : ": " + detail);
  } else if (!ingest.run_end_ok()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = detail.empty() ? "the trainer exited without a run_end event with status ok"
                                    : "the trainer reported an error: " + detail;
  } else {
    outcome.status = AttemptState::kOk;
  }
  return outcome;
}

}  // namespace dmlbench
