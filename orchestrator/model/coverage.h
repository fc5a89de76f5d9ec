// Coverage: what a prediction rests on. A fitted model answers for any
// configuration (`dmlbench model predict`), but it was fitted on the
// calibration runs and probes its fit records and judged only on the
// validation runs the database holds. For one configuration this tells
// which of its settings lie beyond what the fit saw (more workers, another
// link, CPU share, batch size or layer widths, overlap or parts when no
// calibration run had them, MPI's allreduce in an algorithm never
// calibrated), and how far the model missed the held-out configurations of
// the same architecture. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/validation.h"

namespace dmlbench {

struct Coverage {
  std::string architecture;              // "ring", "ps k=2", "ps k=1 pulls-in-turn" (SchemeLabel)
  // The model's errors on the validation configurations of that
  // architecture under this fit; empty when the database has none.
  std::optional<ErrorSummary> held_out;
  // Each setting of the configuration beyond what the fit saw, as a phrase
  // naming the setting, its value and what the calibration covered.
  std::vector<std::string> beyond;
};

// What a fit's calibration covered: the settings of its calibration runs
// (those of fit.runs found in `data`, which holds the database's runs,
// LoadModelData) and the links it probed.
class CalibrationCoverage {
 public:
  CalibrationCoverage(const ModelFitRecord& fit, const ModelData& data);  // keeps neither
  // Each setting of `config` beyond it, as a phrase naming the setting, its
  // value and what the calibration covered; empty when all are within.
  std::vector<std::string> Beyond(const ModelConfig& config) const;

 private:
  // What the configurations of its calibration runs hold, gathered once
  // with the lists the phrases quote: Beyond runs for every candidate of a
  // search.
  struct Workers {
    std::set<int> counts;
    std::set<std::string> algorithms;    // MpiAllreduceAlgorithm of each count
    std::string listed;                  // "1, 2, 4"
  };
  bool any_run_ = false;                 // a calibration run of the fit is in the data
  std::map<std::string, Workers> workers_;  // by ArchitectureLabel
  std::set<int> batches_, ranks_;
  std::set<double> shares_;
  std::set<std::vector<int>> widths_;
  std::string batches_listed_, shares_listed_, widths_listed_;
  bool any_overlap_ = false, any_parts_ = false, any_turn_ = false;
  std::set<std::string> probed_;         // the profile scopes of its probes
};

// The coverage of one configuration under `fit`, with the model's held-out
// errors for its architecture (from Validate on `data`).
Coverage CoverageOf(const PerformanceModel& model, const ModelFitRecord& fit, const ModelData& data,
                    const ModelConfig& config);

// The validation points of `result`, per architecture, split by coverage:
// ErrorSummary rows whose split is "within" (every setting within the
// calibration) or "beyond" (at least one beyond it), architecture order.
std::vector<ErrorSummary> SummariesByCoverage(const ValidationResult& result, const CalibrationCoverage& coverage);

// The name of Open MPI's allreduce algorithm for w ranks (physics.h
// MpiAllreduceFor), as the coverage phrases say it.
std::string MpiAllreduceAlgorithm(int workers);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_COVERAGE_H_
