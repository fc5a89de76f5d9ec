#include "orchestrator/model/paper2019.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "orchestrator/model/fitting.h"
#include "orchestrator/model/least_squares.h"

namespace dmlbench {
namespace {

// The paper's communication time of one epoch, counted once (its Eqs. 8-10,
// 16-17, 20), with B the probed link rate, bytes/s:
//   ps   availableB = (B / w) k; pull W / availableB + push (W / w) / availableB
//   p2p  availableB = B / (2 (w - 1)); (W / w) / availableB
//   ring 2 (w - 1) (W / w) / B     (mpi: the same; it is not in the paper)
double PaperCommunicationS(const ModelConfig& config, double gradient_bytes, double bytes_per_s) {
  const double w = config.workers, W = gradient_bytes;
  switch (config.architecture) {
    case Architecture::kPs: {
      const double available = bytes_per_s / w * config.servers;
      return W / available + (W / w) / available;
    }
    case Architecture::kP2p:
      if (config.workers == 1) return 0;
      return (W / w) / (bytes_per_s / (2 * (w - 1)));
    case Architecture::kRing:
    case Architecture::kMpi:
      return 2 * (w - 1) * (W / w) / bytes_per_s;
  }
  return 0;
}

}  // namespace

ModelFitRecord Paper2019::Fit(const ModelData& data, const FixedParameters& fixed) const {
  RefuseFixed(*this, fixed);
  ModelFitRecord fit = NewFit(*this);
  AddLinks(data, fit);
  std::map<std::string, std::vector<const RunObservation*>> groups;
  for (const RunObservation* run : UsableRuns(data)) groups[ArchitectureLabel(run->config)].push_back(run);
  double squares = 0;
  for (const auto& [scope, runs] : groups) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y, comm;
    for (const RunObservation* run : runs) {
      const double b = LinkFor(fit, run->config).bytes_per_s;
      comm.push_back(PaperCommunicationS(run->config, 4.0 * run->parameters, b));
      rows.push_back({static_cast<double>(run->iterations_per_epoch)});
      y.push_back(run->epoch_s - comm.back());
    }
    const LeastSquaresFit processing = FitLeastSquares({"processing_s"}, rows, y);
    fit.parameters.push_back(Fitted(processing.coefficients[0], "s/iteration", scope));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double iterations = static_cast<double>(runs[i]->iterations_per_epoch);
      const double fitted = (processing.coefficients[0].value * iterations + comm[i]) / iterations;
      fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, fitted});
      squares += (fitted - runs[i]->iteration_s) * (fitted - runs[i]->iteration_s);
    }
    fit.points += static_cast<int>(runs.size());
  }
  fit.residual_rms_s = std::sqrt(squares / static_cast<double>(fit.runs.size()));
  return fit;
}

Prediction Paper2019::PredictUnchecked(const ModelFitRecord& fit, const ModelConfig& config) const {
  const std::string scope = ArchitectureLabel(config);
  if (FindParameter(fit, "processing_s", scope) == nullptr) {
    throw ModelError("paper2019 has no processing time for " + scope + ": no calibration run of it");
  }
  const double processing = Parameter(fit, "processing_s", scope);
  const double comm_epoch = PaperCommunicationS(config, GradientBytes(config), LinkFor(fit, config).bytes_per_s);
  const double iterations = static_cast<double>(IterationsPerEpoch(config));
  Prediction p;
  p.compute_s = processing;
  p.comm_s = comm_epoch / iterations;
  return FinishPrediction(config, processing + p.comm_s, p);
}

}  // namespace dmlbench
