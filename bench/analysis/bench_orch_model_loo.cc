// A model judged on its calibration runs alone, two ways, on each database
// given:
//   left out one at a time: each calibration configuration left out, the
//     model fitted on the others (as `model fit` would, holding any --fix),
//     and the left-out configuration predicted (the median of its runs'
//     epoch times against the prediction, as `model validate` takes it);
//   largest workers left out: the model fitted on the calibration runs with
//     fewer workers than the largest count, and every configuration at that
//     count predicted: whether the fit extrapolates in the workers, which
//     leaving one configuration out never asks.
// Two versions of a model, or a model with a parameter held and free, can
// so be compared without looking at a single validation run: choosing
// between them by those would make them calibration runs. Prints every
// configuration's error, then median / p95 / max of the absolute errors per
// scheme and over all, per criterion; with several databases, last the
// medians per sweep, criterion and scheme side by side. Reads the
// databases only.
//   build-dir/bench/bench_orch_model_loo DATABASE... [--model NAME] [--fix KEY=VALUE ...]
// (default model: corrected; --fix as `model fit --fix`, repeatable).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

// Per scheme (and "all"), the absolute relative errors of one criterion.
using ErrorsByScheme = std::map<std::string, std::vector<double>>;

// Prints `left_out`'s points and its summary per scheme; returns the errors.
ErrorsByScheme Print(const LeftOut& left_out) {
  std::printf("%-60s %10s %11s %7s\n", "configuration", "measured_s", "predicted_s", "error");
  ErrorsByScheme errors;
  for (const PointError& point : left_out.points) {
    std::printf("%-60s %10.4g %11.4g %+6.1f%%\n", point.label.c_str(), point.measured.median, point.predicted_epoch_s,
                100 * point.relative_error);
    errors[point.architecture].push_back(std::abs(point.relative_error));
    errors["all"].push_back(std::abs(point.relative_error));
  }
  for (const std::string& skipped : left_out.skipped) std::printf("not predicted: %s\n", skipped.c_str());
  std::printf("\n%-22s %6s %7s %7s %7s\n", "architecture", "points", "median", "p95", "max");
  for (const auto& [scheme, values] : errors) {
    const ErrorSummary s = Summarize(scheme, "calibration", values);
    std::printf("%-22s %6d %6.1f%% %6.1f%% %6.1f%%\n", scheme.c_str(), s.points, 100 * s.median_abs,
                100 * s.p95_abs, 100 * s.max_abs);
  }
  return errors;
}

int Main(int argc, char** argv) {
  std::string model_name = "corrected";
  std::vector<std::string> fixes, databases;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--model") == 0 && has_value) {
      model_name = argv[++i];
    } else if (std::strcmp(argv[i], "--fix") == 0 && has_value) {
      fixes.push_back(argv[++i]);
    } else if (std::strncmp(argv[i], "--", 2) == 0) {
      std::fprintf(stderr, "unexpected argument %s\n", argv[i]);
      return 2;
    } else {
      databases.push_back(argv[i]);
    }
  }
  if (databases.empty()) {
    std::fprintf(stderr, "usage: %s DATABASE... [--model NAME] [--fix KEY=VALUE ...]\n", argv[0]);
    return 2;
  }
  const PerformanceModel& model = ModelNamed(model_name);
  const FixedParameters fixed = ParseFixedParameters(fixes);
  // sweep -> criterion -> scheme -> errors
  std::map<std::string, std::map<std::string, ErrorsByScheme>> medians;
  for (const std::string& database : databases) {
    const Store store(database, Store::Mode::kReadOnly);
    ModelData calibration = LoadModelData(store, {});
    std::erase_if(calibration.runs, [](const RunObservation& run) { return run.split != "calibration"; });
    const std::string sweep = std::filesystem::path(database).stem().string();

    std::printf("%s: %s version %d: each calibration configuration left out, fitted on the rest and predicted\n",
                sweep.c_str(), std::string(model.name()).c_str(), model.version());
    medians[sweep]["one left out"] = Print(LeaveOneConfigurationOut(model, calibration, fixed));
    std::printf("\n%s: %s version %d: the largest worker count left out, fitted on fewer workers and predicted\n",
                sweep.c_str(), std::string(model.name()).c_str(), model.version());
    medians[sweep]["largest workers out"] = Print(LeaveLargestWorkersOut(model, calibration, fixed));
    std::printf("\n");
  }
  if (databases.size() < 2) return 0;

  // The medians side by side: one row per sweep and criterion.
  std::map<std::string, bool> schemes;
  for (const auto& [sweep, criteria] : medians) {
    for (const auto& [criterion, errors] : criteria) {
      for (const auto& [scheme, values] : errors) schemes[scheme] = true;
    }
  }
  std::printf("median absolute error per sweep, criterion and scheme\n%-30s %-20s", "sweep", "criterion");
  for (const auto& [scheme, unused] : schemes) std::printf(" %8s", scheme.c_str());
  std::printf("\n");
  for (const auto& [sweep, criteria] : medians) {
    for (const auto& [criterion, errors] : criteria) {
      std::printf("%-30s %-20s", sweep.c_str(), criterion.c_str());
      for (const auto& [scheme, unused] : schemes) {
        const auto it = errors.find(scheme);
        if (it == errors.end()) {
          std::printf(" %8s", "-");
        } else {
          std::printf(" %7.1f%%", 100 * Summarize(scheme, "calibration", it->second).median_abs);
        }
      }
      std::printf("\n");
    }
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
