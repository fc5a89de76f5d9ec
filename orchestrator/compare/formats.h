// Formats: a comparison, a history and a gate as the machine formats of
// `compare --json` and `--csv` (their fields are docs/ci.md's). It owns the
// field names and what each holds, not the printing (the command line).
// Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_FORMATS_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_FORMATS_H_

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/compare/compare.h"
#include "orchestrator/compare/gate.h"
#include "orchestrator/compare/history.h"
#include "orchestrator/store/records.h"

namespace dmlbench {

// A side as the JSON names it.
struct SideOrigin {
  std::string operand;       // as given
  std::string database;
  std::string filter;        // "" = every run of the database
  std::size_t complete_runs = 0;
};

// The whole comparison: both sides, the methods, the gate (with --fail-if),
// each configuration (by `labels`), the study's test, the shift by
// architecture and the configurations found on one side only.
nlohmann::json ComparisonJson(const SideOrigin& a, const SideOrigin& b, const Comparison& comparison,
                              const std::vector<std::string>& labels, double factor,
                              const std::optional<GateOutcome>& gate);
// One row per configuration: both sides' summaries, the pooled-epoch
// verdict and the U test (and, paired --by, B's parameters).
QueryResult ComparisonCsv(const Comparison& comparison, const std::vector<std::string>& labels);

// A history of `spec` in `database`: each configuration's median per
// build, its ratio, largest step and trend, and the gate.
nlohmann::json HistoryJson(const std::string& spec, const std::string& database, const History& history,
                           const std::vector<std::string>& labels, double factor,
                           const std::optional<GateOutcome>& gate);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_FORMATS_H_
