// Test helpers for tests of the `dmlbench` program as users run it: where
// the built program is, and running it with arguments (and, optionally,
// text on its standard input). Header-only; not thread-safe.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_DMLBENCH_PROGRAM_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_DMLBENCH_PROGRAM_H_

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"

namespace dmlbench::testing {

// The build tree holds trainer/dmlbench-trainer and orchestrator/dmlbench.
inline std::string DmlbenchProgram() {
  return (std::filesystem::path(DMLBENCH_TRAINER).parent_path().parent_path() / "orchestrator" / "dmlbench")
      .string();
}

inline CommandOutput Dmlbench(std::vector<std::string> args, double timeout_s = 120) {
  args.insert(args.begin(), DmlbenchProgram());
  return RunCommand(args, timeout_s);
}

// Runs dmlbench with `args` and `input` on its standard input.
inline CommandOutput DmlbenchWithInput(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv = {DmlbenchProgram()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand({"sh", "-c", "printf '%s' " + ShellQuote(input) + " | exec " + ShellJoin(argv)}, 120);
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_DMLBENCH_PROGRAM_H_
