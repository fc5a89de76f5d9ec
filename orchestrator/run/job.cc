#include "orchestrator/run/job.h"

#include <fstream>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/job_output.h"

namespace dmlbench {
namespace {

// Hands the ingest each line rank `rank` (not 0) printed on its standard
// output, where an event is malformed output: events come from rank 0.
void CheckOtherRank(Ingest& ingest, int rank, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LineSplitter lines;
  const LineSplitter::Sink sink = [&](std::string_view line) { ingest.ConsumeOtherRank(rank, line); };
  std::vector<char> buffer(1 << 16);
  while (ingest.error().empty() &&
         (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)) {
    lines.Add(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())), sink);
  }
  lines.Finish(sink);
}

// The files a job's output directory holds, as the attempt's logs; each
// line another rank printed on its standard output goes to `ingest`
// (CheckOtherRank).
std::vector<AttemptLog> JobLogs(const std::string& output_dir, Ingest& ingest) {
  std::vector<AttemptLog> logs;
  for (const JobOutputFile& file : ListJobOutput(output_dir)) {
    logs.push_back({file.rank, file.stream, file.path});
    if (file.rank.value_or(0) > 0 && file.stream == "stdout") CheckOtherRank(ingest, *file.rank, file.path);
  }
  return logs;
}

}  // namespace

Job::Job(Store& store, JobOwner& owner, const std::vector<PlanItem>& plan, ScheduledJob scheduled, LaunchSpec spec)
    : store_(store), owner_(owner), plan_(plan), scheduled_(std::move(scheduled)), spec_(std::move(spec)) {
  spec_.output_dir = output_.path();
}

void Job::Start(double launch_s) { current_ = owner_.BeginAttempt(scheduled_.id, scheduled_.runs[position_], launch_s); }

void Job::Line(std::string_view line) {
  Ingest& ingest = current_->ingest();
  ingest.Consume(line);
  owner_.Epochs(scheduled_.id, ingest.epochs_stored());
  // The last run, and a run that did not end well, end with the job.
  if (position_ + 1 == scheduled_.runs.size() || !ingest.run_end_ok() || !ingest.error().empty()) return;
  current_->clock().returned_s = MonotonicNow();
  ingest.Flush();
  Decision decision = DecideOutcome(LaunchResult{}, ingest, UnixNow());
  decision.outcome.exit_code.reset();  // the job's, once it ended
  owner_.Conclude(scheduled_.id, scheduled_.runs[position_], *current_, decision);
  const double end_s = MonotonicNow();
  owner_.RunEnded(end_s);
  ended_.push_back({std::move(current_), end_s});
  ++position_;
  current_ = owner_.BeginAttempt(scheduled_.id, scheduled_.runs[position_], end_s);
}

void Job::Flush() {
  if (current_) current_->ingest().Flush();
}

std::vector<std::size_t> Job::End(const LaunchResult& launch) {
  current_->clock().returned_s = MonotonicNow();
  // The links were shaped before the first run's mpirun.
  (ended_.empty() ? current_->clock() : ended_.front().attempt->clock()).link_shaping_s = launch.link_shaping_s;
  Ingest& ingest = current_->ingest();
  ingest.Flush();
  const std::vector<AttemptLog> logs = JobLogs(output_.path(), ingest);
  for (Ended& run : ended_) {
    store_.AddAttemptJob(run.attempt->id(), launch.exit_code, launch.command_line, launch.hosts,
                         owner_.HostIds(launch.hosts), launch.slurm);
    store_.KeepAttemptLogs(run.attempt->id(), logs);
    owner_.Account(*run.attempt, run.end_s, scheduled_.ranks);
  }
  store_.KeepAttemptLogs(current_->id(), logs);
  const std::size_t index = scheduled_.runs[position_];
  const bool done = owner_.Conclude(scheduled_.id, index, *current_, DecideOutcome(launch, ingest, UnixNow()));
  owner_.Account(*current_, MonotonicNow(), scheduled_.ranks);
  std::vector<std::size_t> again;
  if (!done) again.push_back(index);
  again.insert(again.end(), scheduled_.runs.begin() + static_cast<std::ptrdiff_t>(position_) + 1,
               scheduled_.runs.end());
  return again;
}

void Job::KeepWhyStopped(const StoreError& error) {
  if (current_) current_->KeepWhyStopped(error);
}

}  // namespace dmlbench
