// BuildInfo: what this dmlbench was built from, for provenance (a stored
// model fit records it) and `dmlbench --version`. The definition is
// generated at every build (cmake/BuildInfo.cmake). Thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_BUILD_INFO_H_
#define DMLBENCH_ORCHESTRATOR_CORE_BUILD_INFO_H_

namespace dmlbench {

// The git commit of the source tree ("<sha1>" or "<sha1>-dirty"), or
// "unknown" when it was built outside git.
const char* BuildCommit();

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_BUILD_INFO_H_
