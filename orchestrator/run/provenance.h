// Provenance: what the run loop records about where a run's inputs came
// from that the matrix does not say — here the git commit and dirty flag of
// the repository holding the matrix file (DESIGN.md section 5). Runs git;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_PROVENANCE_H_
#define DMLBENCH_ORCHESTRATOR_RUN_PROVENANCE_H_

#include <string>

#include "orchestrator/store/store.h"

namespace dmlbench {

// Sets git_commit and git_dirty of the repository holding `file`; leaves
// both empty outside a repository or without git.
void AddGitState(const std::string& file, RunProvenance* provenance);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_PROVENANCE_H_
