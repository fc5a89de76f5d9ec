#include "orchestrator/model/judge.h"

#include <map>

#include "orchestrator/model/validation.h"

namespace dmlbench {
namespace {

// `data` with only the runs of `split`.
ModelData OfSplit(const ModelData& data, const std::string& split) {
  ModelData part;
  part.links = data.links;
  for (const RunObservation& run : data.runs) {
    if (run.split == split) part.runs.push_back(run);
  }
  return part;
}

ModelJudgement JudgeOne(const PerformanceModel& model, const ModelData& calibration, const ModelData& validation,
                        const std::map<std::string, ErrorSummary>& noise, double level) {
  ModelJudgement judgement;
  judgement.model = std::string(model.name());
  judgement.version = model.version();
  judgement.level = level;
  ModelFitRecord fit;
  try {
    fit = FitWithInterval(model, calibration, {}, level);
  } catch (const ModelError& e) {
    judgement.not_fitted = e.what();
    return judgement;
  }
  judgement.calibration_configurations = fit.points;
  judgement.scaled_by_regime = ScaledPerRegime(fit);
  if (const ModelIntervalRow* beyond = BeyondWorkersRowOf(fit)) judgement.beyond_workers = *beyond;
  const ValidationResult result = Validate(model, fit, validation);
  judgement.skipped = result.skipped;
  std::map<std::string, IntervalCoverage> coverage;  // by scheme
  for (const IntervalCoverage& c : CoverageByScheme(result.points, "validation")) coverage[c.architecture] = c;
  for (const ErrorSummary& summary : result.summaries) {
    SchemeJudgement scheme;
    scheme.architecture = summary.architecture;
    scheme.configurations = summary.points;
    scheme.median_abs = summary.median_abs;
    scheme.p95_abs = summary.p95_abs;
    scheme.max_abs = summary.max_abs;
    if (const auto it = noise.find(summary.architecture); it != noise.end()) {
      scheme.split_half_configurations = it->second.points;
      scheme.split_half_median = it->second.median_abs;
    }
    if (const auto it = coverage.find(summary.architecture); it != coverage.end()) {
      scheme.covered = it->second.covered;
      scheme.coverage = it->second.coverage;
      scheme.median_half_width = it->second.median_half_width;
    }
    judgement.schemes.push_back(scheme);
  }
  return judgement;
}

}  // namespace

std::vector<ModelJudgement> Judge(const ModelData& data, const std::vector<const PerformanceModel*>& models,
                                  double level) {
  const ModelData calibration = OfSplit(data, "calibration");
  const ModelData validation = OfSplit(data, "validation");
  if (validation.runs.empty()) throw ModelError("no complete validation run: nothing to judge a model on");
  std::map<std::string, ErrorSummary> noise;  // by scheme
  for (const ErrorSummary& summary : Repeatability(validation)) noise[summary.architecture] = summary;
  std::vector<ModelJudgement> judgements;
  for (const PerformanceModel* model : models) {
    judgements.push_back(JudgeOne(*model, calibration, validation, noise, level));
  }
  return judgements;
}

}  // namespace dmlbench
