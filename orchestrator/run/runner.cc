#include "orchestrator/run/runner.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/statistics.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/ingest/ingest.h"
#include "orchestrator/launch/job_output.h"
#include "orchestrator/launch/trainer_command.h"
#include "orchestrator/plan/schedule.h"
#include "orchestrator/run/attempt.h"
#include "orchestrator/run/attempt_phases.h"
#include "orchestrator/run/job.h"
#include "orchestrator/run/outcome.h"
#include "orchestrator/run/output_dir.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/run/repetitions.h"

namespace dmlbench {
namespace {

// What a launch thread tells the sweep's thread, in the order it happened.
struct LaunchMessage {
  enum Kind { kLine, kStatus, kEnd };
  int job = 0;
  Kind kind = kLine;
  std::string text;              // a line of the job's stdout; what it waits on
  LaunchResult result;           // kEnd
  std::exception_ptr error;      // kEnd: Launch threw (it never should)
};

// The launches in flight, each on a thread of its own, and the mailbox
// their lines and ends arrive in. The launches are stopped by a flag of
// their own, raised once the sweep's cancel flag is (within kPollS) or
// when the sweep gives up (StopAll); every thread is joined before this
// goes.
class Launches {
 public:
  Launches(Launcher& launcher, const std::atomic<bool>& cancel) : launcher_(launcher), cancel_(cancel) {}
  ~Launches() { StopAll(); }
  Launches(const Launches&) = delete;
  Launches& operator=(const Launches&) = delete;

  // Starts job `job`'s launch of `spec`.
  void Start(int job, LaunchSpec spec) {
    spec.on_status = [this, job](const std::string& waiting_on) {
      Push({job, LaunchMessage::kStatus, waiting_on, {}, nullptr});
    };
    threads_.emplace(job, std::thread([this, job, spec = std::move(spec)] {
      LaunchMessage end{job, LaunchMessage::kEnd, "", {}, nullptr};
      try {
        end.result = launcher_.Launch(
            spec, [this, job](std::string_view line) { Push({job, LaunchMessage::kLine, std::string(line), {}, nullptr}); },
            stop_);
      } catch (...) {
        end.error = std::current_exception();
      }
      Push(std::move(end));
    }));
  }

  // The next message, waiting up to kPollS; false when none came.
  bool Next(LaunchMessage* message) {
    if (cancel_.load()) stop_ = true;
    std::unique_lock<std::mutex> lock(mutex_);
    if (!arrived_.wait_for(lock, std::chrono::duration<double>(kPollS), [this] { return !messages_.empty(); })) {
      return false;
    }
    *message = std::move(messages_.front());
    messages_.pop_front();
    return true;
  }

  // Job `job` ended (its kEnd was read): its thread is done.
  void Join(int job) {
    auto it = threads_.find(job);
    it->second.join();
    threads_.erase(it);
  }

  int in_flight() const { return static_cast<int>(threads_.size()); }

  // Stops every launch and waits for it; their messages are dropped.
  void StopAll() {
    stop_ = true;
    for (auto& [job, thread] : threads_) thread.join();
    threads_.clear();
  }

 private:
  static constexpr double kPollS = 0.05;

  void Push(LaunchMessage message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      messages_.push_back(std::move(message));
    }
    arrived_.notify_one();
  }

  Launcher& launcher_;
  const std::atomic<bool>& cancel_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<LaunchMessage> messages_;   // guarded by mutex_
  std::map<int, std::thread> threads_;   // this thread's alone
};

}  // namespace

// One sweep: the state Runner::Run shares between its steps.
class Runner::Sweep final : public JobOwner {
 public:
  Sweep(Runner& runner, const Experiment& experiment, const std::atomic<bool>& cancel)
      : store_(runner.store_), launcher_(runner.launcher_), options_(runner.options_),
        experiment_(experiment), cancel_(cancel), shown_(VaryingIn(experiment.runs)),
        tags_(TagsOf(experiment, options_)) {}

  SweepReport Run(const RunLock& lock) {
    if (!lock.Covers(store_.path())) {
      throw RunnerError(store_.path() + ": the sweep does not hold this database's run lock");
    }
    sweep_start_s_ = previous_end_s_ = MonotonicNow();
    report_.recovered = store_.RecoverInterrupted(UnixNow());
    RemoveOrphanedOutputDirs();  // an orchestrator killed before it could remove its own
    provenance_.trainer_sha256 = launcher_.TrainerSha256();
    AddGitState(experiment_.source_path, &provenance_);
    std::vector<PlanItem> planned =
        Plan(experiment_, store_, {options_.trainer, provenance_.trainer_sha256, options_.dataset_dir, options_.system});
    report_.planned = static_cast<int>(planned.size());
    std::vector<PlanItem> plan = Select(planned, options_.only, experiment_.name, provenance_.trainer_sha256);
    if (options_.slots) CheckSlots(plan, *options_.slots);
    PrepareHosts();
    // What only the prepared hosts know (a Slurm partition's CPUs): refused
    // before anything is asked of them, and before the sweep is recorded.
    if (const std::optional<LaunchCapacity> capacity = launcher_.Capacity()) {
      CheckSlots(plan, HostSlots{capacity->ranks, capacity->source});
    }
    capacity_.max_concurrent = launcher_.max_concurrent_runs();
    capacity_.hosts = launcher_.Hosts();
    report_.time.slots = SlotsOf(capacity_);
    // Every run the experiment plans belongs to it, chosen or not.
    AddExperimentRuns(planned);
    for (PlanItem& item : plan) item.run_id = run_ids_.at(item.run_key);
    NoteRunsMeasuredElsewhere(plan);
    // The runs it skips belong to the sweep as much as those it runs.
    TagRuns(plan);

    int done = 0;
    for (const PlanItem& item : plan) done += !Runnable(item);
    ProgressLine progress(options_.progress, options_.progress_redraws, static_cast<int>(plan.size()), done);
    const int remaining = static_cast<int>(plan.size()) - done;
    if (remaining > 0 && options_.before_first_launch) options_.before_first_launch();
    for (PlanItem& item : plan) {
      report_.runs.push_back(RunReport{item, false, std::nullopt});
      report_.exhausted += item.state != RunState::kComplete && Exhausted(item) &&
                           (options_.retry_failed || item.state != RunState::kFailed);
    }
    ExecuteAll(plan, 0, progress, remaining);
    progress.End();
    if (experiment_.execution.max_repetitions > 0) RepeatLoosePoints(plan);
    Tally();
    report_.time.wall_s = MonotonicNow() - sweep_start_s_;
    return std::move(report_);
  }

 private:
  // Executes the runnable items of plan (report_.runs from `first` on are
  // plan's items): the schedule (plan/schedule.h) says which job starts next
  // and on which hosts; each job's launch runs on a thread of its own
  // (Launches), as many at once as the hosts allow, and this thread alone
  // drives the jobs and touches the database: the launches' lines and ends
  // come to it in the order they happened. Starts no job once the sweep
  // stops (cancellation, a failure no retry can fix, a changed trainer);
  // the jobs in flight then end as their launches end them (cancelled ones
  // interrupted).
  void ExecuteAll(std::vector<PlanItem>& plan, std::size_t first, ProgressLine& progress, int remaining) {
    Schedule schedule(plan, ExecutionOrder(plan), experiment_.execution.runs_per_job,
                      [this, &plan](std::size_t i) { return Runnable(plan[i]); }, capacity_);
    Execution execution{plan, first, progress, remaining};
    execution_ = &execution;
    Launches launches(launcher_, cancel_);
    Job* last_line = nullptr;  // the job whose events were stored last
    try {
      while (true) {
        while (!Stopping()) {
          std::optional<ScheduledJob> next = schedule.FindWork();
          if (!next) break;
          // A job's group of events is committed before anything else is stored.
          if (last_line != nullptr) last_line->Flush();
          last_line = nullptr;
          StartJob(std::move(*next), schedule, launches);
        }
        if (launches.in_flight() == 0) {
          if (!Stopping()) {
            if (const auto unplaceable = schedule.Unplaceable()) {
              report_.stopped = Describe(plan[unplaceable->first].run.params, shown_) + " cannot start: " +
                                unplaceable->second;
            }
          }
          break;
        }
        LaunchMessage message;
        if (!launches.Next(&message)) continue;
        Job& job = *jobs_.at(message.job);
        if (message.error) std::rethrow_exception(message.error);
        if (message.kind == LaunchMessage::kStatus) {
          progress.Status(message.job, message.text);
          continue;
        }
        // One job's group of events is committed before another job's
        // events, or anything else, is stored.
        if (last_line != nullptr && (last_line != &job || message.kind != LaunchMessage::kLine)) {
          last_line->Flush();
        }
        last_line = nullptr;
        if (message.kind == LaunchMessage::kLine) {
          job.Line(message.text);
          last_line = &job;
        } else {
          const std::vector<std::size_t> again = job.End(message.result);
          progress.EndJob(message.job);
          schedule.Finished(job.scheduled(), again, launcher_.LostHosts());
          launches.Join(message.job);
          jobs_.erase(message.job);
        }
      }
    } catch (const StoreError& error) {
      for (auto& [id, job] : jobs_) job->KeepWhyStopped(error);
      launches.StopAll();
      jobs_.clear();
      execution_ = nullptr;
      throw;
    } catch (...) {
      launches.StopAll();
      jobs_.clear();
      execution_ = nullptr;
      throw;
    }
    execution_ = nullptr;
  }

  // Starts `scheduled`: its attempt begins and its launch runs.
  void StartJob(ScheduledJob scheduled, Schedule& schedule, Launches& launches) {
    const std::vector<PlanItem>& plan = execution_->plan;
    LaunchSpec spec = SpecOf(plan[scheduled.runs.front()]);
    if (scheduled.runs.size() > 1) {
      std::vector<const RunParams*> runs;
      for (std::size_t index : scheduled.runs) runs.push_back(&plan[index].run.params);
      spec.trainer_args = TrainerArgs(runs);
      spec.runs = static_cast<int>(runs.size());
      spec.timeout_s *= static_cast<double>(runs.size());
    }
    spec.hosts = scheduled.hosts;
    spec.sweep_ranks = std::max(scheduled.ranks, schedule.RemainingRanks());
    const int id = scheduled.id;
    auto job = std::make_unique<Job>(store_, *this, plan, std::move(scheduled), std::move(spec));
    Job& started = *job;
    jobs_[id] = std::move(job);
    started.Start(MonotonicNow());
    launches.Start(id, started.spec());
  }
  // Whether the sweep starts no more runs: cancelled, stopped by a failure
  // no retry can fix, or its trainer changed.
  bool Stopping() {
    report_.cancelled = report_.cancelled || cancel_.load();
    return report_.cancelled || !report_.stopped.empty() || TrainerChanged();
  }

  // After the planned runs: rounds of one more repetition for each point the
  // sweep chose whose interval is still wider than [execution]
  // interval_within asks, up to max_repetitions (run/repetitions.h). Each
  // round plans its runs against the database as the sweep did, so that a
  // repetition a sweep before added and completed is not run again, and
  // registers them with the experiment.
  void RepeatLoosePoints(const std::vector<PlanItem>& chosen) {
    std::set<std::string> points;
    for (const PlanItem& item : chosen) points.insert(ConfigurationJson(item.run.params));
    Experiment extended = experiment_;
    const PlanInputs inputs{options_.trainer, provenance_.trainer_sha256, options_.dataset_dir, options_.system};
    while (!report_.cancelled && report_.stopped.empty() && !cancel_.load()) {
      std::vector<PlanItem> items;
      for (PlanItem& item : Plan(extended, store_, inputs)) {
        if (points.count(ConfigurationJson(item.run.params))) items.push_back(std::move(item));
      }
      const RepetitionRound round = NextRepetitions(items, SteadyEpochMedians(), experiment_.execution);
      report_.still_loose = round.still_loose;
      if (round.more.empty()) return;
      Experiment next = experiment_;
      next.runs = round.more;
      std::vector<PlanItem> plan = Plan(next, store_, inputs);
      AddExperimentRuns(plan);
      for (PlanItem& item : plan) item.run_id = run_ids_.at(item.run_key);
      TagRuns(plan);
      extended.runs.insert(extended.runs.end(), round.more.begin(), round.more.end());
      report_.planned += static_cast<int>(plan.size());
      report_.more_repetitions += static_cast<int>(plan.size());
      const std::size_t first = report_.runs.size();
      int done = 0;
      for (PlanItem& item : plan) {
        report_.runs.push_back(RunReport{item, false, std::nullopt});
        done += !Runnable(item);
      }
      const int total = static_cast<int>(plan.size());
      if (done < total) {
        ProgressLine progress(options_.progress, options_.progress_redraws, total, done);
        ExecuteAll(plan, first, progress, total - done);
        progress.End();
      }
    }
  }

  // Gives the sweep's tags (the experiment's and the command line's) to
  // every run of `plan`.
  void TagRuns(const std::vector<PlanItem>& plan) {
    if (tags_.empty()) return;
    for (const PlanItem& item : plan) store_.TagRun(item.run_id, tags_, UnixNow());
  }

  // The median steady epoch time of every complete run, by run id.
  std::map<std::int64_t, double> SteadyEpochMedians() const {
    std::map<std::int64_t, std::vector<double>> epochs;
    for (const SteadyEpoch& epoch : store_.SteadyEpochs()) epochs[epoch.run_id].push_back(epoch.wall_s);
    std::map<std::int64_t, double> medians;
    for (const auto& [run_id, walls] : epochs) medians[run_id] = Median(walls);
    return medians;
  }

  // Plan indices in the order the runs are started: the plan's, or shuffled
  // with the experiment's order seed (a Fisher-Yates shuffle over
  // mt19937_64, the same on every platform), so that slow drift of the
  // machine does not line up with the matrix (Hoefler & Belli, rule 7).
  std::vector<std::size_t> ExecutionOrder(const std::vector<PlanItem>& plan) const {
    std::vector<std::size_t> order(plan.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (!experiment_.execution.shuffled) return order;
    std::mt19937_64 random(experiment_.execution.order_seed);
    for (std::size_t i = order.size(); i > 1; --i) {
      // Uniform in [0, i) without modulo bias.
      const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                  std::numeric_limits<std::uint64_t>::max() % i;
      std::uint64_t draw;
      do {
        draw = random();
      } while (draw >= limit);
      std::swap(order[i - 1], order[draw % i]);
    }
    return order;
  }

  // Whether the trainer is no longer the build the sweep planned its runs for
  // (rebuilt in place while the sweep ran); then the sweep stops, before the
  // next run, with what to do: a run of the new build stored under the old
  // build's key would be a lie the database cannot catch later.
  bool TrainerChanged() {
    const std::string now = launcher_.TrainerSha256();
    if (now == provenance_.trainer_sha256) return false;
    const std::string trainer = options_.trainer.empty() ? "" : " " + options_.trainer;
    report_.stopped = "the trainer" + trainer + " changed while the sweep ran (sha256 " +
                      provenance_.trainer_sha256.substr(0, 12) + " when it began, " + now.substr(0, 12) +
                      " now); the runs left are planned for the build it began with. Run again to plan them for "
                      "this build, or pass --trainer a copy that stays put";
    return true;
  }

  // Connects and provisions the hosts; records their facts. The time it
  // takes is the first attempt's host_preparation.
  void PrepareHosts() {
    const double start = MonotonicNow();
    for (const HostFacts& host : launcher_.Prepare()) host_ids_[host.name] = store_.AddHost(host, UnixNow());
    host_preparation_s_ = MonotonicNow() - start;
  }

  // "0.15 core", "uncapped" (hosts without the tag), "0.15 core, uncapped".
  static std::string Listed(const std::set<std::string>& shares) {
    std::string text;
    for (const std::string& share : shares) {
      text += (text.empty() ? "" : ", ") + (share == "0" ? std::string("uncapped") : share + " core");
    }
    return text;
  }

  // Counts the chosen runs, complete before this sweep, whose hosts had
  // another CPU share than the hosts prepared now (SweepReport).
  void NoteRunsMeasuredElsewhere(const std::vector<PlanItem>& plan) {
    if (host_ids_.empty()) return;
    std::vector<std::int64_t> prepared;
    for (const auto& [name, id] : host_ids_) prepared.push_back(id);
    const std::set<std::string> now = store_.HostCpuShares(prepared);
    const std::map<std::int64_t, std::set<std::string>> complete = store_.CompleteRunCpuShares();
    std::set<std::string> then;
    for (const PlanItem& item : plan) {
      if (item.state != RunState::kComplete) continue;
      const auto shares = complete.find(item.run_id);
      if (shares == complete.end() || shares->second == now) continue;  // no host recorded: an old database
      ++report_.measured_elsewhere;
      then.insert(shares->second.begin(), shares->second.end());
    }
    if (report_.measured_elsewhere) report_.elsewhere = Listed(then) + " (these hosts: " + Listed(now) + ")";
  }

  // Registers the experiment and every run of it in one transaction: runs
  // not stored yet are added as pending, and all become its members.
  void AddExperimentRuns(const std::vector<PlanItem>& plan) {
    std::vector<NewRun> runs;
    runs.reserve(plan.size());
    for (const PlanItem& item : plan) {
      RunProvenance provenance = provenance_;
      provenance.dataset_sha256 = item.dataset_sha256;
      provenance.system = options_.system;
      runs.push_back(NewRun{&item.run, item.run_key, std::move(provenance)});
    }
    std::vector<std::int64_t> run_ids;
    store_.AddExperimentRuns(experiment_, runs, UnixNow(), &run_ids);
    for (std::size_t i = 0; i < plan.size(); ++i) run_ids_[plan[i].run_key] = run_ids[i];
  }

  // `attempts` bounds the failed tries of a run over every sweep: a run that
  // failed that often is not tried again, with or without --retry-failed,
  // until the bound is raised (or the run forgotten). Interrupted attempts
  // do not count: they say nothing about the run.
  int Bound() const { return std::max(1, experiment_.execution.attempts); }
  bool Exhausted(const PlanItem& item) const { return item.failures >= Bound(); }

  // Whether the sweep runs `item`: it is not complete, has tries left, and
  // is not failed when failed runs are kept (--no-retry-failed).
  bool Runnable(const PlanItem& item) const {
    return item.state != RunState::kComplete && !Exhausted(item) &&
           (options_.retry_failed || item.state != RunState::kFailed);
  }

  // The experiment's tags, then the command line's, each once.
  static std::vector<std::string> TagsOf(const Experiment& experiment, const RunnerOptions& options) {
    std::vector<std::string> tags = experiment.tags;
    for (const std::string& tag : options.tags) {
      if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
    }
    return tags;
  }

  // JobOwner: what the jobs of ExecuteAll ask of the sweep.
  std::unique_ptr<Attempt> BeginAttempt(int job, std::size_t index, double launch_s) override {
    PlanItem& item = execution_->plan[index];
    RunReport& run = report_.runs[execution_->first + index];
    if (!run.ran_now) execution_->progress.SetRemaining(execution_->remaining--);
    run.ran_now = true;
    execution_->progress.StartRun(job, Describe(item.run.params, shown_), item.attempts + 1, item.run.params.epochs);
    // The hosts' preparation not yet given to an attempt becomes this one's.
    AttemptClock clock{previous_end_s_, host_preparation_s_};
    host_preparation_s_ = 0;
    clock.launch_s = launch_s;
    return std::make_unique<Attempt>(store_, item, SweepOrder{experiment_.execution.order_seed, position_++}, clock);
  }

  // Stores how `attempt` of the item ended (its hosts those of the
  // decision's outcome) and moves the item to its new state. Returns
  // whether the run is done trying: complete, failed for good or
  // interrupted.
  bool Conclude(int job, std::size_t index, Attempt& attempt, const Decision& decision) override {
    PlanItem& item = execution_->plan[index];
    const bool done = Conclude(job, item, attempt, decision);
    report_.runs[execution_->first + index].item = item;
    return done;
  }

  void Account(Attempt& attempt, double end_s, int ranks) override {
    const std::vector<PhaseTime> phases = attempt.StorePhases(end_s);
    report_.time.Add(phases, ranks);
    RunEnded(end_s);
  }

  void RunEnded(double end_s) override { previous_end_s_ = std::max(previous_end_s_, end_s); }

  void Epochs(int job, int epochs) override { execution_->progress.Epoch(job, epochs); }

  bool Conclude(int job, PlanItem& item, Attempt& attempt, const Decision& decision) {
    ProgressLine& progress = execution_->progress;
    const AttemptOutcome& outcome = decision.outcome;
    const bool failed = outcome.status != AttemptState::kOk && outcome.status != AttemptState::kInterrupted;
    item.attempts += 1;
    // A lost host is not the run's fault: the launcher left it out, and the
    // run is tried again on the others without using up its attempts.
    item.failures += failed && !outcome.host_failure;
    RunDisposition disposition = RunDisposition::kRetry;
    if (outcome.status == AttemptState::kInterrupted) {
      disposition = RunDisposition::kInterrupted;
    } else if (failed && (decision.permanent || item.failures >= Bound())) {
      disposition = RunDisposition::kFailed;
    }
    store_.FinishAttempt(item.run_id, attempt.id(), outcome, disposition, HostIds(outcome.hosts));
    if (outcome.status == AttemptState::kOk) {
      item.state = RunState::kComplete;
      item.failure_reason.clear();
      progress.FinishRun(job, true, std::string(Text(RunState::kComplete)));
      return true;
    }
    item.failure_reason = outcome.reason;
    if (disposition == RunDisposition::kInterrupted) {
      item.state = RunState::kInterrupted;
      report_.cancelled = true;
      progress.FinishRun(job, false, std::string(Text(RunState::kInterrupted)));
      return true;
    }
    if (disposition == RunDisposition::kFailed) {
      item.state = RunState::kFailed;
      progress.FinishRun(job, false, std::string(Text(RunState::kFailed)) + ": " + outcome.reason);
      if (decision.permanent) {
        report_.stopped = Describe(item.run.params, shown_) +
                          " failed with an error that every attempt would meet: " + outcome.reason;
      }
      return true;
    }
    return false;
  }

  LaunchSpec SpecOf(const PlanItem& item) const {
    const RunParams& params = item.run.params;
    LaunchSpec spec;
    spec.run_key = item.run_key;
    spec.ranks = params.ranks();
    spec.trainer_args = TrainerArgs(params);
    spec.dataset_dir = params.dataset == "synthetic" ? "" : options_.dataset_dir;
    spec.network = params.network;
    spec.timeout_s = experiment_.execution.timeout_s;
    return spec;
  }

  std::vector<std::int64_t> HostIds(const std::vector<std::string>& names) const override {
    std::vector<std::int64_t> ids;
    for (const std::string& name : names) {
      if (auto it = host_ids_.find(name); it != host_ids_.end()) ids.push_back(it->second);
    }
    return ids;
  }

  // The slots the sweep's utilisation is counted against: the hosts', a
  // Slurm partition's, the inventory's, else this machine's cores.
  int SlotsOf(const JobCapacity& capacity) const {
    int slots = 0;
    for (const LaunchHost& host : capacity.hosts) slots += host.slots;
    if (slots > 0) return slots;
    if (const std::optional<LaunchCapacity> partition = launcher_.Capacity()) return partition->ranks;
    if (options_.slots) return options_.slots->slots;
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  // Counts the runs by state and reads the measures of the complete ones.
  void Tally() {
    for (RunReport& run : report_.runs) {
      if (run.item.state == RunState::kComplete) {
        ++report_.complete;
        run.measures = store_.CompleteRunMeasures(run.item.run_id);
      } else if (run.item.state == RunState::kFailed) {
        ++report_.failed;
      } else if (run.item.state == RunState::kInterrupted) {
        ++report_.interrupted;
      } else {
        ++report_.pending;
      }
    }
  }

  Store& store_;
  Launcher& launcher_;
  const RunnerOptions& options_;
  const Experiment& experiment_;
  const std::atomic<bool>& cancel_;
  const ShownParams shown_;  // what progress labels name: the parameters the matrix varies
  const std::vector<std::string> tags_;  // given to every run the sweep considers
  SweepReport report_;
  RunProvenance provenance_;
  std::map<std::string, std::int64_t> host_ids_;
  std::map<std::string, std::int64_t> run_ids_;  // by run key
  // Monotonic seconds: the sweep's start, the last attempt's end, and the
  // hosts' preparation not yet given to an attempt.
  double sweep_start_s_ = 0, previous_end_s_ = 0, host_preparation_s_ = 0;
  int position_ = 0;      // the next attempt's place in the sweep's order
  JobCapacity capacity_;  // what the schedule hands out: the launcher's hosts
  // What ExecuteAll is executing, while it does; and its jobs in flight.
  struct Execution {
    std::vector<PlanItem>& plan;
    std::size_t first;  // report_.runs[first + i] is plan[i]
    ProgressLine& progress;
    int remaining;      // runs not yet begun
  };
  Execution* execution_ = nullptr;
  std::map<int, std::unique_ptr<Job>> jobs_;  // by ScheduledJob::id
};

Runner::Runner(Store& store, Launcher& launcher, RunnerOptions options)
    : store_(store), launcher_(launcher), options_(std::move(options)) {}

SweepReport Runner::Run(const Experiment& experiment, const RunLock& lock, const std::atomic<bool>& cancel) {
  store_.logs_dir();  // where every attempt's output goes; refused (a database of two names) before any run
  return Sweep(*this, experiment, cancel).Run(lock);
}

}  // namespace dmlbench
