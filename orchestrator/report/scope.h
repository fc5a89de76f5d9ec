// Scope: the runs a report covers — those of one experiment, with one tag,
// matching a filter (schemas/filter.md), every given condition at once — and
// the report's connection narrowed to them. Every table of the database
// that holds runs' rows (a run_id, or an attempt_id) is shadowed by a
// temporary view of its name that keeps only the chosen runs' rows, and
// every view of the database is made again as a temporary view, so that it
// reads those; temporary objects come first in SQLite's name lookup, so the
// report's SQL files need no change. Fits and probes are not narrowed: a fit
// is what it is, whichever runs it rests on. Not thread-safe (the Store is not).
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_SCOPE_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_SCOPE_H_

#include <string>

#include "orchestrator/store/store.h"

namespace dmlbench {

struct ReportScope {
  std::string experiment;  // an experiment's name; "" = any
  std::string tag;         // "" = any
  std::string only;        // a filter (schemas/filter.md); "" = every run
  bool empty() const { return experiment.empty() && tag.empty() && only.empty(); }
};

// What the report covers, for the top of its page and the command's output:
// "all 636 runs (experiment paper-reproduction)" or "12 of the 636 runs:
// experiment quickstart, --only architecture=ring".
std::string ScopeText(const ReportScope& scope, std::size_t chosen, std::size_t stored,
                      const std::vector<std::string>& experiments);

// Narrows `store`'s connection to the scope's runs (nothing to do for an
// empty scope but to say what the report covers) and returns ScopeText.
// `run_columns` are columns added to the view of runs ("0 AS
// partition_bytes" for a database older than them), "" for none; an empty
// scope with columns makes that view alone. Throws ReportError when the
// experiment or tag is nowhere in the database, or the scope chooses no
// run, and FilterError for a filter that does not parse.
std::string ApplyScope(Store& store, const ReportScope& scope, const std::string& run_columns);

// The SELECT a view of the connection is made of: a temporary one's text
// in parentheses when the scope made it again, else "main.<name>". For
// views that narrow a view further (LeaveOutInvalidEpochs, report.cc).
std::string ViewSource(const Store& store, const std::string& name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_SCOPE_H_
