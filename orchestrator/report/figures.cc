#include "orchestrator/report/figures.h"

#include <filesystem>
#include <future>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/report/definition.h"
#include "orchestrator/report/formats.h"

namespace dmlbench {
namespace {

constexpr double kGnuplotTimeoutS = 120;

std::string DataText(const Cell& cell) {
  if (std::holds_alternative<std::nullptr_t>(cell)) return "NaN";
  std::string text = VisibleControls(CellText(cell));
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    if (c == '"') c = '\'';
  }
  return text.empty() ? "-" : text;
}

}  // namespace

std::string GnuplotData(const QueryResult& result) {
  std::string text = "#";
  for (std::size_t c = 0; c < result.columns.size(); ++c) text += (c ? "\t" : " ") + DataText(result.columns[c]);
  text += "\n";
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    const std::vector<Cell>& row = result.rows[r];
    if (r > 0 && !row.empty() && CellText(row[0]) != CellText(result.rows[r - 1][0])) text += "\n\n";
    for (std::size_t c = 0; c < row.size(); ++c) text += (c ? "\t" : "") + DataText(row[c]);
    text += "\n";
  }
  return text;
}

void DrawFigures(const std::string& gnuplot, const std::string& dir, const std::vector<FigureJob>& jobs) {
  std::vector<std::future<CommandOutput>> running;
  for (const FigureJob& job : jobs) {
    std::string present;
    for (const std::string& name : job.present) present += (present.empty() ? "" : " ") + name;
    ChildOptions options;
    options.working_dir = dir;
    // `load "x.gp"` in a template finds the templates beside it.
    options.extra_env = {"GNUPLOT_LIB=" + std::filesystem::path(job.template_path).parent_path().string()};
    std::vector<std::string> argv = {gnuplot, "-d", "-c", job.template_path, job.id, present};
    running.push_back(std::async(std::launch::async, [argv, options] {
      return RunCommand(argv, kGnuplotTimeoutS, options);
    }));
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CommandOutput output = running[i].get();
    const std::string where = jobs[i].template_path + ": ";
    if (output.exit_code == 127 || output.exit_code == 126) {
      throw ReportError(where + "cannot run " + gnuplot + ": " + output.err + " (Debian package gnuplot-nox)");
    }
    if (output.exit_code != 0) {
      throw ReportError(where + "gnuplot failed (exit status " + std::to_string(output.exit_code) + "): " + output.err);
    }
    for (const char* format : {".svg", ".png"}) {
      const std::filesystem::path file = std::filesystem::path(dir) / (jobs[i].id + format);
      if (!std::filesystem::exists(file)) throw ReportError(where + "gnuplot wrote no " + file.filename().string());
    }
  }
}

}  // namespace dmlbench
