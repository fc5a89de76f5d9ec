// Figures: a figure's data sets written as gnuplot data files, and its
// template run by gnuplot to draw it as SVG and PNG. Gnuplot starts in the
// figures directory with its init files ignored (-d) and gets, as arguments
// (values of ARG1, ARG2, never code), only names made of a-z, 0-9, _ and -:
// the figure's id and its data sets that have rows. No path and no text of
// the database is ever part of a gnuplot command. Thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_REPORT_FIGURES_H_
#define DMLBENCH_ORCHESTRATOR_REPORT_FIGURES_H_

#include <string>
#include <vector>

#include "orchestrator/store/store.h"

namespace dmlbench {

// A query result as a gnuplot data file (reports/README.md): tab-separated,
// a first comment line naming the columns, and a new block (two blank
// lines: gnuplot's `index`) wherever the first column changes. NULL is NaN;
// tabs, line breaks and double quotes inside text become spaces and single
// quotes, other control characters visible escapes (VisibleControls).
std::string GnuplotData(const QueryResult& result);

struct FigureJob {
  std::string id;                     // writes <id>.svg and <id>.png
  std::string template_path;
  std::vector<std::string> present;   // the data sets that have rows, as ARG2 "a b"
};

// Runs `gnuplot` (a program name or path) on every job in `dir`, several at
// once. Throws ReportError naming the template and quoting gnuplot's
// message when one fails or does not write both files.
void DrawFigures(const std::string& gnuplot, const std::string& dir, const std::vector<FigureJob>& jobs);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_REPORT_FIGURES_H_
