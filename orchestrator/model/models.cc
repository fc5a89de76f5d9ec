#include "orchestrator/model/models.h"

#include <string>

#include "orchestrator/model/corrected.h"
#include "orchestrator/model/counts.h"
#include "orchestrator/model/linear.h"
#include "orchestrator/model/paper2019.h"

namespace dmlbench {

const std::vector<std::unique_ptr<PerformanceModel>>& Models() {
  static const std::vector<std::unique_ptr<PerformanceModel>> models = [] {
    std::vector<std::unique_ptr<PerformanceModel>> all;
    all.push_back(std::make_unique<Paper2019>());
    all.push_back(std::make_unique<CorrectedModel>(false));
    all.push_back(std::make_unique<CorrectedModel>(true));
    all.push_back(std::make_unique<LinearModel>());
    all.push_back(std::make_unique<CountsModel>());
    return all;
  }();
  return models;
}

std::string_view DefaultModelName() { return "corrected"; }

const PerformanceModel& ModelNamed(std::string_view name) {
  std::string known;
  for (const auto& model : Models()) {
    if (model->name() == name) return *model;
    known += (known.empty() ? "" : ", ") + std::string(model->name());
  }
  throw ModelError("unknown model \"" + std::string(name) + "\", expected one of: " + known);
}

}  // namespace dmlbench
