// `dmlbench report DB OUT_DIR`: the report defined by reports/report.toml
// (or --definition FILE) regenerated from a results database alone: tables,
// figures and one HTML page (orchestrator/report/report.h).
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/report/report.h"

namespace dmlbench {
namespace {

// The installed definition (share/dmlbench/reports beside bin/), else the
// source tree's.
std::string DefaultDefinition() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed =
        self.parent_path().parent_path() / "share" / "dmlbench" / "reports" / "report.toml";
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return std::string(DMLBENCH_REPORTS_SOURCE_DIR) + "/report.toml";
}

void ReportCommand(const ReportOptions& options) {
  const ReportSummary summary = GenerateReport(options);
  if (!summary.open_note.empty()) std::cerr << "dmlbench: note: " << TerminalText(summary.open_note) << "\n";
  std::cout << "report: " << summary.tables << " tables and " << summary.figures << " figures in "
            << (std::filesystem::path(options.out_dir) / "index.html").string() << "\n";
  for (const std::string& missing : summary.missing) std::cout << "  not shown: " << missing << "\n";
  for (const std::string& line : summary.left_out) std::cout << "  " << TerminalText(line) << "\n";
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  options->definition = DefaultDefinition();
  CLI::App* command = app.add_subcommand(
      "report", "regenerate the report (tables, figures, index.html) from a results database alone");
  command->add_option("DB", options->database, "results database (opened read-only)")->required();
  command->add_option("OUT_DIR", options->out_dir, "output directory (created if needed)")->required();
  command->add_option("--definition", options->definition, "what the report contains (reports/README.md)")
      ->capture_default_str();
  command->callback([options] { ReportCommand(*options); });
}

}  // namespace dmlbench
