// `dmlbench export DIR`: every table and view as DIR/<name>.csv. Names come
// from the database, which may come from anyone: a name that is not a plain
// identifier (checked_text.h) is left out and said so, so that no file is
// written outside DIR.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/store/checked_text.h"

namespace dmlbench {
namespace {

void ExportCommand(const GlobalOptions& global, const std::string& dir) {
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  std::filesystem::create_directories(dir);
  int files = 0;
  for (const std::string& name : store->TablesAndViews()) {
    if (!IsPlainName(name)) {
      std::cerr << "dmlbench: export: left out the table or view " << TerminalText(Quoted(name))
                << ": not a plain name (a letter or '_', then letters, digits or '_')\n";
      continue;
    }
    const std::string file = (std::filesystem::path(dir) / (name + ".csv")).string();
    std::ofstream out(file, std::ios::binary);
    PrintCsv(out, store->Query("SELECT * FROM \"" + name + "\""));
    if (!out.flush()) throw std::runtime_error("cannot write " + file);
    ++files;
  }
  std::cout << "wrote " << files << " CSV files to " << TerminalText(dir) << "\n";
}

}  // namespace

void AddExportCommand(CLI::App& app, const GlobalOptions& global) {
  auto dir = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand("export", "write every table and view as DIR/<name>.csv");
  command->add_option("DIR", *dir, "output directory (created if needed)")->required();
  command->callback([&global, dir] { ExportCommand(global, *dir); });
}

}  // namespace dmlbench
