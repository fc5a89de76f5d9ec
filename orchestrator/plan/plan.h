// Plan: an experiment's runs minus the database — each run with its key and
// its state there (pending, complete, failed, interrupted, running). Reads
// the store, never writes it, and touches no host, so it works on a copied
// database and without a live cluster. Runs the local trainer once per
// dataset directory for its checksum; not thread-safe (that cache).
#ifndef DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_
#define DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/filter/filter.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A plan that cannot be made (an unreadable dataset, runs larger than the
// hosts). what() names the file.
class PlanError : public Error {
 public:
  using Error::Error;
};

struct PlanItem {
  PlannedRun run;
  std::string run_key;
  std::string dataset_sha256;
  RunState state = RunState::kPending;
  std::int64_t run_id = 0;   // 0 = not in the database yet
  int attempts = 0;   // stored so far
  int failures = 0;   // of those, failed or timed out
  std::string failure_reason;
  std::vector<std::string> tags;  // stored so far, sorted
  // Where the stored run was measured: PlanInputs::system, or "" for a run
  // stored before systems were recorded (found under its key of then).
  std::string system;
  // The experiments that planned it: the database's (the first planner
  // first), and this one.
  std::vector<std::string> experiments;
};

// What a run key depends on besides the run's parameters.
struct PlanInputs {
  std::string trainer;         // the local dmlbench-trainer (it computes dataset checksums)
  std::string trainer_sha256;  // of the binary the runs execute
  std::string dataset_dir;     // IDX files of `fashion-mnist` runs
  std::string system;          // where the runs are measured (cli/launcher_factory.h SystemOf); "" = legacy keys
};

// The runs of `experiment` with their keys and database state. A run's key
// names `inputs.system`; a run stored before systems were recorded (system
// NULL) is found under the key it had then, wherever it ran. Throws
// PlanError when the dataset cannot be read.
std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const PlanInputs& inputs);

// The hosts a plan is checked against: how many ranks one run may have in
// all, and the file that says so (an inventory).
struct HostSlots {
  int slots = 0;
  std::string source;
};

// Throws PlanError naming every run of `plan` that is not complete and needs
// more ranks than `hosts` has slots: such a run fails on every attempt.
void CheckSlots(const std::vector<PlanItem>& plan, const HostSlots& hosts);

// The items `filter` matches, in order (all of them for the empty filter);
// `trainer_sha256` is what `trainer=` compares. Throws PlanError
// "--only F matches none of the N runs of NAME" when it matches none.
std::vector<PlanItem> Select(std::vector<PlanItem> items, const Filter& filter, const std::string& experiment_name,
                             const std::string& trainer_sha256);

// The dataset checksum of a run exactly as the trainer reports it in
// run_start: `trainer --dataset-sha256 DIR` (the trainer alone knows which
// files make a dataset), or "synthetic:<seed>:<n>". Computed once per
// directory. Throws PlanError with the trainer's message.
std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir, const std::string& trainer);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_
