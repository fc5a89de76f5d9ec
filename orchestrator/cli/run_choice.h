// RunChoice: the stored runs a filter chooses, for the commands that act on
// the database's runs (logs, forget, compare), with the errors for a filter
// that chooses none or, where one run is needed, several. Reads the store;
// not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CLI_RUN_CHOICE_H_
#define DMLBENCH_ORCHESTRATOR_CLI_RUN_CHOICE_H_

#include <vector>

#include "orchestrator/filter/filter.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// What the filter asks about a stored run (views into `run`).
RunFacts FactsOf(const RunRecord& run);

// The runs of `store` that `filter` matches, by run id. Throws Error when
// it matches none: "RUN 3fa9 matches none of the 12 runs in results.db".
std::vector<RunRecord> ChooseRuns(const Store& store, const Filter& filter);

// The one run `filter` matches. Throws Error when it matches none, or
// several (naming up to five).
RunRecord ChooseOneRun(const Store& store, const Filter& filter);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLI_RUN_CHOICE_H_
