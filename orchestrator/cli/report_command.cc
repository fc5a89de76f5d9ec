// `dmlbench --db DB report OUT_DIR`: the report defined by report.toml (or
// --definition FILE) regenerated from a results database alone: tables,
// figures and one HTML page (orchestrator/report/report.h), over every run
// or those --experiment, --tag and --only choose.
#include <filesystem>
#include <iostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/report/report.h"

namespace dmlbench {
namespace {

struct ReportCommandOptions {
  ReportOptions report;
  std::vector<std::string> operands;  // OUT_DIR (a database before it is refused)
};

void ReportCommand(const GlobalOptions& global, ReportCommandOptions& o) {
  if (o.operands.size() == 2) {
    throw Error("report takes the database with --db, as every command does: dmlbench --db " + o.operands[0] +
                " report " + o.operands[1]);
  }
  ReportOptions& options = o.report;
  options.database = global.db;
  options.out_dir = o.operands.front();
  if (options.definition.empty()) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    options.definition = FindReportDefinition(error ? "" : self.string(), DMLBENCH_REPORTS_SOURCE_DIR);
  }
  const ReportSummary summary = GenerateReport(options);
  if (!summary.open_note.empty()) std::cerr << "dmlbench: note: " << TerminalText(summary.open_note) << "\n";
  std::cout << "report: " << summary.tables << " tables and " << summary.figures << " figures in "
            << (std::filesystem::path(options.out_dir) / "index.html").string() << ", covering "
            << TerminalText(summary.covers) << "\n";
  for (const std::string& missing : summary.missing) std::cout << "  not shown: " << missing << "\n";
  for (const std::string& line : summary.left_out) std::cout << "  " << TerminalText(line) << "\n";
}

}  // namespace

void AddReportCommand(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<ReportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "report", "regenerate the report (tables, figures, index.html) from the results database (--db) alone");
  command->add_option("OUT_DIR", o->operands, "output directory (created if needed)")->required()->expected(1, 2);
  command->add_option("--experiment", o->report.scope.experiment, "cover only the runs of this experiment");
  command->add_option("--tag", o->report.scope.tag, "cover only the runs with this tag");
  command->add_option("--only", o->report.scope.only, "cover only the runs this filter chooses (schemas/filter.md)");
  command->add_option("--definition", o->report.definition,
                      "what the report contains (reports/README.md); default: share/dmlbench/reports/report.toml "
                      "beside the installed dmlbench, else the source tree's reports/report.toml");
  command->callback([&global, o] { ReportCommand(global, *o); });
}

}  // namespace dmlbench
