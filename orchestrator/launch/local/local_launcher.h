// LocalLauncher: the Launcher for an mpirun on this machine. Each Launch()
// runs `mpirun [ARGS] -np R [--oversubscribe] [--output-filename DIR:nojobid]
// TRAINER ARGS` in its own process group with stdout/stderr on pipes, streams
// stdout lines as they arrive, keeps the stderr tail (and the whole of it in
// the output directory), and stops the whole group on timeout or cancel; mpirun
// gets SIGTERM if the orchestrator dies. Launch() from one thread at a time.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LAUNCHER_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LAUNCHER_H_

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/launch/launcher.h"

namespace dmlbench {

struct LocalLauncherOptions {
  std::string mpirun = "mpirun";   // path, or a name searched in PATH
  std::vector<std::string> mpirun_args;  // before `-np`, e.g. a hostfile and transport settings
  bool ranks_on_this_machine = true;     // false: the ranks run on other hosts (mpirun_args say which)
  // Where each rank writes its output (job_output.h) when the spec asks for
  // it, if not spec.output_dir: a path on the ranks' hosts, for ranks that do
  // not run here (the caller collects the files); mpirun's stderr still goes
  // to spec.output_dir.
  std::string ranks_output_dir;
  std::string trainer;             // program every rank runs (dmlbench-trainer)
  // Where the trainer keeps a spec's dataset decoded for the next runs
  // (its --dataset-cache, on the ranks' hosts); "" = decoded at every run.
  std::string dataset_cache_dir;
  std::ostream* warnings = nullptr;  // oversubscription warnings; nullptr = std::cerr
  double kill_grace_s = 5;         // SIGTERM to the group (mpirun stops its ranks), then SIGKILL
};

class LocalLauncher : public Launcher {
 public:
  explicit LocalLauncher(LocalLauncherOptions options);

  // Facts of this machine (/proc, uname, `mpirun --version`). Throws
  // LaunchError when mpirun cannot be run.
  std::vector<HostFacts> Prepare() override;
  // Throws LaunchError when the trainer cannot be read. Hashes the file
  // again only when its inode, size or modification time changed since the
  // last call (a sweep asks before every run).
  std::string TrainerSha256() const override;
  LaunchResult Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override;

 private:
  LocalLauncherOptions options_;
  std::set<int> warned_ranks_;
  mutable std::string trainer_stamp_;   // device, inode, size and mtime of the last hashed trainer
  mutable std::string trainer_sha256_;  // its hash
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_LOCAL_LOCAL_LAUNCHER_H_
