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

// The value of "<key>: value" on a line of `text` ("" if none).
std::string LineValue(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key + ": ");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 3;
  return text.substr(begin, text.find('\n', begin) - begin);
}

// What Open MPI says, in mpirun's stderr, when a job cannot start as
// configured (Open MPI 4.1 help texts); "" for anything else.
std::string PermanentMpiError(const std::string& stderr_tail) {
  if (stderr_tail.find("There are not enough slots available in the system") != std::string::npos) {
    return "Open MPI has fewer slots than the job has ranks";
  }
  if (stderr_tail.find("mpirun was unable to launch the specified application") != std::string::npos ||
      stderr_tail.find("mpirun was unable to find the specified executable") != std::string::npos) {
    const std::string executable = LineValue(stderr_tail, "Executable");
    const std::string node = LineValue(stderr_tail, "Node");
    return "Open MPI cannot execute " + (executable.empty() ? std::string("the trainer") : executable) +
           (node.empty() ? "" : " on " + node);
  }
  return "";
}

}  // namespace

Decision DecideOutcome(const LaunchResult& launch, const Ingest& ingest, double end_unix_s) {
  Decision decision;
  AttemptOutcome& outcome = decision.outcome;
  outcome.exit_code = launch.exit_code;
  outcome.stderr_tail = launch.stderr_tail;
  outcome.command_line = launch.command_line;
  outcome.hosts = launch.hosts;
  outcome.host_failure = launch.host_failure;
  outcome.end_unix_s = end_unix_s;
  const std::string detail = TrainerDetail(ingest, launch.stderr_tail);
  if (launch.interrupted) {
    outcome.status = AttemptState::kInterrupted;
    outcome.reason = std::string(Text(AttemptState::kInterrupted));
  } else if (launch.timed_out) {
    outcome.status = AttemptState::kTimedOut;
    outcome.reason = launch.failure_reason;
  } else if (!ingest.error().empty()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = "malformed trainer output: " + ingest.error();
  } else if (!launch.failure_reason.empty()) {
    outcome.status = AttemptState::kFailed;
    const std::string mpi_error = PermanentMpiError(launch.stderr_tail);
    if (!mpi_error.empty()) {
      outcome.reason = launch.failure_reason + ": " + mpi_error;
      decision.permanent = true;
    } else {
      outcome.reason = launch.failure_reason + (detail.empty() ? "" : ": " + detail);
      // A trainer that stopped before its run_start refused its input.
      decision.permanent = launch.permanent || (!launch.host_failure && !ingest.run_start_seen() && !detail.empty());
    }
  } else if (!ingest.run_end_ok()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = detail.empty() ? "the trainer exited without a run_end event with status ok"
                                    : "the trainer reported an error: " + detail;
  } else {
    outcome.status = AttemptState::kOk;
  }
  return decision;
}

}  // namespace dmlbench
