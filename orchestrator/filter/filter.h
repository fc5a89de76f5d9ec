// Filter: the one language for choosing runs — `run --only`, `plan --only`,
// `forget`, `logs`, `report` and `compare` all take it — parsed with errors
// located by column, and evaluated against the facts of a run, whether
// planned or stored. The grammar is in schemas/filter.md. It reads neither the matrix
// nor the database: callers hand it RunFacts. Immutable after parsing;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_FILTER_FILTER_H_
#define DMLBENCH_ORCHESTRATOR_FILTER_FILTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/enums.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

// A filter that does not parse. what() is "<source>: column N: <message>",
// e.g. "--only: column 14: expected a value after '>='"; excerpt() is the
// filter text and a caret under the column.
class FilterError : public LocatedError {
 public:
  using LocatedError::LocatedError;
};

// What a filter can ask about one run. Borrowed views: valid while the
// caller's run is.
struct RunFacts {
  const RunParams& params;
  std::string_view run_key;
  RunState state;                        // the plan's state, or runs.status
  std::string_view split;
  const std::vector<std::string>& tags;
  const std::vector<std::string>& experiments;  // names of the experiments that planned the run
  std::string_view trainer_sha256;
};

class Filter {
 public:
  // The empty filter: it matches every run.
  Filter() = default;

  // Parses `text`; `source` names it in messages ("--only", "FILTER").
  // Throws FilterError.
  static Filter Parse(std::string_view text, std::string source);

  bool Matches(const RunFacts& run) const;
  bool empty() const { return terms_.empty(); }
  const std::string& text() const { return text_; }

  // The error for a filter that chose nothing: "--only workers>=64 matches
  // none of <among>", `among` e.g. "the 12 runs of quickstart".
  std::string NoMatch(std::string_view among) const;

  // What one term asks; parsed values, so Matches() does no parsing.
  enum class Field {
    kArchitecture, kWorkers, kServers, kBatchSize, kEpochs, kHidden, kLearningRate, kOverlap, kBucketBytes,
    kPartitionBytes, kPullsInTurn, kMaxIterationsPerEpoch, kDataset, kNetwork, kSeed, kRepetition, kSplit, kStatus,
    kTag, kExperiment, kKey, kTrainer
  };
  enum class Op { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };
  struct Term {
    Field field;
    Op op;
    std::vector<std::string> texts;  // the values as written (hex prefixes in lower case)
    std::vector<double> numbers;     // the values of a numeric field
  };

 private:
  std::string source_;
  std::string text_;
  std::vector<Term> terms_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_FILTER_FILTER_H_
