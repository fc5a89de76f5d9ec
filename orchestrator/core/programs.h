// Programs: where dmlbench finds its companion programs (dmlbench-trainer,
// dmlbench-linkprobe): next to the running binary (an installed prefix),
// else in the build tree's trainer/ directory, else by PATH. Reads
// /proc/self/exe; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_PROGRAMS_H_
#define DMLBENCH_ORCHESTRATOR_CORE_PROGRAMS_H_

#include <string>

namespace dmlbench {

// The path of program `name` beside this one, or `name` itself (to be
// searched in PATH) when there is none.
std::string SiblingProgram(const std::string& name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_PROGRAMS_H_
