// `dmlbench logs RUN [--attempt N] [--rank R]`: what the ranks of an
// attempt printed, as kept beside the database (schemas/database.md). RUN is
// a filter (schemas/filter.md) that must choose exactly one run — a run-key
// prefix, usually. Read-only; a database copied without its logs directory
// says which file is missing.
#include <filesystem>
#include <iostream>
#include <optional>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/store/gzip.h"

namespace dmlbench {
namespace {

struct LogsOptions {
  std::string run;
  std::optional<int> attempt;
  std::optional<int> rank;
};

std::string StreamName(const AttemptLog& log) {
  return (log.rank ? "rank " + std::to_string(*log.rank) : std::string("mpirun")) + " " + log.stream;
}

// How many runs the job of an attempt trained in turn ([execution]
// runs_per_job): the run_start events in rank 0's standard output, `text`;
// 1 for a job of its own.
int RunsInJob(const std::string& text) {
  int runs = 0;
  for (std::size_t at = text.find("\"event\":\"run_start\""); at != std::string::npos;
       at = text.find("\"event\":\"run_start\"", at + 1))
    ++runs;
  return std::max(1, runs);
}

void LogsCommand(const GlobalOptions& global, const LogsOptions& options) {
  const Filter filter = Filter::Parse(options.run, "RUN");
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  const RunRecord run = ChooseOneRun(*store, filter);
  const std::string name = "run " + run.run_key.substr(0, 12);

  const std::vector<AttemptRecord> attempts = store->Attempts(run.run_id);
  if (attempts.empty()) throw Error(name + " has no attempts yet");
  const AttemptRecord* attempt = &attempts.back();
  if (options.attempt) {
    attempt = nullptr;
    for (const AttemptRecord& a : attempts) {
      if (a.number == *options.attempt) attempt = &a;
    }
    if (attempt == nullptr) {
      throw Error(name + " has no attempt " + std::to_string(*options.attempt) + "; its attempts are 1 to " +
                  std::to_string(attempts.back().number));
    }
  }
  const std::string which = "attempt " + std::to_string(attempt->number) + " of " + name;

  std::vector<AttemptLog> logs = store->AttemptLogs(attempt->attempt_id);
  if (logs.empty()) throw Error(which + " kept no output");
  std::string events;  // rank 0's standard output, whatever --rank shows
  for (const AttemptLog& log : logs) {
    const std::string path = store->logs_dir() + "/" + log.file;
    if (log.rank == 0 && log.stream == "stdout" && std::filesystem::exists(path)) events = GunzipFile(path);
  }
  if (options.rank) {
    int highest = 0;
    for (const AttemptLog& log : logs) highest = std::max(highest, log.rank.value_or(0));
    std::erase_if(logs, [&](const AttemptLog& log) { return log.rank != options.rank; });
    if (logs.empty()) {
      throw Error(which + " has no output of rank " + std::to_string(*options.rank) + "; its ranks are 0 to " +
                  std::to_string(highest));
    }
  }
  for (const AttemptLog& log : logs) {
    const std::string path = store->logs_dir() + "/" + log.file;
    if (!std::filesystem::exists(path)) {
      throw Error("the logs of " + which + " are missing: " + path + " does not exist; was the database copied "
                  "without " + store->logs_dir() + "?");
    }
  }

  std::cout << name << " (" << Describe(run.params) << "), attempt " << attempt->number << " of "
            << attempts.back().number << ": " << Text(attempt->status)
            << (attempt->reason.empty() ? "" : " (" + TerminalText(attempt->reason) + ")") << "\n";
  if (!attempt->note.empty()) std::cout << "note: " << TerminalText(attempt->note) << "\n";
  if (const int runs = RunsInJob(events); runs > 1) {
    std::cout << "its job trained " << runs << " runs in turn (runs_per_job): the output below is the job's, "
              << "this run's events among theirs\n";
  }
  for (const AttemptLog& log : logs) {
    const std::string text = GunzipFile(store->logs_dir() + "/" + log.file);
    std::cout << "==> " << StreamName(log) << " ("
              << (text.empty() ? std::string("empty") : std::to_string(text.size()) + " bytes") << ") <==\n"
              << text;
    if (!text.empty() && text.back() != '\n') std::cout << "\n";
  }
}

}  // namespace

void AddLogsCommand(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<LogsOptions>();
  CLI::App* logs = app.add_subcommand(
      "logs", "print what each rank of a run's attempt wrote to stdout and stderr, and mpirun's stderr");
  logs->add_option("RUN", options->run,
                   "a run-key prefix, or any filter that chooses exactly one run (schemas/filter.md)")
      ->required();
  logs->add_option("--attempt", options->attempt, "the attempt's number (default: the last)")->type_name("N");
  logs->add_option("--rank", options->rank, "only this rank's stdout and stderr")->type_name("R");
  logs->callback([&global, options] { LogsCommand(global, *options); });
}

}  // namespace dmlbench
