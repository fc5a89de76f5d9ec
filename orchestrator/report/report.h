// Report: `dmlbench --db DB report OUT_DIR` — every section of a report definition
// (definition.h) computed from one results database and written into OUT_DIR:
//   index.html                   one page: tables as <table>s, figures, provenance
//   report.md                    the same in Markdown
//   tables/<id>.md .csv .tex     each table
//   figures/<id>.svg .png        each figure, and its data figures/<id>.<name>.tsv
// The database is opened read-only (temporary views only) and never changes.
// The output depends on the database and the definition alone — no clock, no
// path but the database's file name — so the same database gives the same
// bytes. A section the database cannot fill says why instead of failing.
// A scope (scope.h) narrows every section to some of the runs; the page
// says at its top which runs it covers.
// Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_REPORT_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_REPORT_H_

#include <string>
#include <vector>

#include "orchestrator/report/definition.h"
#include "orchestrator/report/scope.h"

namespace dmlbench {

struct ReportOptions {
  std::string database;
  std::string out_dir;
  std::string definition;            // reports/report.toml
  std::string gnuplot = "gnuplot";   // program name or path
  ReportScope scope;                 // the runs it covers; empty: every run
};

struct ReportSummary {
  int tables = 0;
  int figures = 0;
  std::string covers;                // ScopeText: the runs it covers
  std::vector<std::string> missing;  // "<id>: why", one per section not shown
  // A LeftOutText line per run whose invalid steady epochs (EpochFault,
  // store/epoch_validity.h) no section used; the page's provenance lists
  // them too.
  std::vector<std::string> left_out;
  // Store::open_note() of the database: "" unless it was read as an
  // unchanging file (another user's directory).
  std::string open_note;
};

// Throws ReportError (a bad definition, an SQL file that fails on a database
// of the current schema, gnuplot failing, a scope that chooses no run),
// FilterError (a scope's filter that does not parse) and StoreError.
ReportSummary GenerateReport(const ReportOptions& options);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_REPORT_H_
