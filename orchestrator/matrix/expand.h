// Expand: turns what an experiment file declares (MatrixSpec) into its runs
// — the cartesian product of the dimensions in expansion order, minus
// [[exclude]], plus [[include]], times repetitions (seed = base + repetition),
// each with its split. Internal to orchestrator/matrix; failures are located
// through the reader that read the spec. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MATRIX_EXPAND_H_
#define DMLBENCH_ORCHESTRATOR_MATRIX_EXPAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/matrix/params.h"

namespace dmlbench {

// Far beyond any sweep that can finish (100,000 runs of one minute each take
// ten weeks); the cap keeps a slip such as one list too many from exhausting
// memory.
inline constexpr std::int64_t kMaxRuns = 100000;

// "the matrix must expand to at most 100000 runs (points x repetitions), got N".
std::string TooManyRuns(std::int64_t runs);

// The runs of `spec`, in expansion order (deterministic). Fails through
// `reader` when an exclude matches no point of the product (almost always a
// typo), nothing is left, an include repeats a point, the runs exceed
// kMaxRuns or the calibration rule matches no run.
std::vector<PlannedRun> Expand(const MatrixSpec& spec, const TomlReader& reader);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MATRIX_EXPAND_H_
