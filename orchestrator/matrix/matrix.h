// Matrix: reads an experiment file (experiments/*.toml, format in
// schemas/matrix.md), validates it and expands it into fully resolved runs.
// This is the one place TOML becomes typed options. It does not look at the
// database or any host. Pure functions; safe to call from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_
#define DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

// Thrown for any invalid experiment file. what() is the whole message:
// "experiments/sweep.toml:12:5: workers must be between 1 and 64, got 0".
// excerpt() holds the source line and a caret under the column.
class MatrixError : public LocatedError {
 public:
  explicit MatrixError(const std::string& message, std::string excerpt = "")
      : LocatedError(message, std::move(excerpt)) {}
};

// Reads, validates and expands. Throws MatrixError.
Experiment LoadExperiment(const std::string& path);
// Same, from text already in memory (`path` is only used in messages).
Experiment ParseExperiment(const std::string& text, const std::string& path);

// One run's parameters from KEY=VALUE settings as a command line gives them
// (`model predict architecture=ps workers=4 hidden=128,32`), over the
// built-in defaults, the last of a key winning. Each value is read as the
// file would read the parameter, with its types, ranges and messages: the
// text stands for the TOML value it spells (an integer, a float, true or
// false — on and off too for the booleans — else a string; hidden is its
// comma-separated widths). Then, as for an [[include]], servers applies
// to ps only and pulls_in_turn only where PullsInTurnApplies, and both
// are resolved (ResolveScopedParams). network cannot be set: its profiles
// are a file's. Throws MatrixError "<key>=<value>: <message>", e.g.
// "workers=0: workers must be between 1 and 64, got 0".
RunParams ParseRunSettings(const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_
