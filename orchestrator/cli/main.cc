// dmlbench: the command line of the orchestrator. Declares the subcommands
// (commands.h, one file each); ParseAndRun reports a failure as
// "dmlbench: error: <message>" on stderr with exit status 1 (2 under
// `compare`, whose 1 means a regression).
#include <CLI/CLI.hpp>

#include <iostream>

#include "orchestrator/cli/commands.h"

namespace dmlbench {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{"dmlbench: runs experiment matrices of the distributed trainer into an SQLite results database"};
  app.set_version_flag("--version", VersionText(), "print the version, source commit and build, then exit");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions global;
  global.command_line.assign(argv, argv + argc);
  app.add_option("--db", global.db, "results database")->capture_default_str();
  AddPlanCommand(app, global);
  AddRunCommand(app, global);
  AddStatusCommand(app, global);
  AddQueryCommand(app, global);
  AddExportCommand(app, global);
  AddModelCommands(app, global);
  AddLogsCommand(app, global);
  AddForgetCommand(app, global);
  AddTagCommands(app, global);
  AddCompareCommand(app, global);
  AddReportCommand(app, global);
  AddInventoryCommands(app, global);
  AddClusterCommands(app, global);
  return ParseAndRun(app, [&] { app.parse(argc, argv); }, std::cerr, global.error_status);
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) { return dmlbench::Main(argc, argv); }
