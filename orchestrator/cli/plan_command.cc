// `dmlbench plan MATRIX`: the expanded runs and their state in the database.
// Planning never writes: without a database every run is pending. It reads
// the hosts' inventory, never the hosts: runs that need more ranks than the
// hosts have slots are refused here.
#include <filesystem>
#include <iostream>
#include <map>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/launcher_factory.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/launcher.h"
#include "trainer/sha256.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/matrix/matrix.h"
#include "orchestrator/plan/plan.h"

namespace dmlbench {
namespace {

void PlanCommand(const GlobalOptions& global, const ExperimentInputs& inputs) {
  const Experiment experiment = LoadExperiment(inputs.matrix);
  const std::string dataset_dir = DatasetDir(inputs, experiment);
  // Every provider runs this binary (ssh and cluster hosts get a copy), so
  // planning needs no host: it works without a live cluster or network.
  const std::string trainer_path = ResolveProgram(inputs.trainer);
  std::string trainer_sha;
  try {
    trainer_sha = Sha256FileHex(trainer_path.empty() ? inputs.trainer : trainer_path);
  } catch (const Sha256Error& e) {
    throw LaunchError(std::string("local: ") + e.what());
  }
  const bool exists = std::filesystem::exists(global.db);
  Store store(exists ? global.db : ":memory:", exists ? Store::Mode::kReadOnly : Store::Mode::kReadWrite);
  const std::vector<PlanItem> plan = Plan(experiment, store, {inputs.trainer, trainer_sha, dataset_dir});
  if (const std::optional<HostSlots> slots = SlotsOf(experiment.execution)) CheckSlots(plan, *slots);
  std::vector<std::vector<std::string>> rows;
  std::map<RunState, int> counts;
  int index = 0;
  for (const PlanItem& item : plan) {
    const RunParams& p = item.run.params;
    ++counts[item.state];
    rows.push_back({std::to_string(++index), item.run_key.substr(0, 12), std::string(Text(p.architecture)),
                    std::to_string(p.architecture == Architecture::kPs ? p.servers : 0), std::to_string(p.workers),
                    std::to_string(p.batch_size), p.overlap ? "on" : "off",
                    p.network.name.empty() ? "-" : p.network.name, std::to_string(p.repetition), item.run.split,
                    std::string(Text(item.state)), item.attempts ? std::to_string(item.attempts) : "",
                    Shorten(item.failure_reason, 60)});
  }
  PrintTable(std::cout,
             {"#", "run_key", "architecture", "servers", "workers", "batch", "overlap", "network", "rep", "split",
              "state", "attempts", "last failure"},
             rows, {true, false, false, true, true, true, false, false, true, false, false, true, false});
  std::cout << experiment.name << ": " << Runs(plan.size()) << ": " << counts[RunState::kComplete]
            << " complete, " << counts[RunState::kPending] << " pending, " << counts[RunState::kFailed]
            << " failed, " << counts[RunState::kInterrupted] << " interrupted";
  if (counts[RunState::kRunning]) std::cout << ", " << counts[RunState::kRunning] << " running";
  std::cout << "\n";
}

}  // namespace

void AddPlanCommand(CLI::App& app, const GlobalOptions& global) {
  auto inputs = std::make_shared<ExperimentInputs>();
  CLI::App* plan = app.add_subcommand("plan", "show the runs of a matrix and their state in the database; runs nothing");
  AddExperimentInputs(plan, *inputs);
  plan->callback([&global, inputs] { PlanCommand(global, *inputs); });
}

}  // namespace dmlbench
