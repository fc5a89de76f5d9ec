#include "orchestrator/run/outcome.h"

#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/core/statistics.h"

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

// What Open MPI says when it could not start its daemon on a host (one
// unreachable, or its sshd gone): worth another attempt; "" otherwise.
std::string DaemonStartError(const std::string& stderr_tail) {
  if (stderr_tail.find("ORTE was unable to reliably start one or more daemons") == std::string::npos) return "";
  return "Open MPI could not start its daemon on a host (unreachable, or its sshd down)";
}

// Open MPI's sentence on a rank that a signal ended, "process rank 1 with
// PID 23497 on node h2 exited on signal 9 (Killed)", as "rank 1 on node h2
// exited on signal 9 (Killed)"; "" when mpirun's stderr has none. An exit
// status of 137 says only that some rank died.
std::string RankSignal(const std::string& stderr_tail) {
  const size_t signal = stderr_tail.find(" exited on signal ");
  if (signal == std::string::npos) return "";
  const size_t rank = stderr_tail.rfind("process rank ", signal);
  const size_t pid = stderr_tail.find(" with PID ", rank);
  const size_t node = stderr_tail.find(" on node ", rank);
  if (rank == std::string::npos || pid == std::string::npos || node == std::string::npos || node > signal) return "";
  size_t end = stderr_tail.find_first_of(".\n", signal);
  const size_t close = stderr_tail.find(')', signal);
  if (close != std::string::npos && close < stderr_tail.find('\n', signal)) end = close + 1;
  return "rank " + stderr_tail.substr(rank + 13, pid - rank - 13) + stderr_tail.substr(node, signal - node) +
         stderr_tail.substr(signal, end - signal);
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
  outcome.slurm = launch.slurm;
  const std::string detail = TrainerDetail(ingest, launch.stderr_tail);
  if (launch.interrupted) {
    outcome.status = AttemptState::kInterrupted;
    outcome.reason = std::string(Text(AttemptState::kInterrupted));
  } else if (launch.timed_out) {
    outcome.status = AttemptState::kTimedOut;
    outcome.reason = launch.failure_reason;
  } else if (!ingest.error().empty() && (ingest.run_start_seen() || launch.failure_reason.empty())) {
    // Before run_start a failed job's output is mpirun's, not the
    // trainer's: the launch's failure below says more.
    outcome.status = AttemptState::kFailed;
    outcome.reason = "malformed trainer output: " + ingest.error();
  } else if (!launch.failure_reason.empty()) {
    outcome.status = AttemptState::kFailed;
    const std::string mpi_error = PermanentMpiError(launch.stderr_tail);
    if (!mpi_error.empty()) {
      outcome.reason = launch.failure_reason + ": " + mpi_error;
      decision.permanent = true;
    } else {
      std::string signalled = RankSignal(launch.stderr_tail);
      if (signalled.empty()) signalled = DaemonStartError(launch.stderr_tail);
      outcome.reason = launch.failure_reason + (detail.empty() ? "" : ": " + detail) +
                       (signalled.empty() ? "" : ": " + signalled);
      // A trainer that stopped before its run_start refused its input.
      decision.permanent = launch.permanent || (!launch.host_failure && !ingest.run_start_seen() && !detail.empty());
    }
  } else if (!ingest.run_end_ok()) {
    outcome.status = AttemptState::kFailed;
    outcome.reason = detail.empty() ? "the trainer exited without a run_end event with status ok"
                                    : "the trainer reported an error: " + detail;
  } else {
    outcome.status = AttemptState::kOk;
    outcome.note = SlowEpochNote(ingest.epoch_wall_s());
  }
  return decision;
}

std::string SlowEpochNote(const std::vector<double>& epoch_wall_s) {
  if (epoch_wall_s.size() < 3) return "";
  const std::vector<double> steady(epoch_wall_s.begin() + 1, epoch_wall_s.end());
  int slow = 0;
  std::size_t slowest = 0;  // index into steady
  double slowest_median = 0;
  for (std::size_t i = 0; i < steady.size(); ++i) {
    std::vector<double> others = steady;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    const double median = Median(others);
    if (steady[i] <= kSlowEpochFactor * median) continue;
    if (slow++ == 0 || steady[i] / median > steady[slowest] / slowest_median) {
      slowest = i;
      slowest_median = median;
    }
  }
  if (slow == 0) return "";
  std::ostringstream note;
  if (slow > 1) {
    note << slow << " epochs took over " << kSlowEpochFactor
         << " times the median of the run's other steady epochs; the slowest, ";
  }
  note << std::fixed << "epoch " << slowest + 2 << " took " << std::setprecision(1) << steady[slowest] << " s, "
       << steady[slowest] / slowest_median << " times the median of the run's other steady epochs ("
       << std::setprecision(3) << slowest_median << " s): something stalled " << (slow > 1 ? "them" : "it")
       << ", such as a link down";
  return note.str();
}

}  // namespace dmlbench
