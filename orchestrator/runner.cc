#include "orchestrator/runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

#include "orchestrator/ingest.h"
#include "orchestrator/local_launcher.h"
#include "orchestrator/sha256.h"

namespace dmlbench {
namespace {

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double MonotonicNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Shortest text that reads back as the same double.
std::string ExactDouble(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::string Clock(double seconds) {
  const long total = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

// Held for the whole sweep: a second `run` on the same database is refused
// rather than both marking each other's runs interrupted. The kernel drops
// the lock when the process dies, however it dies.
class RunLock {
 public:
  explicit RunLock(const std::string& db_path) {
    const std::string path = db_path + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw RunnerError("cannot create lock file " + path + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw RunnerError(db_path + ": another `dmlbench run` is using this database");
    }
  }
  ~RunLock() { ::close(fd_); }
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Git commit and dirty flag of the repository holding `file`; both empty
// outside a repository or without git.
void GitState(const std::string& file, RunProvenance* provenance) {
  std::string dir = std::filesystem::path(file).parent_path().string();
  if (dir.empty()) dir = ".";
  const CommandOutput head = RunCommand({"git", "-C", dir, "rev-parse", "HEAD"}, 10);
  if (head.exit_code != 0) return;
  provenance->git_commit = head.out.substr(0, head.out.find('\n'));
  const CommandOutput status =
      RunCommand({"git", "-C", dir, "status", "--porcelain", "--untracked-files=no"}, 10);
  if (status.exit_code == 0) provenance->git_dirty = !status.out.empty();
}

// The trainer's own one-line error, from its run_end or its stderr.
std::string TrainerDetail(const Ingest& ingest, const std::string& stderr_tail) {
  if (!ingest.trainer_error().empty()) return ingest.trainer_error();
  const std::string marker = "dmlbench-trainer: error: ";
  const size_t at = stderr_tail.rfind(marker);
  if (at == std::string::npos) return "";
  const size_t end = stderr_tail.find('\n', at);
  return stderr_tail.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Decides how an attempt ended from the launch result and what was ingested.
AttemptOutcome Decide(const LaunchResult& launch, const Ingest& ingest) {
  AttemptOutcome outcome;
  outcome.exit_code = launch.exit_code;
  outcome.stderr_tail = launch.stderr_tail;
  outcome.command_line = launch.command_line;
  outcome.hosts = launch.hosts;
  outcome.host_failure = launch.host_failure;
  outcome.end_unix_s = UnixNow();
  const std::string detail = TrainerDetail(ingest, launch.stderr_tail);
  if (launch.interrupted) {
    outcome.status = "interrupted";
    outcome.reason = "interrupted";
  } else if (launch.timed_out) {
    outcome.status = "timed_out";
    outcome.reason = launch.failure_reason;
  } else if (!ingest.error().empty()) {
    outcome.status = "failed";
    outcome.reason = "malformed trainer output: " + ingest.error();
  } else if (!launch.failure_reason.empty()) {
    outcome.status = "failed";
    outcome.reason = launch.failure_reason + (detail.empty() ? "" : ": " + detail);
  } else if (!ingest.run_end_ok()) {
    outcome.status = "failed";
    outcome.reason = detail.empty() ? "the trainer exited without a run_end event with status ok"
                                    : "the trainer reported an error: " + detail;
  } else {
    outcome.status = "ok";
  }
  return outcome;
}

// The live progress line: runs done/total, current run, elapsed, ETA.
class Progress {
 public:
  Progress(std::ostream* out, bool redraw, int total, int done)
      : out_(out), redraw_(redraw), total_(total), done_(done), start_(MonotonicNow()) {}

  void StartRun(const std::string& what, int attempt, int epochs) {
    what_ = what;
    attempt_ = attempt;
    epochs_ = epochs;
    epochs_done_ = 0;
    run_start_ = MonotonicNow();
    Show();
  }

  void Epoch(int epochs_done) {
    epochs_done_ = epochs_done;
    if (redraw_) Show();
  }

  void FinishRun(bool counted, const std::string& outcome) {
    durations_.push_back(MonotonicNow() - run_start_);
    if (counted) ++done_;
    if (!out_) return;
    if (redraw_) *out_ << "\r\033[K";
    *out_ << "[" << done_ << "/" << total_ << "] " << what_ << ": " << outcome << " ("
          << Clock(durations_.back()) << ")\n";
    out_->flush();
  }

  void SetRemaining(int remaining) { remaining_ = remaining; }

  void End() {
    if (out_ && redraw_) {
      *out_ << "\r\033[K";
      out_->flush();
    }
  }

 private:
  void Show() {
    if (!out_) return;
    const double now = MonotonicNow();
    std::ostringstream line;
    line << "[" << done_ << "/" << total_ << "] " << what_;
    if (attempt_ > 1) line << " attempt " << attempt_;
    line << " epoch " << epochs_done_ << "/" << epochs_ << " | elapsed " << Clock(now - start_) << " | ETA ";
    if (durations_.empty()) {
      line << "--";
    } else {
      double sum = 0;
      for (double d : durations_) sum += d;
      const double mean = sum / static_cast<double>(durations_.size());
      line << Clock(std::max(0.0, mean * remaining_ - (now - run_start_)));
    }
    if (redraw_) {
      *out_ << "\r\033[K" << line.str();
    } else {
      *out_ << line.str() << "\n";
    }
    out_->flush();
  }

  std::ostream* out_;
  bool redraw_;
  int total_;
  int done_;
  int remaining_ = 0;
  double start_;
  double run_start_ = 0;
  std::vector<double> durations_;
  std::string what_;
  int attempt_ = 1;
  int epochs_ = 0;
  int epochs_done_ = 0;
};

}  // namespace

std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir) {
  if (params.dataset == "synthetic") {
    return "synthetic:" + std::to_string(params.seed) + ":" + std::to_string(kSyntheticTrainSamples);
  }
  // Hashed once per directory: a sweep reads one, and 30 MB per run would
  // dominate `plan`.
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(dataset_dir); it != cache.end()) return it->second;
  std::vector<std::string> files;
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    std::string file = dataset_dir + "/" + base + ".gz";
    if (!std::filesystem::is_regular_file(file)) file = dataset_dir + "/" + base;
    if (!std::filesystem::is_regular_file(file)) {
      throw RunnerError(dataset_dir + ": neither " + base + ".gz nor " + base + " found");
    }
    files.push_back(file);
  }
  try {
    return cache[dataset_dir] = Sha256FilesHex(files);
  } catch (const Sha256Error& e) {
    throw RunnerError(e.what());
  }
}

std::vector<std::string> TrainerArgs(const RunParams& p) {
  std::string hidden;
  for (size_t i = 0; i < p.hidden.size(); ++i) hidden += (i ? "," : "") + std::to_string(p.hidden[i]);
  std::vector<std::string> args = {
      "--architecture", p.architecture,
      "--servers", std::to_string(p.architecture == "ps" ? p.servers : 0),
      "--epochs", std::to_string(p.epochs),
      "--batch-size", std::to_string(p.batch_size),
      "--hidden", hidden,
      "--learning-rate", ExactDouble(p.learning_rate),
      "--seed", std::to_string(p.seed),
      "--max-iterations-per-epoch", std::to_string(p.max_iterations_per_epoch),
      "--bucket-bytes", std::to_string(p.bucket_bytes)};
  if (p.overlap) args.push_back("--overlap");
  if (p.dataset == "synthetic") {
    args.push_back("--synthetic");
    args.push_back(std::to_string(kSyntheticTrainSamples));
  }
  args.insert(args.end(), {"--events", "-", "--quiet"});
  return args;
}

std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const std::string& trainer_sha256,
                           const std::string& dataset_dir) {
  std::vector<PlanItem> items;
  items.reserve(experiment.runs.size());
  std::vector<std::string> keys;
  keys.reserve(experiment.runs.size());
  for (const PlannedRun& run : experiment.runs) {
    PlanItem item;
    item.run = run;
    item.dataset_sha256 = DatasetChecksum(run.params, dataset_dir);
    item.run_key = RunKey(run.params, trainer_sha256, item.dataset_sha256);
    keys.push_back(item.run_key);
    items.push_back(std::move(item));
  }
  const auto stored = store.FindRuns(keys);
  for (PlanItem& item : items) {
    auto it = stored.find(item.run_key);
    if (it == stored.end()) {
      item.state = "pending";
      continue;
    }
    const StoredRun& run = it->second;
    item.state = run.status == "complete" ? "done" : run.status;
    item.attempts = run.attempts;
    item.failure_reason = run.failure_reason;
    // The split was decided when the run was first planned and never changes.
    item.run.split = run.split;
  }
  return items;
}

Runner::Runner(Store& store, Launcher& launcher, RunnerOptions options)
    : store_(store), launcher_(launcher), options_(std::move(options)) {}

SweepReport Runner::Run(const Experiment& experiment, const std::atomic<bool>& cancel) {
  RunLock lock(store_.path());
  SweepReport report;
  const std::vector<HostFacts> hosts = launcher_.Prepare();
  std::map<std::string, std::int64_t> host_ids;
  for (const HostFacts& host : hosts) host_ids[host.name] = store_.AddHost(host, UnixNow());
  const std::int64_t experiment_id = store_.AddExperiment(experiment, UnixNow());
  report.recovered = store_.RecoverInterrupted(UnixNow());

  RunProvenance provenance;
  provenance.trainer_sha256 = launcher_.TrainerSha256();
  GitState(experiment.source_path, &provenance);
  std::vector<PlanItem> plan = Plan(experiment, store_, provenance.trainer_sha256, options_.dataset_dir);

  int done = 0;
  for (const PlanItem& item : plan) done += item.state == "done";
  Progress progress(options_.progress, options_.progress_redraws, static_cast<int>(plan.size()), done);
  int remaining = static_cast<int>(plan.size()) - done;

  for (PlanItem& item : plan) {
    RunReport run_report{item, false, std::nullopt};
    if (item.state == "done" || report.cancelled || cancel.load()) {
      report.cancelled = report.cancelled || cancel.load();
      report.runs.push_back(std::move(run_report));
      continue;
    }
    const RunParams& params = item.run.params;
    provenance.dataset_sha256 = item.dataset_sha256;
    const std::int64_t run_id = store_.AddRun(experiment_id, item.run, item.run_key, provenance);
    progress.SetRemaining(remaining);

    LaunchSpec spec;
    spec.run_key = item.run_key;
    spec.ranks = params.ranks();
    spec.trainer_args = TrainerArgs(params);
    spec.dataset_dir = params.dataset == "synthetic" ? "" : options_.dataset_dir;
    spec.network = params.network;
    spec.timeout_s = experiment.execution.timeout_s;

    const int attempts = std::max(1, experiment.execution.attempts);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      const std::int64_t attempt_id = store_.BeginAttempt(run_id, UnixNow());
      progress.StartRun(Describe(params), attempt, params.epochs);
      Ingest ingest(store_, run_id, attempt_id);
      const LaunchResult launch = launcher_.Launch(
          spec,
          [&](std::string_view line) {
            ingest.Consume(line);
            progress.Epoch(ingest.epochs_stored());
          },
          cancel);
      ingest.Flush();
      const AttemptOutcome outcome = Decide(launch, ingest);
      RunDisposition disposition = RunDisposition::kRetry;
      if (outcome.status == "interrupted") {
        disposition = RunDisposition::kInterrupted;
      } else if (attempt == attempts) {
        disposition = RunDisposition::kFailed;
      }
      std::vector<std::int64_t> used_hosts;
      for (const std::string& name : launch.hosts) {
        if (auto it = host_ids.find(name); it != host_ids.end()) used_hosts.push_back(it->second);
      }
      store_.FinishAttempt(run_id, attempt_id, outcome, disposition, used_hosts);
      item.attempts += 1;
      if (outcome.status == "ok") {
        item.state = "done";
        item.failure_reason.clear();
        progress.FinishRun(true, "complete");
        break;
      }
      item.failure_reason = outcome.reason;
      if (disposition == RunDisposition::kInterrupted) {
        item.state = "interrupted";
        report.cancelled = true;
        progress.FinishRun(false, "interrupted");
        break;
      }
      if (disposition == RunDisposition::kFailed) {
        item.state = "failed";
        progress.FinishRun(false, "failed: " + outcome.reason);
      }
    }
    --remaining;
    run_report.item = item;
    run_report.ran_now = true;
    report.runs.push_back(std::move(run_report));
  }
  progress.End();

  for (RunReport& run : report.runs) {
    if (run.item.state == "done") {
      ++report.complete;
      const auto stored = store_.FindRuns({run.item.run_key});
      if (auto it = stored.find(run.item.run_key); it != stored.end()) {
        run.measures = store_.CompleteRunMeasures(it->second.run_id);
      }
    } else if (run.item.state == "failed") {
      ++report.failed;
    } else if (run.item.state == "interrupted") {
      ++report.interrupted;
    } else {
      ++report.pending;
    }
  }
  return report;
}

}  // namespace dmlbench
