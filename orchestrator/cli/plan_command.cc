// `dmlbench plan MATRIX`: the expanded runs and their state in the database.
// Planning never writes: without a database every run is pending. It reads
// the hosts' inventory, never the hosts: runs that need more ranks than the
// hosts have slots are refused here.
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "common/sha256.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/launcher_factory.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/launch/launcher.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/plan/plan.h"

namespace dmlbench {
namespace {

// Every provider runs this binary (ssh and cluster hosts get a copy), so
// planning needs no host: it works without a live cluster or network.
std::string TrainerSha256(const ExperimentInputs& inputs) {
  const std::string trainer_path = ResolveProgram(inputs.trainer);
  try {
    return Sha256FileHex(trainer_path.empty() ? inputs.trainer : trainer_path);
  } catch (const Sha256Error& e) {
    throw LaunchError(std::string("local: ") + e.what());
  }
}

// A column of the plan's table for one run parameter.
struct Column {
  std::string header;
  bool right;
  std::function<std::string(const RunParams&)> value;
};

// Fixed columns, then one per parameter the matrix varies beyond them.
std::vector<Column> ParameterColumns(const ShownParams& varying) {
  std::vector<Column> parameters = {
      {"architecture", false, [](const RunParams& p) { return std::string(Text(p.architecture)); }},
      {"servers", true,
       [](const RunParams& p) { return std::to_string(p.architecture == Architecture::kPs ? p.servers : 0); }},
      {"workers", true, [](const RunParams& p) { return std::to_string(p.workers); }},
      {"batch", true, [](const RunParams& p) { return std::to_string(p.batch_size); }}};
  if (varying.learning_rate) {
    parameters.push_back({"lr", true, [](const RunParams& p) { return ExactText(Cell(p.learning_rate)); }});
  }
  if (varying.hidden) {
    parameters.push_back({"hidden", false, [](const RunParams& p) {
                            std::string text;
                            for (size_t i = 0; i < p.hidden.size(); ++i) {
                              text += (i ? "," : "") + std::to_string(p.hidden[i]);
                            }
                            return text;
                          }});
  }
  if (varying.epochs) {
    parameters.push_back({"epochs", true, [](const RunParams& p) { return std::to_string(p.epochs); }});
  }
  if (varying.max_iterations_per_epoch) {
    parameters.push_back(
        {"iters", true, [](const RunParams& p) { return std::to_string(p.max_iterations_per_epoch); }});
  }
  if (varying.bucket_bytes) {
    parameters.push_back({"bucket", true, [](const RunParams& p) { return std::to_string(p.bucket_bytes); }});
  }
  if (varying.partition_bytes) {
    parameters.push_back(
        {"partition", true, [](const RunParams& p) { return std::to_string(p.partition_bytes); }});
  }
  if (varying.pulls_in_turn) {
    parameters.push_back(
        {"pulls", false, [](const RunParams& p) { return std::string(p.pulls_in_turn ? "in turn" : "at once"); }});
  }
  if (varying.dataset) {
    parameters.push_back({"dataset", false, [](const RunParams& p) { return p.dataset; }});
  }
  parameters.push_back({"overlap", false, [](const RunParams& p) { return std::string(p.overlap ? "on" : "off"); }});
  parameters.push_back(
      {"network", false, [](const RunParams& p) { return p.network.name.empty() ? "-" : p.network.name; }});
  parameters.push_back({"rep", true, [](const RunParams& p) { return std::to_string(p.repetition); }});
  return parameters;
}

// One row per run: its number, run key, parameters and state.
void PrintPlanTable(const std::vector<PlanItem>& plan, const std::vector<Column>& parameters) {
  std::vector<std::string> headers = {"#", "run_key"};
  std::vector<bool> right = {true, false};
  for (const Column& column : parameters) {
    headers.push_back(column.header);
    right.push_back(column.right);
  }
  headers.insert(headers.end(), {"split", "state", "measured on", "attempts", "last failure"});
  right.insert(right.end(), {false, false, false, true, false});

  std::vector<std::vector<std::string>> rows;
  int index = 0;
  for (const PlanItem& item : plan) {
    std::vector<std::string> row = {std::to_string(++index), item.run_key.substr(0, 12)};
    for (const Column& column : parameters) row.push_back(column.value(item.run.params));
    // A stored run: the system its attempts ran on, or that none was recorded.
    const std::string measured_on =
        item.attempts == 0 ? "" : item.system.empty() ? "(not recorded)" : TerminalText(item.system);
    row.insert(row.end(), {item.run.split, std::string(Text(item.state)), measured_on,
                           item.attempts ? std::to_string(item.attempts) : "", Shorten(item.failure_reason, 60)});
    rows.push_back(std::move(row));
  }
  PrintTable(std::cout, headers, rows, right);
}

// "<experiment>: 3 of 12 runs: 1 complete, 2 pending, ..." and the system
// they are measured on.
void PrintPlanSummary(const std::string& experiment, const std::vector<PlanItem>& plan, std::size_t planned,
                      const std::string& system) {
  std::map<RunState, int> counts;
  for (const PlanItem& item : plan) ++counts[item.state];
  std::cout << experiment << ": "
            << (plan.size() == planned ? Runs(plan.size()) : std::to_string(plan.size()) + " of " + Runs(planned))
            << ": " << counts[RunState::kComplete]
            << " complete, " << counts[RunState::kPending] << " pending, " << counts[RunState::kFailed]
            << " failed, " << counts[RunState::kInterrupted] << " interrupted";
  if (counts[RunState::kRunning]) std::cout << ", " << counts[RunState::kRunning] << " running";
  std::cout << "\n";
  int unrecorded = 0;
  for (const PlanItem& item : plan) unrecorded += item.attempts > 0 && item.system.empty();
  std::cout << "system: " << TerminalText(system);
  if (unrecorded) {
    std::cout << " (" << unrecorded << (unrecorded == 1 ? " run was" : " runs were")
              << " stored before systems were recorded: found wherever they ran)";
  }
  std::cout << "\n";
}

void PlanCommand(const GlobalOptions& global, const ExperimentInputs& inputs, const std::string& only) {
  const Filter filter = only.empty() ? Filter() : Filter::Parse(only, "--only");
  const Experiment experiment = LoadExperiment(inputs.matrix);
  const std::string dataset_dir = DatasetDir(inputs, experiment);
  const std::string trainer_sha = TrainerSha256(inputs);
  const bool exists = std::filesystem::exists(global.db);
  Store store(exists ? global.db : ":memory:", exists ? Store::Mode::kReadOnly : Store::Mode::kReadWrite);
  if (!store.open_note().empty()) std::cerr << "dmlbench: note: " << TerminalText(store.open_note()) << "\n";
  const std::string system = SystemOf(experiment.execution);
  const std::vector<PlanItem> planned = Plan(experiment, store, {inputs.trainer, trainer_sha, dataset_dir, system});
  const std::vector<PlanItem> plan = Select(planned, filter, experiment.name, trainer_sha);
  if (const std::optional<HostSlots> slots = SlotsOf(experiment.execution)) CheckSlots(plan, *slots);
  PrintPlanTable(plan, ParameterColumns(VaryingIn(experiment.runs)));
  PrintPlanSummary(experiment.name, plan, planned.size(), system);
}

}  // namespace

void AddPlanCommand(CLI::App& app, const GlobalOptions& global) {
  auto inputs = std::make_shared<ExperimentInputs>();
  auto only = std::make_shared<std::string>();
  CLI::App* plan = app.add_subcommand("plan", "show the runs of a matrix and their state in the database; runs nothing");
  AddExperimentInputs(plan, *inputs);
  AddOnlyOption(plan, *only);
  plan->callback([&global, inputs, only] { PlanCommand(global, *inputs, *only); });
}

}  // namespace dmlbench
