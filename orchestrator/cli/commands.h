// Commands: the subcommands of `dmlbench`, one file each (plan_command.cc,
// run_command.cc, status_command.cc, query_command.cc, export_command.cc,
// logs_command.cc, forget_command.cc, tag_command.cc, compare_command.cc, model_command.cc,
// inventory_command.cc, cluster_command.cc, report_command.cc). Each Add*Command declares its
// options and a callback on the app. A callback throws on failure (main.cc
// alone prints "dmlbench: error: ...") and throws CLI::RuntimeError(code)
// to end with a non-zero status that is not an error (failed runs, Ctrl-C).
// Not thread-safe (a command line).
#ifndef DMLBENCH_ORCHESTRATOR_CLI_COMMANDS_H_
#define DMLBENCH_ORCHESTRATOR_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// The exit status of an error (ParseAndRun), and of an error under a
// command whose status 1 is a verdict rather than a failure (`compare`:
// 1 = a regression, docs/ci.md).
inline constexpr int kErrorStatus = 1;
inline constexpr int kDataErrorStatus = 2;

// Options of the program itself, read by several subcommands.
struct GlobalOptions {
  std::string db = "results.db";  // the results database
  int error_status = kErrorStatus;  // set by the chosen command as its parsing starts
  std::vector<std::string> command_line;  // argv as the program was started, for a hint that repeats it
};

// Exit status of a run stopped by signal N (SIGINT 130, SIGTERM 143), as a
// shell reports a process killed by it.
inline constexpr int ExitStatusOfSignal(int signal_number) { return 128 + signal_number; }
// Where Debian's dataset-fashion-mnist package installs the IDX files.
inline constexpr const char* kDefaultDatasetDir = "/usr/share/datasets/fashion-mnist";

// What `plan` and `run` take: a matrix and where the programs and data are.
struct ExperimentInputs {
  std::string matrix;
  std::string trainer;
  std::string mpirun = "mpirun";
  std::string dataset_dir;  // --dataset-dir; "" = the experiment's, else kDefaultDatasetDir
};
// Declares MATRIX, --trainer, --mpirun and --dataset-dir on `command`.
void AddExperimentInputs(CLI::App* command, ExperimentInputs& inputs);
// The IDX directory of `fashion-mnist` runs; "" when every run is synthetic.
std::string DatasetDir(const ExperimentInputs& inputs, const Experiment& experiment);
// Declares --only FILTER (schemas/filter.md) on `command`, read into `text`.
void AddOnlyOption(CLI::App* command, std::string& text);
// Opens an existing database read-only; throws StoreError naming it when
// there is none.
std::unique_ptr<Store> OpenExistingReadOnly(const std::string& db);

// Runs `parse` (a call of app.parse), which runs the chosen command's
// callback, and returns the exit status: the one place that prints
// "dmlbench: error: <message>" (on `err`), followed for an error in a file by
// the source line and a caret under the column. An error exits with
// `error_status`, read when it happens; a command line that does not parse
// with CLI11's status unless `error_status` is other than kErrorStatus.
int ParseAndRun(CLI::App& app, const std::function<void()>& parse, std::ostream& err,
                const int& error_status = kErrorStatus);

// What `dmlbench --version` prints: the version, the git commit of the
// source (cmake/BuildInfo.cmake) and how it was built, one per line.
std::string VersionText();

void AddPlanCommand(CLI::App& app, const GlobalOptions& global);
void AddRunCommand(CLI::App& app, const GlobalOptions& global);
void AddStatusCommand(CLI::App& app, const GlobalOptions& global);
void AddQueryCommand(CLI::App& app, const GlobalOptions& global);
void AddExportCommand(CLI::App& app, const GlobalOptions& global);
void AddLogsCommand(CLI::App& app, const GlobalOptions& global);
void AddForgetCommand(CLI::App& app, const GlobalOptions& global);
// `tag FILTER NAME` and `untag FILTER NAME` (tag_command.cc).
void AddTagCommands(CLI::App& app, const GlobalOptions& global);
// Sets global.error_status to kDataErrorStatus when chosen.
void AddCompareCommand(CLI::App& app, GlobalOptions& global);
// `inventory check|probe|import-ec2`.
void AddInventoryCommands(CLI::App& app, const GlobalOptions& global);
// `model fit|predict|validate|judge|recommend`.
void AddModelCommands(CLI::App& app, const GlobalOptions& global);
// `model recommend` (recommend_command.cc), under the `model` command.
void AddModelRecommendCommand(CLI::App* model, const GlobalOptions& global);
// The fit `model predict --fit` or `--model` would use: fit `fit_id` when
// given (of `model`, unless ""), else `model`'s latest. Throws ModelError.
class PerformanceModel;
std::pair<const PerformanceModel*, ModelFitRecord> ChosenFit(const Store& store, const std::string& model,
                                                             std::optional<std::int64_t> fit_id);
// `cluster up|status|down|probe`.
void AddClusterCommands(CLI::App& app, const GlobalOptions& global);
// `report OUT_DIR` (the database is --db).
void AddReportCommand(CLI::App& app, const GlobalOptions& global);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLI_COMMANDS_H_
