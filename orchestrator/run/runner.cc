#include "orchestrator/run/runner.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
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
#include "orchestrator/run/attempt_phases.h"
#include "orchestrator/run/outcome.h"
#include "orchestrator/run/output_dir.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/run/repetitions.h"

namespace dmlbench {
namespace {

// How long a sweep stopped by its database tries to store why (a full disk
// freed again within this is common: a log rotated, a file deleted).
constexpr double kStoreRetryS = 10;

}  // namespace

// One sweep: the state Runner::Run shares between its steps.
class Runner::Sweep {
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
    // Every run the experiment plans belongs to it, chosen or not.
    AddExperimentRuns(planned);
    for (PlanItem& item : plan) item.run_id = run_ids_.at(item.run_key);
    NoteRunsMeasuredElsewhere(plan);
    // The runs it skips belong to the sweep as much as those it runs.
    TagRuns(plan);

    int done = 0;
    for (const PlanItem& item : plan) done += !Runnable(item);
    ProgressLine progress(options_.progress, options_.progress_redraws, static_cast<int>(plan.size()), done);
    int remaining = static_cast<int>(plan.size()) - done;
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
  // Executes the runnable items of plan, in the sweep's order; report_.runs
  // from `first` on are plan's items. With [execution] runs_per_job above
  // 1, a run of several epochs shares its job with the next runnable ones
  // in that order that can (Shareable, SameJob), never with another
  // repetition of its own configuration:
  // repetitions stay as independent as separate launches make them (each
  // its own processes, placement and connections). Stops at cancellation,
  // at a failure no retry can fix and when the trainer changed.
  void ExecuteAll(std::vector<PlanItem>& plan, std::size_t first, ProgressLine& progress, int remaining) {
    const std::vector<std::size_t> order = ExecutionOrder(plan);
    const std::size_t per_job = static_cast<std::size_t>(std::max(1, experiment_.execution.runs_per_job));
    std::vector<bool> taken(plan.size(), false);
    for (std::size_t at = 0; at < order.size(); ++at) {
      const std::size_t index = order[at];
      if (taken[index] || !Runnable(plan[index])) continue;
      if (Stopping()) break;
      sweep_ranks_ = 0;
      for (std::size_t later = at; later < order.size(); ++later) {
        if (!taken[order[later]] && Runnable(plan[order[later]])) {
          sweep_ranks_ = std::max(sweep_ranks_, plan[order[later]].run.params.ranks());
        }
      }
      std::vector<std::size_t> job = {index};
      std::set<std::string> points = {ConfigurationJson(plan[index].run.params)};
      for (std::size_t later = at + 1; later < order.size() && job.size() < per_job; ++later) {
        const std::size_t other = order[later];
        if (!taken[other] && Runnable(plan[other]) && SameJob(plan[index], plan[other]) &&
            Shareable(plan[index]) && Shareable(plan[other]) &&
            points.insert(ConfigurationJson(plan[other].run.params)).second) {
          job.push_back(other);
        }
      }
      std::vector<bool> begun(job.size(), false);
      if (job.size() > 1) ExecuteJob(plan, job, progress, begun, remaining);
      // A run alone, and the runs a shared job did not finish: their tries
      // (left), each in a job of its own.
      for (std::size_t i = 0; i < job.size(); ++i) {
        PlanItem& item = plan[job[i]];
        taken[job[i]] = true;
        if (Runnable(item) && !Stopping()) {
          if (!begun[i]) progress.SetRemaining(remaining--);
          begun[i] = true;
          order_ = SweepOrder{experiment_.execution.order_seed, position_++};
          ExecuteRun(item, progress);
        }
        if (begun[i]) {
          report_.runs[first + job[i]].item = item;
          report_.runs[first + job[i]].ran_now = true;
        }
      }
    }
  }

  // Whether the sweep starts no more runs: cancelled, stopped by a failure
  // no retry can fix, or its trainer changed.
  bool Stopping() {
    report_.cancelled = report_.cancelled || cancel_.load();
    return report_.cancelled || !report_.stopped.empty() || TrainerChanged();
  }

  // Whether a run may share a job: one with a warm-up epoch. A run of one
  // epoch measures that epoch, cold start and all, and in a job's later
  // place it would start warm (the quickstart's 12 one-epoch runs: 1.7 s
  // of epochs alone, 1.4 s in shared jobs); a warm-up epoch takes that
  // difference, and the steady epochs after it are the same either way
  // (docs/running.md).
  static bool Shareable(const PlanItem& item) { return item.run.params.epochs >= 2; }

  // Whether two runs can share one job: what a launcher sets up before
  // mpirun is the same for both (ranks, dataset, network). The trainer
  // loads the data again for a run whose data differ (a synthetic run's
  // are drawn from its seed).
  static bool SameJob(const PlanItem& a, const PlanItem& b) {
    const RunParams& x = a.run.params;
    const RunParams& y = b.run.params;
    return x.ranks() == y.ranks() && x.dataset == y.dataset && x.network == y.network;
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

  // Runs one run through its remaining tries; updates `item` to its new state.
  void ExecuteRun(PlanItem& item, ProgressLine& progress) {
    LaunchSpec spec = SpecOf(item);
    spec.on_status = [&progress](const std::string& waiting_on) { progress.Status(waiting_on); };
    while (!Exhausted(item)) {
      progress.StartRun(Describe(item.run.params, shown_), item.attempts + 1, item.run.params.epochs);
      Decision decision;
      try {
        decision = Attempt(item, spec, progress);
      } catch (const StoreError& error) {
        KeepWhyTheAttemptStopped(item.run_id, error);
        throw;
      }
      const bool done = Conclude(item, decision, progress);
      StorePhases();
      if (done) return;
    }
  }

  // Trains the runs `job` (plan indices) in one MPI job, in that order, each
  // its own attempt: the first begun before the launch, each next one when
  // the run before it ended, each stored as soon as its run_end ok arrived
  // (so a crash of the orchestrator keeps it). When the job ends, the run
  // under way takes the job's outcome as ExecuteRun's attempt would, and the
  // runs after it are left as they were; `begun` says which were begun. Each
  // attempt keeps the job's output, which its runs share.
  void ExecuteJob(std::vector<PlanItem>& plan, const std::vector<std::size_t>& job, ProgressLine& progress,
                  std::vector<bool>& begun, int& remaining) {
    std::vector<const RunParams*> runs;
    for (std::size_t index : job) runs.push_back(&plan[index].run.params);
    LaunchSpec spec = SpecOf(plan[job.front()]);
    spec.on_status = [&progress](const std::string& waiting_on) { progress.Status(waiting_on); };
    spec.trainer_args = TrainerArgs(runs);
    spec.runs = static_cast<int>(runs.size());
    spec.timeout_s *= static_cast<double>(job.size());
    const OutputDir output;
    spec.output_dir = output.path();
    std::size_t current = 0;
    std::optional<Ingest> ingest;
    struct Ended {  // a run stored before the job ended
      std::int64_t attempt_id;
      AttemptClock clock;
      EventTimes events;
    };
    std::vector<Ended> ended;
    const auto begin = [&](double launch_s) {
      PlanItem& item = plan[job[current]];
      begun[current] = true;
      progress.SetRemaining(remaining--);
      order_ = SweepOrder{experiment_.execution.order_seed, position_++};
      progress.StartRun(Describe(item.run.params, shown_), item.attempts + 1, item.run.params.epochs);
      current_attempt_id_ = 0;
      current_attempt_id_ = store_.BeginAttempt(item.run_id, UnixNow(), order_);
      ingest.emplace(store_, item.run_id, current_attempt_id_, LaunchedRun{item.run.params, item.dataset_sha256});
      StartClock(launch_s);
    };
    LaunchResult launch;
    try {
      begin(MonotonicNow());
      launch = launcher_.Launch(
          spec,
          [&](std::string_view line) {
            ingest->Consume(line);
            progress.Epoch(ingest->epochs_stored());
            // The last run, and a run that did not end well, end with the job.
            if (current + 1 == job.size() || !ingest->run_end_ok() || !ingest->error().empty()) return;
            clock_.returned_s = MonotonicNow();
            ingest->Flush();
            events_ = ingest->times();
            Decision decision = DecideOutcome(LaunchResult{}, *ingest, UnixNow());
            decision.outcome.exit_code.reset();  // the job's, once it ended
            Conclude(plan[job[current]], decision, progress);
            clock_.end_s = previous_end_s_ = MonotonicNow();
            ended.push_back({current_attempt_id_, clock_, events_});
            ++current;
            begin(previous_end_s_);
          },
          cancel_);
    } catch (const StoreError& error) {
      KeepWhyTheAttemptStopped(plan[job[current]].run_id, error);
      throw;
    }
    clock_.returned_s = MonotonicNow();
    // The links were shaped before the first run's mpirun.
    (ended.empty() ? clock_ : ended.front().clock).link_shaping_s = launch.link_shaping_s;
    ingest->Flush();
    const std::vector<AttemptLog> logs = JobLogs(output.path(), *ingest);
    for (const Ended& run : ended) {
      store_.AddAttemptJob(run.attempt_id, launch.exit_code, launch.command_line, launch.hosts, HostIds(launch.hosts),
                           launch.slurm);
      store_.KeepAttemptLogs(run.attempt_id, logs);
      AddPhases(run.attempt_id, run.clock, run.events);
    }
    store_.KeepAttemptLogs(current_attempt_id_, logs);
    events_ = ingest->times();
    Conclude(plan[job[current]], DecideOutcome(launch, *ingest, UnixNow()), progress);
    StorePhases();
  }

  // Stores how the current attempt of `item` ended (its hosts those of the
  // decision's outcome) and moves `item` to its new state. Returns whether
  // the run is done trying: complete, failed for good or interrupted.
  bool Conclude(PlanItem& item, const Decision& decision, ProgressLine& progress) {
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
    store_.FinishAttempt(item.run_id, current_attempt_id_, outcome, disposition, HostIds(outcome.hosts));
    if (outcome.status == AttemptState::kOk) {
      item.state = RunState::kComplete;
      item.failure_reason.clear();
      progress.FinishRun(true, std::string(Text(RunState::kComplete)));
      return true;
    }
    item.failure_reason = outcome.reason;
    if (disposition == RunDisposition::kInterrupted) {
      item.state = RunState::kInterrupted;
      report_.cancelled = true;
      progress.FinishRun(false, std::string(Text(RunState::kInterrupted)));
      return true;
    }
    if (disposition == RunDisposition::kFailed) {
      item.state = RunState::kFailed;
      progress.FinishRun(false, std::string(Text(RunState::kFailed)) + ": " + outcome.reason);
      if (decision.permanent) {
        report_.stopped = Describe(item.run.params, shown_) +
                          " failed with an error that every attempt would meet: " + outcome.reason;
      }
      return true;
    }
    return false;
  }

  // A database that cannot be written mid-attempt (a full disk) stops the
  // sweep, the error going on to the caller; the attempt under way is
  // stored as interrupted with that error as its reason, so that the next
  // sweep does not book it as "the orchestrator stopped during this
  // attempt". The write is tried again for kStoreRetryS while the disk
  // stays full; after that the reason is lost.
  void KeepWhyTheAttemptStopped(std::int64_t run_id, const StoreError& error) {
    if (current_attempt_id_ == 0) return;  // it failed to begin: nothing to keep
    AttemptOutcome outcome;
    outcome.status = AttemptState::kInterrupted;
    outcome.reason = std::string("the orchestrator stopped: ") + error.what();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStoreRetryS);
    while (true) {
      try {
        outcome.end_unix_s = UnixNow();
        store_.FinishAttempt(run_id, current_attempt_id_, outcome, RunDisposition::kInterrupted, {});
        return;
      } catch (const StoreError&) {
        if (std::chrono::steady_clock::now() >= deadline) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    }
  }

  // One launch of a run, its events streamed into the store as they arrive
  // and checked against the run as planned, and what its ranks printed kept
  // beside the database when it ends.
  Decision Attempt(const PlanItem& item, LaunchSpec spec, ProgressLine& progress) {
    current_attempt_id_ = 0;
    current_attempt_id_ = store_.BeginAttempt(item.run_id, UnixNow(), order_);
    Ingest ingest(store_, item.run_id, current_attempt_id_, LaunchedRun{item.run.params, item.dataset_sha256});
    const OutputDir output;
    spec.output_dir = output.path();
    StartClock(MonotonicNow());
    const LaunchResult launch = launcher_.Launch(
        spec,
        [&](std::string_view line) {
          ingest.Consume(line);
          progress.Epoch(ingest.epochs_stored());
        },
        cancel_);
    clock_.returned_s = MonotonicNow();
    clock_.link_shaping_s = launch.link_shaping_s;
    ingest.Flush();
    const std::vector<AttemptLog> logs = JobLogs(output.path(), ingest);
    store_.KeepAttemptLogs(current_attempt_id_, logs);
    events_ = ingest.times();
    return DecideOutcome(launch, ingest, UnixNow());
  }

  // The current attempt's phases, once it is stored, into the database and
  // the sweep's account; the next attempt's plan_to_launch starts here.
  void StorePhases() {
    clock_.end_s = MonotonicNow();
    AddPhases(current_attempt_id_, clock_, events_);
    previous_end_s_ = clock_.end_s;
  }

  // An attempt's phases, from its clock and events, into the database and
  // the sweep's account.
  void AddPhases(std::int64_t attempt_id, const AttemptClock& clock, const EventTimes& events) {
    const std::vector<PhaseTime> phases = AttemptPhases(clock, events);
    store_.AddAttemptPhases(attempt_id, phases);
    report_.time.Add(phases);
  }

  // The files a job's output directory holds, as the attempt's logs; each
  // line another rank printed on its standard output goes to `ingest`
  // (CheckOtherRank).
  static std::vector<AttemptLog> JobLogs(const std::string& output_dir, Ingest& ingest) {
    std::vector<AttemptLog> logs;
    for (const JobOutputFile& file : ListJobOutput(output_dir)) {
      logs.push_back({file.rank, file.stream, file.path});
      if (file.rank.value_or(0) > 0 && file.stream == "stdout") CheckOtherRank(ingest, *file.rank, file.path);
    }
    return logs;
  }

  // Starts the clock of the current attempt, whose launch is at `launch_s`;
  // the hosts' preparation not yet given to an attempt becomes its.
  void StartClock(double launch_s) {
    clock_ = AttemptClock{previous_end_s_, host_preparation_s_};
    host_preparation_s_ = 0;
    clock_.launch_s = launch_s;
  }

  // Hands the ingest each line rank `rank` (not 0) printed on its standard
  // output, where an event is malformed output: events come from rank 0.
  static void CheckOtherRank(Ingest& ingest, int rank, const std::string& path) {
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

  LaunchSpec SpecOf(const PlanItem& item) const {
    const RunParams& params = item.run.params;
    LaunchSpec spec;
    spec.run_key = item.run_key;
    spec.ranks = params.ranks();
    spec.trainer_args = TrainerArgs(params);
    spec.dataset_dir = params.dataset == "synthetic" ? "" : options_.dataset_dir;
    spec.network = params.network;
    spec.timeout_s = experiment_.execution.timeout_s;
    spec.sweep_ranks = sweep_ranks_;
    return spec;
  }

  std::vector<std::int64_t> HostIds(const std::vector<std::string>& names) const {
    std::vector<std::int64_t> ids;
    for (const std::string& name : names) {
      if (auto it = host_ids_.find(name); it != host_ids_.end()) ids.push_back(it->second);
    }
    return ids;
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
  std::int64_t current_attempt_id_ = 0;
  // Monotonic seconds: the sweep's start, the last attempt stored, and the
  // hosts' preparation not yet given to an attempt.
  double sweep_start_s_ = 0, previous_end_s_ = 0, host_preparation_s_ = 0;
  AttemptClock clock_;  // of the current attempt
  EventTimes events_;   // what its events said
  std::optional<SweepOrder> order_;
  int position_ = 0;  // the next run's place in the sweep's order
  int sweep_ranks_ = 0;  // the most ranks of any run the sweep has still to run
};

Runner::Runner(Store& store, Launcher& launcher, RunnerOptions options)
    : store_(store), launcher_(launcher), options_(std::move(options)) {}

SweepReport Runner::Run(const Experiment& experiment, const RunLock& lock, const std::atomic<bool>& cancel) {
  store_.logs_dir();  // where every attempt's output goes; refused (a database of two names) before any run
  return Sweep(*this, experiment, cancel).Run(lock);
}

}  // namespace dmlbench
