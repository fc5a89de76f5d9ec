#include "orchestrator/model/performance_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "orchestrator/store/epoch_validity.h"

namespace dmlbench {

FixedParameters ParseFixedParameters(const std::vector<std::string>& fixes) {
  FixedParameters fixed;
  for (const std::string& fix : fixes) {
    const std::size_t at = fix.rfind('=');
    const std::string key = at == std::string::npos ? "" : fix.substr(0, at);
    const std::string text = at == std::string::npos ? "" : fix.substr(at + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (key.empty() || text.empty() || end != text.c_str() + text.size()) {
      throw ModelError("--fix \"" + fix + "\": expected NAME=VALUE or \"NAME SCOPE=VALUE\" with a number, "
                       "e.g. --fix cpu_while_waiting=0.067 or --fix \"wire_factor ps k=1=1.0\"");
    }
    if (!fixed.emplace(key, value).second) throw ModelError("--fix " + key + " given twice");
  }
  return fixed;
}

Prediction PerformanceModel::Predict(const ModelFitRecord& fit, const ModelConfig& config) const {
  Prediction p = PredictUnchecked(fit, config);
  const auto refuse = [&](const char* what, double value, const char* expected) {
    char number[32];
    std::snprintf(number, sizeof number, "%.4g", value);
    throw ModelError("fit " + std::to_string(fit.fit_id) + " predicts " + what + " of " + number + " s, not " +
                     expected + ": refit it (dmlbench model fit)");
  };
  if (EpochFault(p.epoch_s, 1, 0)) refuse("an epoch time", p.epoch_s, "a positive finite time");
  for (const auto& [what, value] : {std::pair{"a compute time", p.compute_s}, std::pair{"an update time", p.update_s},
                                    std::pair{"a communication time", p.comm_s},
                                    std::pair{"a hidden communication time", p.hidden_comm_s},
                                    std::pair{"a worker's CPU time", p.worker_cpu_s},
                                    std::pair{"a server's CPU time", p.server_cpu_s}}) {
    if (!std::isfinite(value)) refuse(what, value, "a finite time");
  }
  return p;
}

}  // namespace dmlbench
