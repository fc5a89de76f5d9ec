// Plan: an experiment's runs minus the database — each run with its key and
// its state there (pending, complete, failed, interrupted, running). Reads
// the store, never writes it, and touches no host, so it works on a copied
// database and without a live cluster. Pure apart from reading the dataset
// files once per directory; not thread-safe (that cache).
#ifndef DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_
#define DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_

#include <string>
#include <vector>

#include "orchestrator/core/error.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A plan that cannot be made (an unreadable dataset). what() names the file.
class PlanError : public Error {
 public:
  using Error::Error;
};

struct PlanItem {
  PlannedRun run;
  std::string run_key;
  std::string dataset_sha256;
  RunState state = RunState::kPending;
  int attempts = 0;   // stored so far
  std::string failure_reason;
};

// The runs of `experiment` with their keys and database state. dataset_dir
// holds the IDX files of `fashion-mnist` runs. Throws PlanError when the
// dataset cannot be read.
std::vector<PlanItem> Plan(const Experiment& experiment, const Store& store, const std::string& trainer_sha256,
                           const std::string& dataset_dir);

// The dataset checksum of a run as the trainer reports it in run_start:
// sha256 over the four IDX files as stored (".gz" preferred) or
// "synthetic:<seed>:<n>". Throws PlanError.
std::string DatasetChecksum(const RunParams& params, const std::string& dataset_dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_PLAN_PLAN_H_
