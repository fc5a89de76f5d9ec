// OutputDir: the directory under the system's temporary directory where one
// attempt's output lands (launch/job_output.h), removed with its content
// when the attempt is done. Its name carries the orchestrator's process id,
// "dmlbench-output-<pid>-XXXXXX", so that the directories of an orchestrator
// that was killed (SIGKILL runs no destructor) are recognised and removed by
// the next sweep. Not copyable; one owner.
#ifndef DMLBENCH_ORCHESTRATOR_RUN_OUTPUT_DIR_H_
#define DMLBENCH_ORCHESTRATOR_RUN_OUTPUT_DIR_H_

#include <string>

namespace dmlbench {

class OutputDir {
 public:
  // A fresh directory in `parent` (default: the system's temporary
  // directory). Throws RunnerError when it cannot be created.
  explicit OutputDir(const std::string& parent = "");
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the output directories in `parent` (default: the system's
// temporary directory) whose process no longer exists; returns how many.
// Directories of living processes, and names of any other form, are kept.
int RemoveOrphanedOutputDirs(const std::string& parent = "");

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RUN_OUTPUT_DIR_H_
