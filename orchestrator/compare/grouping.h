// Grouping: a side's complete runs as configurations, for Compare and
// CompareHistory alike — each configuration's pooled steady epochs and its
// runs' medians, keyed by the configuration (or, paired --by a key, by the
// configuration without it), and the order people scan configurations in.
// Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_GROUPING_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_GROUPING_H_

#include <map>
#include <string>
#include <vector>

#include "orchestrator/compare/compare.h"

namespace dmlbench {

struct ConfigurationGroup {
  RunParams params;            // of its first run
  std::string configuration;   // ConfigurationJson of its first run
  int runs = 0;
  std::vector<double> sample;  // every run's steady epochs
  std::vector<double> run_medians;
  bool warmup_included = false;
};

// The keys of a --by list: "batch_size,max_iterations_per_epoch" ->
// {"batch_size", "max_iterations_per_epoch"}.
std::vector<std::string> ByKeysOf(const std::string& by);

// The configuration without the keys of `by` ("" = none): what pairs A's
// configurations with B's.
std::string PairingKey(const RunParams& params, const std::string& by);

// `runs` with a steady epoch, grouped by PairingKey. Throws CompareError
// naming `side` when two of its configurations share a key (they differ in
// the keys of `by`).
std::map<std::string, ConfigurationGroup> GroupRuns(const std::vector<RunSample>& runs, const std::string& by = "",
                                                    const std::string& side = "");

// Whether configuration x comes before y as people scan them: architecture,
// servers, workers, batch size, then whatever else (their keys) tells them
// apart.
bool ScansBefore(const RunParams& x, const std::string& x_key, const RunParams& y, const std::string& y_key);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_GROUPING_H_
