// `dmlbench run MATRIX`: executes the runs that are not complete, with live
// progress on stderr, then prints the summary table. SIGINT, SIGTERM and
// SIGHUP (a closed terminal or SSH session) stop the current run (stored as
// interrupted) and end with status 130, 143 and 129.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/cli/launcher_factory.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/core/programs.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/launch/local/local_link_probe.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/run/runner.h"

namespace dmlbench {
namespace {

std::atomic<bool> g_cancel{false};
volatile std::sig_atomic_t g_signal = 0;  // the first SIGINT, SIGTERM or SIGHUP

void OnSignal(int signal_number) {
  if (g_signal == 0) g_signal = signal_number;
  g_cancel.store(true);
}

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGHUP, &action, nullptr);
  // With the terminal gone, what is printed to it must not kill the sweep
  // before it stored the attempt it stopped.
  ::signal(SIGPIPE, SIG_IGN);
}

void PrintSummary(std::ostream& out, const Experiment& experiment, const SweepReport& report) {
  const ShownParams shown = VaryingIn(experiment.runs);
  std::vector<std::vector<std::string>> rows;
  for (const RunReport& run : report.runs) {
    std::string epoch_s, throughput, accuracy;
    if (run.measures) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.3f", run.measures->epoch_s_mean);
      epoch_s = buffer;
      std::snprintf(buffer, sizeof buffer, "%.0f", run.measures->throughput_mean);
      throughput = buffer;
      if (run.measures->final_test_accuracy) {
        std::snprintf(buffer, sizeof buffer, "%.4f", *run.measures->final_test_accuracy);
        accuracy = buffer;
      }
    }
    std::string state(Text(run.item.state));
    if (!run.ran_now && (run.item.state == RunState::kComplete || run.item.state == RunState::kFailed)) {
      state += " (earlier)";
    }
    rows.push_back({Describe(run.item.run.params, shown), run.item.run.split, state, std::to_string(run.item.attempts),
                    epoch_s, throughput, accuracy, Shorten(run.item.failure_reason, 70)});
  }
  PrintTable(out, {"run", "split", "status", "attempts", "epoch_s", "samples/s", "test_acc", "reason"}, rows,
             {false, false, false, true, true, true, true, false});
  int now = 0;
  for (const RunReport& run : report.runs) now += run.ran_now && run.item.state == RunState::kComplete;
  out << TerminalText(experiment.name) << ": "
      << (static_cast<int>(report.runs.size()) == report.planned
              ? Runs(report.runs.size())
              : std::to_string(report.runs.size()) + " of " + Runs(report.planned))
      << ": " << report.complete << " complete (" << now
      << " just now), " << report.failed << " failed, " << report.interrupted << " interrupted, "
      << report.pending << " pending\n";
  // Where the time went, when the sweep ran anything (attempt_phases).
  if (!report.time.phase_s.empty()) out << report.time.Summary() << "\n";
  if (report.recovered) {
    out << report.recovered << (report.recovered == 1 ? " run was" : " runs were")
        << " left running by an orchestrator that stopped; redone\n";
  }
  if (report.measured_elsewhere) {
    out << report.measured_elsewhere << (report.measured_elsewhere == 1 ? " run was" : " runs were")
        << " complete from hosts of " << report.elsewhere << " and " << (report.measured_elsewhere == 1 ? "was" : "were")
        << " not run again: a run is its parameters, not its hosts (schemas/matrix.md); to measure "
        << (report.measured_elsewhere == 1 ? "it" : "them") << " on these hosts, use another database or another "
        << "[execution] seed\n";
  }
  if (report.more_repetitions) {
    char within[32];
    std::snprintf(within, sizeof within, "%g%%", 100 * experiment.execution.interval_within);
    out << report.more_repetitions << " of these " << (report.more_repetitions == 1 ? "is a repetition" : "are repetitions")
        << " beyond the planned " << (report.more_repetitions == 1 ? "ones, of a point" : "ones, of points")
        << " whose 95% interval of the median epoch time reached further than " << within
        << " from it ([execution] interval_within; at most max_repetitions = " << experiment.execution.max_repetitions
        << " runs a point)\n";
  }
  if (!report.still_loose.empty()) {
    out << report.still_loose.size() << (report.still_loose.size() == 1 ? " point has" : " points have")
        << " max_repetitions runs and an interval still wider than asked: measure "
        << (report.still_loose.size() == 1 ? "it" : "them") << " on quieter hosts, or raise max_repetitions\n";
    for (const std::string& point : report.still_loose) out << "  " << TerminalText(point) << "\n";
  }
  if (report.exhausted) {
    out << report.exhausted << (report.exhausted == 1 ? " run has" : " runs have")
        << " failed `attempts` times and " << (report.exhausted == 1 ? "was" : "were")
        << " not tried again, --retry-failed or not; raise [execution] attempts to give "
        << (report.exhausted == 1 ? "it" : "them") << " more tries, or `dmlbench forget` "
        << (report.exhausted == 1 ? "it" : "them") << " to start afresh\n";
  }
}

// Local runs are modelled with this machine's shared memory as their link:
// it is probed once per database, by the first local sweep that finds no
// probe of the unshaped profile there. A probe that cannot run costs the
// sweep nothing but the model its link: a warning says so.
void ProbeThisMachineOnce(Store& store, const ExperimentInputs& inputs) {
  for (const LinkProbeRow& row : store.LatestCalibrationProbes()) {
    if (row.bandwidth_bits_per_s == 0 && row.latency_s == 0) return;
  }
  LocalLinkProbeOptions options;
  options.probe_binary = SiblingProgram("dmlbench-linkprobe");
  options.mpirun = inputs.mpirun;
  try {
    const LinkProbeResult result = ProbeThisMachine(options);
    store.AddLinkProbe(LinkProbeRows(result));
    std::fprintf(stderr,
                 "dmlbench: probed this machine's shared memory once for `dmlbench model fit`: alpha %.2g s, "
                 "B %.3g GB/s\n",
                 result.fit.alpha_s, result.fit.bandwidth_bytes_per_s / 1e9);
  } catch (const LinkProbeError& error) {
    std::cerr << "dmlbench: warning: " << TerminalText(error.what())
              << "; `dmlbench model fit` needs this machine's link probed\n";
  }
}

// What `run` takes besides the experiment inputs.
struct RunChoices {
  std::string only;  // --only FILTER
  bool retry_failed = true;
  std::vector<std::string> tags;
};

void RunCommand(const GlobalOptions& global, const ExperimentInputs& inputs, const RunChoices& choices) {
  RunnerOptions options;
  if (!choices.only.empty()) options.only = Filter::Parse(choices.only, "--only");
  options.retry_failed = choices.retry_failed;
  for (const std::string& tag : choices.tags) {
    if (!IsValidName(tag)) {
      throw Error("--tag: a tag must be 1 to " + std::to_string(kMaxNameLength) +
                  " letters, digits, '.', '_' or '-', got " + Quoted(tag));
    }
  }
  options.tags = choices.tags;
  const Experiment experiment = LoadExperiment(inputs.matrix);
  // Before the database is opened, and released after it is closed.
  const RunLock lock(global.db);
  Store store(global.db);
  LauncherPaths paths;
  paths.trainer = inputs.trainer;
  paths.mpirun = inputs.mpirun;
  paths.db = global.db;
  paths.dataset_dir = DatasetDir(inputs, experiment);
  // Before any host is touched; held until every run of the sweep is done.
  const std::unique_ptr<HostPoolLock> hosts_lock = LockHostPool(experiment.execution, global.db);
  std::unique_ptr<Launcher> launcher = MakeLauncher(experiment.execution, paths);
  options.trainer = inputs.trainer;
  options.dataset_dir = paths.dataset_dir;
  options.progress = &std::cerr;
  options.progress_redraws = ::isatty(STDERR_FILENO) != 0;
  options.slots = SlotsOf(experiment.execution);
  options.system = SystemOf(experiment.execution);
  if (experiment.execution.provider == Provider::kLocal) {
    options.before_first_launch = [&store, &inputs] { ProbeThisMachineOnce(store, inputs); };
  }
  Runner runner(store, *launcher, options);
  InstallSignalHandlers();
  const SweepReport report = runner.Run(experiment, lock, g_cancel);
  PrintSummary(std::cout, experiment, report);
  if (report.cancelled) {
    // The same command line: the same database, trainer and choice of runs.
    std::cerr << "dmlbench: interrupted; `" << TerminalText(ShellJoin(global.command_line)) << "` resumes\n";
    throw CLI::RuntimeError(ExitStatusOfSignal(g_signal == 0 ? SIGINT : g_signal));
  }
  if (!report.stopped.empty()) throw Error("stopped the sweep after " + report.stopped);
  if (report.failed) throw CLI::RuntimeError(1);
}

}  // namespace

void AddRunCommand(CLI::App& app, const GlobalOptions& global) {
  auto inputs = std::make_shared<ExperimentInputs>();
  auto choices = std::make_shared<RunChoices>();
  CLI::App* run = app.add_subcommand("run", "execute the runs of a matrix that are not complete, then print a summary");
  AddExperimentInputs(run, *inputs);
  AddOnlyOption(run, choices->only);
  run->add_flag("--retry-failed,!--no-retry-failed", choices->retry_failed,
                "run again the runs that failed before and have failed fewer than [execution] attempts "
                "times over all sweeps (the default); --no-retry-failed leaves them failed");
  run->add_option("--tag", choices->tags,
                  "give every run of this sweep the tag NAME, besides the experiment's tags (repeatable)")
      ->type_name("NAME");
  run->callback([&global, inputs, choices] { RunCommand(global, *inputs, *choices); });
}

}  // namespace dmlbench
