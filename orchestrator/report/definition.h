// Definition: what a report contains, read from one file (reports/report.toml,
// format in reports/README.md): its sections in order, each a table defined
// by an SQL file or a figure defined by SQL files (its data) and a gnuplot
// template, with the text shown when the database holds nothing for it. Reads
// the files; knows nothing of databases or output formats. Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_DEFINITION_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_DEFINITION_H_

#include <string>
#include <vector>

#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

// A report definition that cannot be used: what() is "file:line:col:
// message" (a LocatedError), or names the file that cannot be read.
class ReportError : public LocatedError {
 public:
  using LocatedError::LocatedError;
  explicit ReportError(const std::string& message) : LocatedError(message, "") {}
};

// An SQL file, read.
struct SqlFile {
  std::string path;   // as named in the definition, relative to its directory
  std::string text;
};

// One data file of a figure: `<id>.<name>.tsv` beside the figure.
struct FigureData {
  std::string name;      // [a-z0-9_]+
  SqlFile sql;
  std::string missing;   // shown when it has no rows (later data sets only)
};

struct Section {
  enum class Kind { kTable, kFigure };
  Kind kind = Kind::kTable;
  std::string id;        // [a-z0-9_-]+, unique: names the output files
  std::string title;
  std::string caption;   // shown under the title
  std::string empty;     // shown instead of the table or figure when there is no row
  SqlFile table;         // kTable
  std::vector<FigureData> data;  // kFigure: the first must have rows
  std::string template_path;     // kFigure: the gnuplot template, absolute
};

struct ReportDefinition {
  std::string path;              // the definition file
  std::string title;
  SqlFile views;                 // temporary views every query may use; may be empty
  SqlFile provenance;            // rows (what, value) for the footer
  std::vector<Section> sections;
};

// Reads `path` and every file it names (relative to its directory). Throws
// ReportError.
ReportDefinition ReadReportDefinition(const std::string& path);

// The default definition: share/dmlbench/reports/report.toml of the prefix
// `executable` is installed in (<prefix>/bin/dmlbench, as `cmake --install`
// lays it out), else `source_reports_dir`/report.toml (an uninstalled build);
// `executable` may be "" (unknown). Throws ReportError naming both places
// when neither has one.
std::string FindReportDefinition(const std::string& executable, const std::string& source_reports_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_DEFINITION_H_
