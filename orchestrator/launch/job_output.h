// JobOutput: the layout of LaunchSpec::output_dir — where a launch leaves
// what its job printed — and how to list it. Every rank's standard output
// and error go to their own files through Open MPI's --output-filename,
// which writes them on the host where the rank runs while mpirun still
// forwards both streams as before, so rank 0's event lines reach on_line
// unchanged; mpirun's whole standard error goes to one more file. Launchers
// write this layout, the run loop hands the files to the store. Also the
// names of the directories that hold it, which say whose they are. Pure
// functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_JOB_OUTPUT_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_JOB_OUTPUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dmlbench {

// mpirun's whole standard error, as the launcher received it.
inline constexpr const char* kMpirunStderrFile = "mpirun.stderr";

// The mpirun arguments that put each rank's streams in
// `dir`/rank.N/stdout and `dir`/rank.N/stderr (N the rank, zero-padded to
// the width of the largest) on the rank's host. `dir` must be absolute and
// hold no ':' (Open MPI reads options after one).
std::vector<std::string> OutputFilenameArgs(const std::string& dir);

// One file of the layout.
struct JobOutputFile {
  std::optional<int> rank;  // empty: mpirun's own stderr
  std::string stream;       // "stdout" | "stderr"
  std::string path;
};

// An attempt's output directory on this machine is named
// "dmlbench-output-<pid>-XXXXXX" after the orchestrator that made it
// (run/output_dir.h); the hosts' directory it is collected from is
// ".output-<run_key>-" followed by that name (ssh/collect_output.h).
inline constexpr char kOutputDirPrefix[] = "dmlbench-output-";

// Whether `name`, of either form, is an attempt's output directory whose
// orchestrator — a process of this machine — no longer runs: one killed
// (SIGKILL runs no destructor) never removed it nor collected it from the
// hosts. A name of any other form is never an orphan.
bool OrphanedOutputDir(std::string_view name);

// The files of the layout found in `dir`: by rank, stdout before stderr,
// mpirun's stderr last. Anything else in `dir` is ignored; a missing `dir`
// holds nothing.
std::vector<JobOutputFile> ListJobOutput(const std::string& dir);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_JOB_OUTPUT_H_
