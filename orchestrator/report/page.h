// Page: the report's two documents, index.html (one self-contained page:
// inline style, no script, figures beside it in figures/; tables of many
// rows folded in <details>) and report.md,
// made from the sections' results. Every text that comes from the database
// or the definition is escaped for its format. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_PAGE_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_PAGE_H_

#include <string>
#include <utility>
#include <vector>

#include "orchestrator/report/definition.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// What the database gave one section.
struct SectionResult {
  const Section* section = nullptr;
  QueryResult table;                                       // a table's rows
  std::vector<std::pair<std::string, QueryResult>> data;   // a figure's data sets, by name
  std::string missing;             // not empty: nothing is shown, and this says why
  std::vector<std::string> notes;  // shown under a figure: data sets it lacks
};

struct PageInput {
  std::string title;
  std::string database_name;       // the file name, without its directory
  std::string covers;              // the runs the report covers (ScopeText)
  QueryResult provenance;          // rows (what, value)
  std::vector<SectionResult> sections;
};

std::string HtmlPage(const PageInput& input);
std::string MarkdownPage(const PageInput& input);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_PAGE_H_
