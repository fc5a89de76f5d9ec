// The experiment file the run loop's tests use: synthetic data, three
// iterations per epoch, the given matrix, timeout and attempts, runs in
// matrix order, more [execution] keys if given, and workers = 1 as
// calibration. Header-only.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_RUN_RUNNER_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_RUN_RUNNER_FIXTURE_H_

#include <sstream>
#include <string>

namespace dmlbench::testing {

inline std::string MatrixText(const std::string& matrix, double timeout_s = 60, int attempts = 2,
                              const std::string& defaults = "", const std::string& execution = "") {
  std::ostringstream text;
  text << "[experiment]\nname = \"runner-test\"\n[defaults]\ndataset = \"synthetic\"\n"
       << "max_iterations_per_epoch = 3\n"
       << defaults << "[matrix]\n"
       << matrix << "[execution]\norder = \"matrix\"\ntimeout_s = " << timeout_s << "\nattempts = " << attempts
       << "\n" << execution << "[split]\ncalibration = { workers = [1] }\n";
  return text.str();
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_RUN_RUNNER_FIXTURE_H_
