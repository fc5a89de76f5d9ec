// SlurmJobFacts: where a Slurm job step of an attempt ran and how Slurm says
// it ended, carried from the slurm launcher (launch/slurm) to the attempt's
// typed columns (store, schemas/database.md) so that a user can SELECT and
// join them. A plain struct; thread-compatible.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_SLURM_JOB_H_
#define DMLBENCH_ORCHESTRATOR_CORE_SLURM_JOB_H_

#include <string>
#include <vector>

namespace dmlbench {

struct SlurmJobFacts {
  std::string job_id;              // the allocation: "12"
  std::string step_id;             // "12.3"; "" when no step of the trainer was launched (or mpirun's own)
  std::vector<std::string> nodes;  // where the ranks ran, in order
  std::string state;               // COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, ...
  std::string exit;                // who said it and the code: "srun exit 0", "sacct exit 0:15", "mpirun exit 1"
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_SLURM_JOB_H_
