#include "orchestrator/model/coverage.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "orchestrator/core/link_text.h"

namespace dmlbench {
namespace {

// "1, 2, 4"
template <typename T, typename Text>
std::string Listed(const std::set<T>& values, Text text) {
  std::string out;
  for (const T& value : values) out += (out.empty() ? "" : ", ") + text(value);
  return out;
}

std::string Integer(int value) { return std::to_string(value); }

std::string Share(double cores) {
  if (cores <= 0) return "uncapped";
  std::ostringstream text;
  text << cores << " core";
  return text.str();
}

std::string Widths(const std::vector<int>& hidden) {
  std::string text = std::to_string(kInputFeatures);
  for (int width : hidden) text += "-" + std::to_string(width);
  return text + "-" + std::to_string(kClassCount);
}

std::string Bytes(std::int64_t bytes) { return std::to_string(bytes) + " B"; }

}  // namespace

std::string MpiAllreduceAlgorithm(int workers) { return std::string(Text(MpiAllreduceFor(workers))); }

CalibrationCoverage::CalibrationCoverage(const ModelFitRecord& fit, const ModelData& data) {
  for (const ModelParameterRow& p : fit.parameters) {
    if (p.name == "alpha_s") probed_.insert(p.scope);
  }
  std::set<std::int64_t> fitted;
  for (const ModelFitRunRow& row : fit.runs) fitted.insert(row.run_id);
  for (const RunObservation& run : data.runs) {
    if (!fitted.count(run.run_id)) continue;
    const ModelConfig& c = run.config;
    any_run_ = true;
    Workers& workers = workers_[ArchitectureLabel(c)];
    workers.counts.insert(c.workers);
    workers.algorithms.insert(MpiAllreduceAlgorithm(c.workers));
    batches_.insert(c.batch_size);
    ranks_.insert(c.workers + c.servers);
    shares_.insert(c.cpu_cores);
    widths_.insert(c.hidden);
    any_overlap_ = any_overlap_ || c.overlap;
    any_parts_ = any_parts_ || c.partition_bytes > 0;
    any_turn_ = any_turn_ || c.pulls_in_turn;
  }
  for (auto& [architecture, workers] : workers_) workers.listed = Listed(workers.counts, Integer);
  batches_listed_ = Listed(batches_, Integer);
  shares_listed_ = Listed(shares_, Share);
  widths_listed_ = Listed(widths_, [](const std::vector<int>& h) { return Widths(h); });
}

std::vector<std::string> CalibrationCoverage::Beyond(const ModelConfig& config) const {
  std::vector<std::string> beyond;
  if (!any_run_) {
    beyond.push_back("none of the fit's calibration runs is in this database");
    return beyond;
  }
  const std::string architecture = ArchitectureLabel(config);

  // Workers, and for mpi the allreduce algorithm they select.
  const auto seen = workers_.find(architecture);
  if (seen == workers_.end()) {
    beyond.push_back(architecture + ": no calibration run of it");
  } else {
    const std::set<int>& workers = seen->second.counts;
    if (config.workers > *workers.rbegin() || config.workers < *workers.begin()) {
      beyond.push_back("w=" + std::to_string(config.workers) + ": calibrated " + architecture + " workers " +
                       seen->second.listed);
    }
    const std::string algorithm = MpiAllreduceAlgorithm(config.workers);
    if (config.architecture == Architecture::kMpi && !seen->second.algorithms.count(algorithm)) {
      beyond.push_back("Open MPI's allreduce by " + algorithm + " at w=" + std::to_string(config.workers) +
                       ": no calibration run used it");
    }
  }

  // What every architecture shares: compute, the hosts, the links.
  if (config.batch_size > *batches_.rbegin() || config.batch_size < *batches_.begin()) {
    beyond.push_back("b=" + std::to_string(config.batch_size) + ": calibrated batch sizes " + batches_listed_);
  }
  if (!widths_.count(config.hidden)) {
    beyond.push_back("layers " + Widths(config.hidden) + ": calibrated " + widths_listed_);
  }
  const bool share_seen = std::any_of(shares_.begin(), shares_.end(),
                                      [&](double s) { return std::fabs(s - config.cpu_cores) < 1e-9; });
  if (!share_seen) {
    beyond.push_back("cpu " + Share(config.cpu_cores) + ": calibrated " + shares_listed_);
  }
  const int config_ranks = config.workers + config.servers;
  if (config_ranks > *ranks_.rbegin()) {
    beyond.push_back(std::to_string(config_ranks) + " ranks: calibration runs had at most " +
                     std::to_string(*ranks_.rbegin()) + " (on one machine, ranks share its cores)");
  }
  if (config.overlap && !any_overlap_) {
    beyond.push_back("overlap: no calibration run had it; the bucket schedule is the model's own");
  }
  if (config.partition_bytes > 0 && !any_parts_) {
    beyond.push_back("parts of " + Bytes(config.partition_bytes) + ": no calibration run had parts");
  }
  if (config.pulls_in_turn && !any_turn_) {
    beyond.push_back("pulls in turn: no calibration run had them; their schedule is the model's own");
  }
  const std::string profile = ProfileScope(config.network.bandwidth_bits_per_s, config.network.latency_s);
  if (!probed_.count(profile)) {
    beyond.push_back("link " + LinkText(config.network.bandwidth_bits_per_s, config.network.latency_s) + ": never probed; B from the probed links' measured/configured rate, "
                     "alpha their median");
  }
  return beyond;
}

Coverage CoverageOf(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data,
                    const ModelConfig& config) {
  Coverage coverage;
  coverage.architecture = SchemeLabel(config);
  const ValidationResult validation = Validate(model, fit, data);
  for (const ErrorSummary& summary : validation.summaries) {
    if (summary.architecture == coverage.architecture && summary.split == "validation") coverage.held_out = summary;
  }
  coverage.beyond = CalibrationCoverage(fit, data).Beyond(config);
  return coverage;
}

std::vector<ErrorSummary> SummariesByCoverage(const ValidationResult& result, const CalibrationCoverage& coverage) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;  // (architecture, within|beyond)
  for (const PointError& point : result.points) {
    if (point.split != "validation") continue;
    const char* side = coverage.Beyond(point.config).empty() ? "within" : "beyond";
    errors[{point.architecture, side}].push_back(std::fabs(point.relative_error));
  }
  std::vector<ErrorSummary> summaries;
  for (const auto& [key, values] : errors) summaries.push_back(Summarize(key.first, key.second, values));
  return summaries;
}

}  // namespace dmlbench
