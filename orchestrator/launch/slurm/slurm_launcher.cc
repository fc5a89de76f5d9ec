#include "orchestrator/launch/slurm/slurm_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>

#include "common/sha256.h"
#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/launch/job_output.h"
#include "orchestrator/launch/local/local_launcher.h"
#include "orchestrator/launch/slurm/slurm_queries.h"

namespace dmlbench {
namespace {

constexpr size_t kStderrTailBytes = 8192;
constexpr double kQueryTimeoutS = 30;  // sinfo, scancel: answered by the controller at once
constexpr double kPendingPollS = 2;     // how often a pending request's reason is asked (squeue)
// The least time srun may retry "step creation temporarily disabled" before
// the attempt gives up (a restarted controller waits for its nodes to
// register, two minutes seen here); a run's own timeout_s when longer.
constexpr double kStepCreationWaitS = 300;
// After this long without its step, a launch says it waits for it (srun
// often waits silently while the controller is away).
constexpr double kStepNoticeS = 5;

// Makes the directory $1 on a node unless this user's own directory (not a
// link) is there already, as on nodes that share it; says why not.
constexpr char kMakeOwnDirectory[] =
    "e=$(mkdir -m 0700 -- \"$1\" 2>&1)\n"
    "if [ -L \"$1\" ] || [ ! -d \"$1\" ] || [ ! -O \"$1\" ]; then\n"
    "  echo \"${e:-$1 is not a directory of this user}\" >&2; exit 1\n"
    "fi\n";

std::string RandomHexDigits(int count) {
  std::random_device device;
  std::string text;
  while (static_cast<int>(text.size()) < count) text += "0123456789abcdef"[device() % 16];
  return text;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The words after `prefix` up to the first of `stops`, or "" when `line`
// does not contain `prefix`.
std::string After(std::string_view line, std::string_view prefix, std::string_view stops) {
  const size_t at = line.find(prefix);
  if (at == std::string_view::npos) return "";
  std::string_view rest = line.substr(at + prefix.size());
  return std::string(rest.substr(0, rest.find_first_of(stops)));
}

// The options every salloc and srun of a sweep share, as `--name=value`
// words, so that a value starting with '-' or holding spaces stays a value.
std::vector<std::string> PlacementArgs(const SlurmOptions& slurm) {
  std::vector<std::string> args;
  const std::pair<const char*, const std::string*> options[] = {{"--partition=", &slurm.partition},
                                                                {"--account=", &slurm.account},
                                                                {"--qos=", &slurm.qos},
                                                                {"--constraint=", &slurm.constraint}};
  for (const auto& [name, value] : options) {
    if (!value->empty()) args.push_back(name + *value);
  }
  return args;
}

// "n2 DOWN (maintenance)" for each node of `names` Slurm has down now,
// comma separated; "" when none is.
std::string DownNodes(const std::vector<std::string>& names, bool* all_down = nullptr) {
  std::string down;
  const std::vector<SlurmNode> nodes = names.empty() ? std::vector<SlurmNode>{} : ShowNodes(names).value_or(std::vector<SlurmNode>{});
  if (all_down != nullptr) *all_down = !nodes.empty();
  for (const SlurmNode& node : nodes) {
    if (!NodeUnusable(node.state)) {
      if (all_down != nullptr) *all_down = false;
      continue;
    }
    down += (down.empty() ? "" : ", ") + node.facts.name + " " + node.state +
            (node.reason.empty() ? "" : " (" + node.reason + ")");
  }
  return down;
}

// Why the pending job `job_id` can never start as long as its nodes stay as
// they are ("" when it can): Slurm names required nodes, and all are down.
// A reservation ("Reserved_for_maintenance") ends by itself: "".
std::string Unstartable(const std::string& job_id) {
  const std::optional<SlurmJob> job = ShowJob(job_id);
  const std::string marker = "UnavailableNodes:";  // "ReqNodeNotAvail,_UnavailableNodes:n2,n3"
  const size_t at = job ? job->reason.find(marker) : std::string::npos;
  if (at == std::string::npos) return "";
  bool all_down = false;
  const std::string down = DownNodes(ExpandHostnames(job->reason.substr(at + marker.size())), &all_down);
  return all_down ? "slurm job " + job_id + " waits for nodes that are down: " + down : "";
}

std::vector<std::string> TaskArgs(const SlurmOptions& slurm, int ranks) {
  std::vector<std::string> args = {"--ntasks=" + std::to_string(ranks)};
  if (slurm.one_rank_per_node) args.insert(args.end(), {"--nodes=" + std::to_string(ranks), "--ntasks-per-node=1"});
  return args;
}

}  // namespace

StepReport ReadStepReport(std::string_view srun_stderr) {
  StepReport report;
  std::istringstream lines{std::string(srun_stderr)};
  std::string line;
  while (std::getline(lines, line)) {
    // srun -v: "srun: launching StepId=12.3 on host n1, 2 tasks: [0-1]"
    if (line.rfind("srun: launching StepId=", 0) == 0) {
      report.step_id = After(line, "StepId=", " ");
      const std::string node = After(line, " on host ", ", ");
      if (!node.empty() && std::find(report.nodes.begin(), report.nodes.end(), node) == report.nodes.end()) {
        report.nodes.push_back(node);
      }
      continue;
    }
    if (const size_t at = line.find("error: execve(): "); at != std::string::npos && report.cannot_execute.empty()) {
      report.cannot_execute = line.substr(at + std::string_view("error: execve(): ").size());
      continue;
    }
    // "srun: error: n1: task 0: Exited with exit code 2"
    if (line.rfind("srun: error: ", 0) == 0 && line.find(": task ") != std::string::npos && report.exited_node.empty()) {
      report.exited_node = After(line, "srun: error: ", ":");
      continue;
    }
    // Sometimes srun says only this, and exits 0.
    if (line.rfind("srun: error: Node failure on ", 0) == 0) {
      report.failed_nodes.push_back(line.substr(std::string_view("srun: error: Node failure on ").size()));
      if (report.state.empty()) report.state = "NODE_FAIL";
      continue;
    }
    // slurmstepd: "*** STEP 12.3 ON n1 CANCELLED AT <time> DUE TO TIME LIMIT ***",
    // also "*** JOB 12 ON n1 ..." when the allocation itself ends.
    if (line.find("*** STEP ") == std::string::npos && line.find("*** JOB ") == std::string::npos) {
      if (line.find("Detected") != std::string::npos && line.find("oom") != std::string::npos) {
        report.state = "OUT_OF_MEMORY";  // "Detected 1 oom_kill event in StepId=..."
      }
      continue;
    }
    if (line.find("DUE TO TIME LIMIT") != std::string::npos) {
      report.state = "TIMEOUT";
    } else if (line.find("DUE TO NODE FAILURE") != std::string::npos) {
      report.state = "NODE_FAIL";
    } else if (line.find("DUE TO PREEMPTION") != std::string::npos) {
      report.state = "PREEMPTED";
    } else if (line.find(" CANCELLED AT ") != std::string::npos) {
      report.state = "CANCELLED";
    }
  }
  return report;
}

bool IsSrunProgressLine(std::string_view line) {
  if (line.rfind("srun: ", 0) != 0) return false;
  const std::string_view message = line.substr(6);
  for (std::string_view kept : {"error", "warning", "Job ", "Force Terminated", "Step created", "Complete"}) {
    if (message.rfind(kept, 0) == 0) return false;
  }
  return true;
}

std::string SlurmJobName(const std::string& db_path) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(db_path, ec);
  return "dmlbench-" + Sha256Hex(std::string(host) + ":" + (ec ? db_path : absolute.string())).substr(0, 12);
}

// A Slurm allocation this launcher holds; scancel at destruction.
class SlurmLauncher::Allocation {
 public:
  Allocation(std::string job_id, int ranks) : job_id_(std::move(job_id)), ranks_(ranks) {
    // Its nodes and the CPUs it holds on each, for mpirun and the attempt's hosts.
    const std::optional<SlurmJob> job = ShowJob(job_id_);
    if (!job) return;
    node_list_ = job->node_list;
    for (const auto& [expression, cpus] : job->cpus_per_nodes) {
      for (const std::string& node : ExpandHostnames(expression)) {
        nodes_.push_back(node);
        cpus_.push_back(cpus);
      }
    }
  }
  ~Allocation() {
    if (!staged_dir_.empty()) RunCommand(OnEachNode({"rm", "-rf", "--", staged_dir_}), kQueryTimeoutS);
    RunCommand({"scancel", job_id_}, kQueryTimeoutS);
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const std::string& job_id() const { return job_id_; }
  int ranks() const { return ranks_; }
  const std::string& node_list() const { return node_list_; }

  // The trainer as its steps run it: its copy on the nodes once Stage()
  // made it, else `local`.
  const std::string& Trainer(const std::string& local) const { return staged_trainer_.empty() ? local : staged_trainer_; }

  // Copies `trainer` onto the own disk of every node of the allocation, into
  // <stage_dir>/dmlbench-<job id>-<8 random hex digits> (job ids repeat
  // across the clusters a node may serve), a directory of this user's alone (made
  // 0700; one that another user or a link holds is refused, so nothing is
  // written through what someone else placed there; nodes that share the
  // directory share the copy), removed at destruction. Returns why not; ""
  // when the copy is there.
  std::string Stage(const std::string& trainer, const std::string& stage_dir) {
    const std::string dir =
        (std::filesystem::path(stage_dir) / ("dmlbench-" + job_id_ + "-" + RandomHexDigits(8))).string();
    const CommandOutput made = RunCommand(OnEachNode({"/bin/sh", "-c", kMakeOwnDirectory, "sh", dir}), kQueryTimeoutS);
    if (made.exit_code != 0) {
      return "cannot make " + dir + " on the nodes of slurm job " + job_id_ + " ([slurm] stage_dir): " +
             SlurmError(made);
    }
    staged_dir_ = dir;
    const std::string copy = dir + "/" + std::filesystem::path(trainer).filename().string();
    // --force: nodes that share the directory write the same bytes in turn.
    const CommandOutput copied =
        RunCommand({"sbcast", "--force", "--jobid=" + job_id_, trainer, copy}, kQueryTimeoutS);
    if (copied.exit_code != 0) {
      return "cannot copy the trainer to " + copy + " on the nodes of slurm job " + job_id_ + " (sbcast): " +
             SlurmError(copied);
    }
    staged_trainer_ = copy;
    return "";
  }

  // SLURM_TASKS_PER_NODE as Open MPI reads it: "2,1".
  std::string TasksPerNode() const {
    std::string text;
    for (int cpus : cpus_) text += (text.empty() ? "" : ",") + std::to_string(cpus);
    return text;
  }

  // The nodes mpirun places `ranks` ranks on: one per node, or filling each
  // node's CPUs in order (Open MPI's mapping by slot).
  std::vector<std::string> NodesFor(int ranks, bool one_per_node) const {
    std::vector<std::string> used;
    for (std::size_t i = 0; i < nodes_.size() && ranks > 0; ++i) {
      used.push_back(nodes_[i]);
      ranks -= one_per_node ? 1 : cpus_[i];
    }
    return used;
  }

 private:
  std::string job_id_;
  int ranks_;
  std::string node_list_;
  std::vector<std::string> nodes_;
  std::vector<int> cpus_;  // of each of nodes_
  std::string staged_dir_;      // made on every node by Stage(); "" = none
  std::string staged_trainer_;  // the trainer's copy in it

  // A step of one task on each node of the allocation, running `command`.
  std::vector<std::string> OnEachNode(const std::vector<std::string>& command) const {
    const std::string n = std::to_string(std::max<std::size_t>(1, nodes_.size()));
    std::vector<std::string> argv = {"srun",          "--jobid=" + job_id_, "--nodes=" + n, "--ntasks=" + n,
                                     "--ntasks-per-node=1", "--quiet"};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }

  // The first line of what a Slurm command said on failure.
  // The first line the command's tasks wrote (what went wrong on the
  // node), before srun's own lines about it ("srun: error: n1: task 0:
  // Exited with exit code 1"), which arrive in either order.
  static std::string SlurmError(const CommandOutput& output) {
    const std::string& text = output.err.empty() ? output.out : output.err;
    if (text.empty()) return "exit " + std::to_string(output.exit_code);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.rfind("srun: ", 0) != 0) return line;
    }
    return FirstLine(text);
  }
};

SlurmLauncher::SlurmLauncher(SlurmLauncherOptions options) : options_(std::move(options)) {
  LocalLauncherOptions local;
  local.trainer = options_.trainer;
  local.mpirun = options_.mpirun;
  local_ = std::make_unique<LocalLauncher>(local);
}

SlurmLauncher::~SlurmLauncher() = default;

std::vector<HostFacts> SlurmLauncher::Prepare() {
  if (ResolveProgram(options_.trainer).empty()) {
    throw LaunchError("slurm: trainer " + options_.trainer + " is not an executable file");
  }
  // The run lock is held: jobs of this name belong to a sweep of this database that died.
  std::ostream& notes = options_.notes ? *options_.notes : std::cerr;
  for (const std::string& job : JobsNamed(options_.job_name)) {
    RunCommand({"scancel", job}, kQueryTimeoutS);
    notes << "dmlbench: cancelled slurm job " << job << " (" << options_.job_name
          << "), left by an earlier `dmlbench run` of this database that stopped\n";
  }
  std::vector<std::string> argv = {"sinfo", "--noheader", "--Node", "--format=%N"};
  if (!options_.slurm.partition.empty()) argv.push_back("--partition=" + options_.slurm.partition);
  const CommandOutput listed = RunCommand(argv, kQueryTimeoutS);
  if (listed.exit_code != 0) {
    throw LaunchError("slurm: `" + ShellJoin(argv) + "` failed: " +
                      FirstLine(listed.err.empty() ? listed.out : listed.err));
  }
  std::vector<std::string> names;
  std::istringstream lines(listed.out);
  std::string name;
  // sinfo lists a node once per partition it is in.
  while (std::getline(lines, name)) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (names.empty()) throw LaunchError("slurm: `" + ShellJoin(argv) + "` lists no node");
  const std::optional<std::vector<SlurmNode>> nodes = ShowNodes(names);
  if (!nodes) throw LaunchError("slurm: `scontrol show node` cannot describe the nodes sinfo lists");
  const CommandOutput version = RunCommand({options_.mpirun, "--version"}, kQueryTimeoutS);
  std::vector<HostFacts> hosts;
  int cpus = 0;
  for (const SlurmNode& node : *nodes) {
    hosts.push_back(node.facts);
    if (version.exit_code == 0) hosts.back().mpi_version = FirstLine(version.out);
    cpus += node.facts.cores;
  }
  const int count = static_cast<int>(nodes->size());
  capacity_ = LaunchCapacity{options_.slurm.one_rank_per_node ? count : cpus,
                             (options_.slurm.partition.empty() ? std::string("the default slurm partition")
                                                               : "slurm partition " + Quoted(options_.slurm.partition)) +
                                 " (" + std::to_string(count) + (count == 1 ? " node, " : " nodes, ") +
                                 std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs") +
                                 (options_.slurm.one_rank_per_node ? "; ranks = \"per-node\": one rank a node" : "") +
                                 ")"};
  return hosts;
}

std::string SlurmLauncher::TrainerSha256() const { return local_->TrainerSha256(); }

std::optional<LaunchCapacity> SlurmLauncher::Capacity() const { return capacity_; }

bool SlurmLauncher::EnsureAllocation(const LaunchSpec& spec, LaunchResult& result, const std::atomic<bool>& cancel) {
  const int ranks = spec.ranks;
  if (allocation_ && allocation_->ranks() >= ranks) return true;
  allocation_.reset();  // too small for this run (a run larger than the sweep's largest): ask again
  const SlurmOptions& slurm = options_.slurm;
  const int size = slurm.allocation_per_run ? ranks : std::max(ranks, spec.sweep_ranks);
  std::vector<std::string> argv = {"salloc", "--no-shell", "--job-name=" + options_.job_name};
  const std::vector<std::string> placement = PlacementArgs(slurm);
  argv.insert(argv.end(), placement.begin(), placement.end());
  const std::vector<std::string> tasks = TaskArgs(slurm, size);
  argv.insert(argv.end(), tasks.begin(), tasks.end());
  if (slurm.allocation_per_run && slurm.time_limit_min > 0) argv.push_back("--time=" + std::to_string(slurm.time_limit_min));
  argv.insert(argv.end(), slurm.salloc_args.begin(), slurm.salloc_args.end());
  // salloc waits in the queue; it says "Pending job allocation 12", then
  // "Granted job allocation 12" on its standard error.
  Child child;
  std::string error;
  if (!child.Start(argv, {}, &error)) {
    result.failure_reason = "cannot start salloc: " + error;
    result.permanent = true;
    return false;
  }
  std::string output;
  std::string job_id;
  std::string unstartable;
  bool checked = false;
  const auto read = [&](std::string_view chunk) {
    output.append(chunk);
    if (job_id.empty()) job_id = After(output, "job allocation ", " \n");
  };
  // While Slurm keeps the request pending, its reason, as squeue shows it.
  double next_poll_s = MonotonicNow() + kPendingPollS;
  std::string shown;
  const auto show = [&](const std::string& status) {
    if (status == shown || !spec.on_status) return;
    shown = status;
    spec.on_status(status);
  };
  Pump(
      child, [&](std::string_view line) { read(std::string(line) + "\n"); }, read,
      [&] {
        // salloc: "Required node not available (down, drained or reserved)", once, as it queues.
        if (!checked && !job_id.empty() && output.find("Required node not available") != std::string::npos) {
          checked = true;
          unstartable = Unstartable(job_id);
        }
        if (!job_id.empty() && output.find("Granted job allocation") == std::string::npos &&
            MonotonicNow() >= next_poll_s) {
          next_poll_s = MonotonicNow() + kPendingPollS;
          const CommandOutput reason = RunCommand({"squeue", "--noheader", "--jobs=" + job_id, "--format=%r"}, 5);
          const std::string why = reason.exit_code == 0 ? FirstLine(reason.out) : "";
          show("slurm job " + job_id + " pending" + (why.empty() ? "" : ": " + why));
        }
        return cancel.load() || !unstartable.empty();
      },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  show("");
  if (cancel.load() || !unstartable.empty()) {
    if (!job_id.empty()) RunCommand({"scancel", job_id}, kQueryTimeoutS);
  }
  if (cancel.load()) {
    result.interrupted = true;
    result.failure_reason = "interrupted";
    return false;
  }
  if (!unstartable.empty()) {
    result.command_line = ShellJoin(argv);
    result.failure_reason = unstartable;
    result.stderr_tail = output;
    result.host_failure = true;  // not the run's failure: it is tried again once the nodes are back
    result.permanent = true;     // but every run of this size would wait as long
    return false;
  }
  if (ExitCode(child.status()) != 0 || job_id.empty()) {
    result.command_line = ShellJoin(argv);
    result.failure_reason = "salloc failed: " + FirstLine(output.substr(output.find("error:") == std::string::npos
                                                                             ? 0
                                                                             : output.find("error:")));
    result.stderr_tail = output;
    result.permanent = true;  // Slurm refused the request as configured
    return false;
  }
  allocation_ = std::make_unique<Allocation>(job_id, size);
  const std::string not_staged = allocation_->Stage(options_.trainer, options_.slurm.stage_dir);
  if (!not_staged.empty()) {
    result.failure_reason = not_staged;
    result.permanent = true;  // every allocation would meet it
    allocation_.reset();
    return false;
  }
  return true;
}

std::vector<std::string> SlurmLauncher::TrainerArgv(const LaunchSpec& spec) const {
  std::vector<std::string> argv = {allocation_->Trainer(options_.trainer)};
  argv.insert(argv.end(), spec.trainer_args.begin(), spec.trainer_args.end());
  if (!spec.dataset_dir.empty()) {
    argv.insert(argv.end(), {"--dataset", spec.dataset_dir});
    if (!options_.dataset_cache_dir.empty()) argv.insert(argv.end(), {"--dataset-cache", options_.dataset_cache_dir});
  }
  return argv;
}

std::vector<std::string> SlurmLauncher::StepArgv(const LaunchSpec& spec) const {
  const SlurmOptions& slurm = options_.slurm;
  std::vector<std::string> argv = {"srun", "--verbose", "--jobid=" + allocation_->job_id(), "--mpi=pmix",
                                   "--kill-on-bad-exit=1"};
  const std::vector<std::string> tasks = TaskArgs(slurm, spec.ranks);
  argv.insert(argv.end(), tasks.begin(), tasks.end());
  if (slurm.time_limit_min > 0) argv.push_back("--time=" + std::to_string(slurm.time_limit_min));
  argv.insert(argv.end(), slurm.srun_args.begin(), slurm.srun_args.end());
  const std::vector<std::string> trainer = TrainerArgv(spec);
  argv.insert(argv.end(), trainer.begin(), trainer.end());
  return argv;
}

std::vector<std::string> SlurmLauncher::MpirunArgv(const LaunchSpec& spec) const {
  std::vector<std::string> argv = {options_.mpirun, "-np", std::to_string(spec.ranks)};
  if (options_.slurm.one_rank_per_node) argv.insert(argv.end(), {"--map-by", "ppr:1:node"});
  const std::vector<std::string> trainer = TrainerArgv(spec);
  argv.insert(argv.end(), trainer.begin(), trainer.end());
  return argv;
}

std::vector<std::string> SlurmLauncher::Environment() const {
  std::vector<std::string> env(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  if (!options_.slurm.launch_mpirun) return env;
  // What mpirun reads to find itself inside the allocation (Open MPI's
  // ras/slurm) and what the srun it starts its daemons with reads to join it.
  const Allocation& allocation = *allocation_;
  env.insert(env.end(), {"SLURM_JOB_ID=" + allocation.job_id(), "SLURM_JOBID=" + allocation.job_id(),
                         "SLURM_NODELIST=" + allocation.node_list(), "SLURM_JOB_NODELIST=" + allocation.node_list(),
                         "SLURM_TASKS_PER_NODE=" + allocation.TasksPerNode()});
  // The daemons' step is bounded as a run's step is.
  if (options_.slurm.time_limit_min > 0) {
    env.push_back("OMPI_MCA_plm_slurm_args=--time=" + std::to_string(options_.slurm.time_limit_min));
  }
  if (::geteuid() == 0) env.insert(env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  return env;
}

LaunchResult SlurmLauncher::Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                                   const std::atomic<bool>& cancel) {
  LaunchResult result;
  if (!EnsureAllocation(spec, result, cancel)) return result;
  const std::string job_id = allocation_->job_id();
  const std::vector<std::string> argv = options_.slurm.launch_mpirun ? MpirunArgv(spec) : StepArgv(spec);
  result.command_line = ShellJoin(argv);

  ChildOptions child_options;
  child_options.extra_env = Environment();
  Child child;
  std::string error;
  if (!child.Start(argv, child_options, &error)) {
    result.failure_reason = "cannot start " + argv[0] + ": " + error;
    result.permanent = true;
    return result;
  }
  // A step's time counts from its creation ("srun: Step created for job
  // 12"): while srun waits for a step Slurm does not create yet ("step
  // creation temporarily disabled, retrying", as after a controller
  // restart), the run is not charged, and the wait is bounded on its own.
  // mpirun's daemons' step is not srun's to report: its run's time counts
  // from the start.
  const double start_s = MonotonicNow();
  const double step_wait_s = std::max(spec.timeout_s, kStepCreationWaitS);
  std::optional<double> deadline;
  if (options_.slurm.launch_mpirun) deadline = start_s + spec.timeout_s;
  bool retrying = false;     // srun said it retries, and has not created the step since
  std::string retry_reason;  // Slurm's, "Requested nodes are busy"
  bool step_never_created = false;
  bool noticed = false;      // the wait for the step was shown
  std::string srun_stderr;  // whole, for ReadStepReport
  TailBuffer stderr_tail(kStderrTailBytes);
  std::ofstream stderr_file;
  if (!spec.output_dir.empty()) stderr_file.open(spec.output_dir + "/" + kMpirunStderrFile, std::ios::binary);
  LineSplitter stderr_lines;
  const LineSplitter::Sink keep = [&](std::string_view line) {
    srun_stderr.append(line).append("\n");
    // "srun: Job 12 step creation temporarily disabled, retrying (Requested nodes are busy)"
    if (line.find(" step creation temporarily disabled, retrying") != std::string_view::npos) {
      retrying = true;
      retry_reason = After(line, "retrying (", ")");
      if (spec.on_status) {
        spec.on_status("slurm job " + job_id + ": step creation temporarily disabled, srun retries" +
                       (retry_reason.empty() ? "" : " (" + retry_reason + ")"));
      }
    } else if (line.rfind("srun: Step created for ", 0) == 0 && !deadline) {
      deadline = MonotonicNow() + spec.timeout_s;
      if ((retrying || noticed) && spec.on_status) spec.on_status("");
      retrying = false;
    }
    if (IsSrunProgressLine(line)) return;
    const std::string kept = std::string(line) + "\n";
    stderr_tail.Add(kept);
    if (stderr_file.is_open()) stderr_file << kept;
  };
  Pump(
      child, on_line, [&](std::string_view chunk) { stderr_lines.Add(chunk, keep); },
      [&] {
        const bool stopping = result.interrupted || result.timed_out || step_never_created;
        if (!stopping) {
          const double now = MonotonicNow();
          if (!deadline && !retrying && !noticed && now - start_s >= kStepNoticeS) {
            noticed = true;
            if (spec.on_status) spec.on_status("slurm job " + job_id + ": no step created yet, srun waits");
          }
          result.interrupted = cancel.load();
          step_never_created = !result.interrupted && !deadline && (retrying || noticed) && now - start_s >= step_wait_s;
          result.timed_out = !result.interrupted && !step_never_created &&
                             now >= (deadline ? *deadline : start_s + step_wait_s);
          // Once: cancel what was submitted, the step or the whole job of this run.
          if (result.interrupted || result.timed_out || step_never_created) {
            const std::string step = ReadStepReport(srun_stderr).step_id;
            const bool whole_job = options_.slurm.allocation_per_run || step.empty();
            RunCommand({"scancel", whole_job ? job_id : step}, kQueryTimeoutS);
          }
        }
        return result.interrupted || result.timed_out || step_never_created;
      },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  stderr_lines.Finish(keep);
  result.stderr_tail = stderr_tail.str();
  result.exit_code = ExitCode(child.status());
  ReadEnd(spec, srun_stderr, child.status(), result);
  if (step_never_created) {
    // Not the run's failure, and every run would wait as long now.
    std::ostringstream waited;
    waited << step_wait_s;
    result.host_failure = true;
    result.permanent = true;
    result.failure_reason = "slurm job " + job_id + " created no step for " + waited.str() + " s" +
                            (retrying ? ": step creation temporarily disabled" +
                                            (retry_reason.empty() ? std::string() : " (" + retry_reason + ")")
                                      : std::string()) +
                            "; a restarted slurmctld waits for its nodes to register";
  }
  return result;
}

void SlurmLauncher::ReadEnd(const LaunchSpec& spec, const std::string& stderr_text, int wait_status,
                           LaunchResult& result) {
  const std::string job_id = allocation_->job_id();
  const std::string program = options_.slurm.launch_mpirun ? "mpirun" : "srun";
  const StepReport step = ReadStepReport(stderr_text);
  result.hosts = options_.slurm.launch_mpirun ? allocation_->NodesFor(spec.ranks, options_.slurm.one_rank_per_node) : step.nodes;
  // How the step ended: accounting's word where there is accounting; else
  // what srun printed, and the job's own state when the whole job ended.
  std::string state = step.state;
  std::string exit_text = program + " exit " + std::to_string(result.exit_code);
  const std::optional<AccountedStep> accounted = step.step_id.empty() ? std::nullopt : AccountStep(step.step_id);
  if (accounted) {
    state = accounted->state;
    exit_text = "sacct exit " + accounted->exit_code;
  }
  bool allocation_ended = options_.slurm.allocation_per_run;
  if (result.exit_code != 0 || !step.state.empty()) {
    const std::optional<SlurmJob> job = ShowJob(job_id);
    allocation_ended = allocation_ended || !job || job->state != "RUNNING";
    if (job && job->state != "RUNNING" && job->state != "COMPLETING" && job->state != "COMPLETED" &&
        (state.empty() || state == "FAILED")) {
      state = job->state;
    }
  }
  if (state.empty() || (state == "COMPLETED" && result.exit_code != 0)) state = result.exit_code == 0 ? "COMPLETED" : "FAILED";

  const std::string which = "slurm " + (step.step_id.empty() ? "job " + job_id : "step " + step.step_id);
  result.slurm = SlurmJobFacts{job_id, step.step_id, result.hosts, state, exit_text};
  if (result.interrupted) {
    result.failure_reason = "interrupted";
  } else if (result.timed_out) {
    result.failure_reason = "timed out after " + std::to_string(static_cast<int>(spec.timeout_s)) + " s";
  } else if (state == "TIMEOUT") {
    result.timed_out = true;
    result.failure_reason = which + " ended TIMEOUT (time_limit_min " + std::to_string(options_.slurm.time_limit_min) + ")";
  } else if (state == "NODE_FAIL") {
    result.host_failure = true;
    const std::string down = DownNodes(step.failed_nodes.empty() ? result.hosts : step.failed_nodes);
    result.failure_reason = which + " ended NODE_FAIL" + (down.empty() ? "" : ": " + down + " now");
  } else if (state == "FAILED" && !step.cannot_execute.empty()) {
    // Every step would meet it: the nodes cannot run the program as given.
    result.permanent = true;
    result.failure_reason = "the trainer cannot be executed on " +
                            (step.exited_node.empty() ? std::string("a node") : "node " + step.exited_node) + ": " +
                            step.cannot_execute + " (" + which + " ended FAILED)";
  } else if (state == "FAILED") {
    result.failure_reason = which + " ended FAILED: " + ExitDescription(program, wait_status);
  } else if (state != "COMPLETED") {
    result.host_failure = state == "PREEMPTED";
    result.failure_reason = which + " ended " + state;
  }
  if (allocation_ended) allocation_.reset();
}

}  // namespace dmlbench
