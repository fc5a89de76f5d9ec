// `dmlbench tag FILTER NAME` and `dmlbench untag FILTER NAME`: give the runs
// a filter chooses a tag, or take it from them, whatever sweep ran them
// (docs/choosing-runs.md). A tag given here is recorded with the time, as
// one a sweep gives (run_tags.tagged_unix_s). Holds the run lock, as
// `forget` does: never while a sweep writes.
#include <iostream>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/clock.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/run/run_lock.h"

namespace dmlbench {
namespace {

struct TagOptions {
  std::string filter;
  std::string name;
};

// What the runs not counted were: "; 3 of the 12 chosen had it already",
// "; all 12 chosen had it already"; "" when `count` is 0.
std::string OfTheChosen(size_t count, size_t chosen, const std::string& what, const std::string& none) {
  if (count == 0) return "";
  if (count < chosen) return "; " + std::to_string(count) + " of the " + std::to_string(chosen) + " chosen " + what;
  return chosen == 1 ? "; the run chosen " + what : "; " + none + " " + std::to_string(chosen) + " chosen " + what;
}

void TagCommand(const GlobalOptions& global, const TagOptions& options, bool untag) {
  if (!IsValidName(options.name)) {
    throw Error("NAME: a tag must be 1 to " + std::to_string(kMaxNameLength) +
                " letters, digits, '.', '_' or '-', got " + Quoted(options.name));
  }
  const Filter filter = Filter::Parse(options.filter, "FILTER");
  OpenExistingReadOnly(global.db);  // a missing database is an error, not a new one
  const RunLock lock(global.db);
  Store store(global.db);
  std::vector<std::int64_t> ids;
  for (const RunRecord& run : ChooseRuns(store, filter)) ids.push_back(run.run_id);
  if (untag) {
    const auto had_it = static_cast<size_t>(store.UntagRuns(ids, options.name));
    std::cout << "untagged " << Runs(had_it) << " " << options.name
              << (had_it == 0 && ids.size() > 1 ? "; none of the " + std::to_string(ids.size()) + " chosen had it"
                                                 : OfTheChosen(ids.size() - had_it, ids.size(), "did not have it", "all"))
              << "\n";
  } else {
    const auto had_it = static_cast<size_t>(store.TagRuns(ids, options.name, UnixNow()));
    std::cout << "tagged " << Runs(ids.size() - had_it) << " " << options.name
              << OfTheChosen(had_it, ids.size(), "had it already", "all") << "\n";
  }
}

void AddOne(CLI::App& app, const GlobalOptions& global, bool untag) {
  auto options = std::make_shared<TagOptions>();
  CLI::App* command = app.add_subcommand(
      untag ? "untag" : "tag", untag ? "take a tag from the runs a filter chooses"
                                     : "give the runs a filter chooses a tag (kept with the time it was given)");
  command->add_option("FILTER", options->filter, "the runs (schemas/filter.md), e.g. 'experiment=paper,status=complete'")
      ->required();
  command->add_option("NAME", options->name, "the tag: 1 to 64 letters, digits, '.', '_' or '-'")->required();
  command->callback([&global, options, untag] { TagCommand(global, *options, untag); });
}

}  // namespace

void AddTagCommands(CLI::App& app, const GlobalOptions& global) {
  AddOne(app, global, /*untag=*/false);
  AddOne(app, global, /*untag=*/true);
}

}  // namespace dmlbench
