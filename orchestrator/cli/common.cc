#include <filesystem>
#include <iostream>
#include <ostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/core/build_info.h"
#include "orchestrator/core/programs.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

void AddExperimentInputs(CLI::App* command, ExperimentInputs& inputs) {
  inputs.trainer = SiblingProgram("dmlbench-trainer");
  command->add_option("MATRIX", inputs.matrix, "experiment file (schemas/matrix.md)")->required();
  command->add_option("--trainer", inputs.trainer, "dmlbench-trainer binary")->capture_default_str();
  command->add_option("--mpirun", inputs.mpirun, "Open MPI launcher")->capture_default_str();
  command->add_option("--dataset-dir", inputs.dataset_dir,
                      std::string("IDX files of fashion-mnist runs (default: the experiment's dataset_dir, "
                                  "else ") +
                          kDefaultDatasetDir + ")");
}

void AddOnlyOption(CLI::App* command, std::string& text) {
  command->add_option("--only", text,
                      "only the runs that match FILTER, e.g. 'architecture=ps,workers>=4,status=failed' or a "
                      "run-key prefix (schemas/filter.md)")
      ->type_name("FILTER");
}

std::string DatasetDir(const ExperimentInputs& inputs, const Experiment& experiment) {
  bool needed = false;
  for (const PlannedRun& run : experiment.runs) needed = needed || run.params.dataset != "synthetic";
  if (!needed) return "";
  if (!inputs.dataset_dir.empty()) return inputs.dataset_dir;
  if (!experiment.execution.dataset_dir.empty()) return experiment.execution.dataset_dir;
  return kDefaultDatasetDir;
}

std::unique_ptr<Store> OpenExistingReadOnly(const std::string& db) {
  if (!std::filesystem::exists(db)) {
    throw StoreError(db + ": no such database (it is created by `dmlbench run MATRIX`)", -1);
  }
  auto store = std::make_unique<Store>(db, Store::Mode::kReadOnly);
  if (!store->open_note().empty()) std::cerr << "dmlbench: note: " << TerminalText(store->open_note()) << "\n";
  return store;
}

std::string VersionText() {
#if defined(__clang__)
  const std::string compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = "GCC " __VERSION__;
#else
  const std::string compiler = "an unknown compiler";
#endif
  const std::string build_type = DMLBENCH_BUILD_TYPE;
  return "dmlbench " DMLBENCH_VERSION "\ncommit " + std::string(BuildCommit()) + "\nbuilt with " + compiler + ", " +
         (build_type.empty() ? "no build type" : build_type) + ", " + Store::LibraryVersion();
}

int ParseAndRun(CLI::App& app, const std::function<void()>& parse, std::ostream& err, const int& error_status) {
  try {
    parse();
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    const bool failed_to_parse = status != 0 && e.get_name() != "RuntimeError";
    return failed_to_parse && error_status != kErrorStatus ? error_status : status;
  } catch (const std::exception& e) {
    // A message may quote a file name, a matrix value or a run's output.
    err << "dmlbench: error: " << TerminalText(e.what(), /*keep_layout=*/true) << "\n";
    if (const auto* located = dynamic_cast<const LocatedError*>(&e)) {
      err << TerminalText(located->excerpt(), /*keep_layout=*/true);
    }
    return error_status;
  }
  return 0;
}

}  // namespace dmlbench
