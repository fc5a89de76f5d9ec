// Matrix: reads an experiment file (experiments/*.toml, format in
// schemas/matrix.md), validates it and expands it into fully resolved runs.
// This is the one place TOML becomes typed options. It does not look at the
// database or any host. Pure functions; safe to call from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_
#define DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_

#include <cstdint>
#include <stdexcept>
#include <string>
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

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MATRIX_MATRIX_H_
