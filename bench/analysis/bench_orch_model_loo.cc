// A model judged on its calibration runs alone: each calibration
// configuration left out in turn, the model fitted on the others (as `model
// fit` would, holding any --fix), and the left-out configuration predicted
// (the median of its runs' epoch times against the prediction, as `model
// validate` takes it). Two versions of a model, or a model with a parameter
// held and free, can so be compared without looking at a single validation
// run: choosing between them by those would make them calibration runs.
// Prints every configuration's error, then median / p95 / max of the
// absolute errors per architecture and over all. Reads the database only.
//   build-dir/bench/bench_orch_model_loo DATABASE [--model NAME] [--fix KEY=VALUE ...]
// (default model: corrected; --fix as `model fit --fix`, repeatable).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "orchestrator/model/interval.h"
#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/validation.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATABASE [--model NAME] [--fix KEY=VALUE ...]\n", argv[0]);
    return 2;
  }
  std::string model_name = "corrected";
  std::vector<std::string> fixes;
  for (int i = 2; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--model") == 0 && has_value) {
      model_name = argv[++i];
    } else if (std::strcmp(argv[i], "--fix") == 0 && has_value) {
      fixes.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "unexpected argument %s\n", argv[i]);
      return 2;
    }
  }
  const PerformanceModel& model = ModelNamed(model_name);
  const FixedParameters fixed = ParseFixedParameters(fixes);
  const Store store(argv[1], Store::Mode::kReadOnly);
  ModelData calibration = LoadModelData(store, {});
  std::erase_if(calibration.runs, [](const RunObservation& run) { return run.split != "calibration"; });

  const LeftOut left_out = LeaveOneConfigurationOut(model, calibration, fixed);
  std::printf("%s version %d: each calibration configuration left out, fitted on the rest and predicted\n",
              std::string(model.name()).c_str(), model.version());
  std::printf("%-60s %10s %11s %7s\n", "configuration", "measured_s", "predicted_s", "error");
  std::map<std::string, std::vector<double>> by_architecture;
  for (const PointError& point : left_out.points) {
    std::printf("%-60s %10.4g %11.4g %+6.1f%%\n", point.label.c_str(), point.measured.median, point.predicted_epoch_s,
                100 * point.relative_error);
    by_architecture[point.architecture].push_back(std::abs(point.relative_error));
    by_architecture["all"].push_back(std::abs(point.relative_error));
  }
  for (const std::string& skipped : left_out.skipped) std::printf("not predicted: %s\n", skipped.c_str());
  std::printf("\n%-22s %6s %7s %7s %7s\n", "architecture", "points", "median", "p95", "max");
  for (const auto& [architecture, errors] : by_architecture) {
    const ErrorSummary s = Summarize(architecture, "calibration", errors);
    std::printf("%-22s %6d %6.1f%% %6.1f%% %6.1f%%\n", architecture.c_str(), s.points, 100 * s.median_abs,
                100 * s.p95_abs, 100 * s.max_abs);
  }
  return 0;
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) {
  try {
    return dmlbench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_orch_model_loo: %s\n", e.what());
    return 1;
  }
}
