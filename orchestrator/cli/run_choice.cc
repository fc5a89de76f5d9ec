#include "orchestrator/cli/run_choice.h"

#include <algorithm>

namespace dmlbench {

RunFacts FactsOf(const RunRecord& run) {
  return {run.params, run.run_key, run.status, run.split, run.tags, run.experiments, run.trainer_sha256};
}

std::vector<RunRecord> ChooseRuns(const Store& store, const Filter& filter) {
  std::vector<RunRecord> runs = store.Runs();
  const size_t stored = runs.size();
  std::erase_if(runs, [&](const RunRecord& run) { return !filter.Matches(FactsOf(run)); });
  if (runs.empty()) {
    throw Error(filter.NoMatch("the " + std::to_string(stored) + (stored == 1 ? " run in " : " runs in ") +
                               store.path()));
  }
  return runs;
}

RunRecord ChooseOneRun(const Store& store, const Filter& filter) {
  const std::vector<RunRecord> runs = ChooseRuns(store, filter);
  if (runs.size() == 1) return runs.front();
  constexpr size_t kNamed = 5;
  std::string named;
  for (size_t i = 0; i < std::min(runs.size(), kNamed); ++i) {
    named += (i ? ", " : "") + runs[i].run_key.substr(0, 12) + " (" + Describe(runs[i].params) + ")";
  }
  if (runs.size() > kNamed) named += ", ...";
  throw Error(filter.text() + " matches " + std::to_string(runs.size()) + " runs, not one: " + named +
              "; give a longer run-key prefix or more terms");
}

}  // namespace dmlbench
