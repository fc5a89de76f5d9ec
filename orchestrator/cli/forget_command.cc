// `dmlbench forget FILTER [--yes]`: removes the runs a filter chooses, with
// their attempts, epochs, rank phases, host links, tags, logs and model
// predictions, after showing them and asking (y/N on stdin) unless --yes.
// Each removed run is recorded in forgotten_runs. Runs a model fit used are
// kept (the command refuses). Holds the run lock: never while a sweep writes.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/clock.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/run/run_lock.h"

namespace dmlbench {
namespace {

struct ForgetOptions {
  std::string filter;
  bool yes = false;
};

std::string Join(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ",") + value;
  return text;
}

// True when the answer on `in` is y or yes (any case); end of input is no.
bool Confirmed(std::istream& in) {
  std::string answer;
  if (!std::getline(in, answer)) return false;
  answer.erase(std::remove_if(answer.begin(), answer.end(), [](unsigned char c) { return std::isspace(c); }),
               answer.end());
  std::transform(answer.begin(), answer.end(), answer.begin(), [](unsigned char c) { return std::tolower(c); });
  return answer == "y" || answer == "yes";
}

std::string Count(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void ForgetCommand(const GlobalOptions& global, const ForgetOptions& options) {
  const Filter filter = Filter::Parse(options.filter, "FILTER");
  OpenExistingReadOnly(global.db);  // a missing database is an error, not a new one
  const RunLock lock(global.db);
  Store store(global.db);
  const std::vector<RunRecord> runs = ChooseRuns(store, filter);

  std::vector<RunParams> params;
  std::vector<std::int64_t> ids;
  for (const RunRecord& run : runs) {
    params.push_back(run.params);
    ids.push_back(run.run_id);
  }
  const RunContents contents = store.Contents(ids);
  if (!contents.fit_ids.empty()) {
    std::string fits;
    for (std::int64_t id : contents.fit_ids) fits += (fits.empty() ? "" : ", ") + std::to_string(id);
    throw Error("FILTER " + filter.text() + " chooses runs that model " +
                (contents.fit_ids.size() == 1 ? "fit " : "fits ") + fits +
                " used; a fit keeps the runs it rests on, so nothing was forgotten (choose others, e.g. add "
                "',split=validation')");
  }
  const ShownParams shown = VaryingIn(params);
  std::vector<std::vector<std::string>> rows;
  for (const RunRecord& run : runs) {
    rows.push_back({run.run_key.substr(0, 12), Join(run.experiments), Describe(run.params, shown),
                    std::string(Text(run.status)), std::to_string(run.attempts), Join(run.tags)});
  }
  PrintTable(std::cout, {"run_key", "experiment", "run", "status", "attempts", "tags"}, rows,
             {false, false, false, false, true, false});
  std::cout << "forget " << Count(static_cast<std::int64_t>(runs.size()), "run", "runs") << " with "
            << Count(contents.attempts, "attempt", "attempts") << ", " << Count(contents.epochs, "epoch", "epochs")
            << (contents.predictions ? ", " + Count(contents.predictions, "model prediction", "model predictions")
                                     : std::string())
            << " and " << Count(contents.log_files, "log file", "log files") << " from " << global.db << "?";
  if (!options.yes) {
    std::cout << " [y/N] " << std::flush;
    if (!Confirmed(std::cin)) {
      // At the end of input no newline was echoed after the question.
      std::cout << (std::cin.eof() ? "\n" : "") << "nothing was forgotten\n";
      throw CLI::RuntimeError(1);
    }
  } else {
    std::cout << " yes (--yes)\n";
  }
  store.Forget(runs, filter.text(), UnixNow());
  std::cout << "forgot " << Count(static_cast<std::int64_t>(runs.size()), "run", "runs")
            << "; the table forgotten_runs records what they were\n";
}

}  // namespace

void AddForgetCommand(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<ForgetOptions>();
  CLI::App* forget = app.add_subcommand(
      "forget",
      "remove the runs a filter chooses, with their attempts, epochs, logs and model predictions, after showing "
      "them and asking; the table forgotten_runs records each");
  forget->add_option("FILTER", options->filter, "the runs to remove (schemas/filter.md), e.g. 'status=failed'")
      ->required();
  forget->add_flag("--yes", options->yes, "do not ask; remove at once (still shows what it removes)");
  forget->callback([&global, options] { ForgetCommand(global, *options); });
}

}  // namespace dmlbench
