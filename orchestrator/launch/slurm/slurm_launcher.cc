#include "orchestrator/launch/slurm/slurm_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/launch/job_output.h"
#include "orchestrator/launch/local/local_launcher.h"

namespace dmlbench {
namespace {

constexpr size_t kStderrTailBytes = 8192;
constexpr double kQueryTimeoutS = 30;  // sinfo, scancel: answered by the controller at once

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

// A Slurm allocation this launcher holds; scancel at destruction.
class SlurmLauncher::Allocation {
 public:
  Allocation(std::string job_id, int ranks) : job_id_(std::move(job_id)), ranks_(ranks) {}
  ~Allocation() { RunCommand({"scancel", job_id_}, kQueryTimeoutS); }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const std::string& job_id() const { return job_id_; }
  int ranks() const { return ranks_; }

 private:
  std::string job_id_;
  int ranks_;
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
  std::vector<std::string> argv = {"sinfo", "--noheader", "--Node", "--format=%N|%c|%m|%f"};
  if (!options_.slurm.partition.empty()) argv.push_back("--partition=" + options_.slurm.partition);
  const CommandOutput nodes = RunCommand(argv, kQueryTimeoutS);
  if (nodes.exit_code != 0) {
    throw LaunchError("slurm: `" + ShellJoin(argv) + "` failed: " +
                      FirstLine(nodes.err.empty() ? nodes.out : nodes.err));
  }
  const CommandOutput version = RunCommand({options_.mpirun, "--version"}, kQueryTimeoutS);
  std::vector<HostFacts> hosts;
  std::istringstream lines(nodes.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, cpus, memory_mb, features;
    std::getline(fields, name, '|');
    std::getline(fields, cpus, '|');
    std::getline(fields, memory_mb, '|');
    std::getline(fields, features);
    // sinfo lists a node once per partition it is in.
    if (name.empty() || std::any_of(hosts.begin(), hosts.end(), [&](const HostFacts& h) { return h.name == name; })) {
      continue;
    }
    HostFacts facts;
    facts.name = name;
    facts.provider = "slurm";
    facts.cores = std::atoi(cpus.c_str());
    facts.memory_bytes = std::atoll(memory_mb.c_str()) * 1024 * 1024;
    facts.tags_json = "{\"features\": " + Quoted(features == "(null)" ? "" : features) + "}";
    if (version.exit_code == 0) facts.mpi_version = FirstLine(version.out);
    hosts.push_back(facts);
  }
  if (hosts.empty()) throw LaunchError("slurm: `" + ShellJoin(argv) + "` lists no node");
  return hosts;
}

std::string SlurmLauncher::TrainerSha256() const { return local_->TrainerSha256(); }

bool SlurmLauncher::EnsureAllocation(int ranks, LaunchResult& result, const std::atomic<bool>& cancel) {
  if (allocation_ && allocation_->ranks() >= ranks) return true;
  allocation_.reset();  // too small for this run (a run larger than the sweep's largest): ask again
  const SlurmOptions& slurm = options_.slurm;
  const int size = slurm.allocation_per_run ? ranks : std::max(ranks, options_.largest_ranks);
  std::vector<std::string> argv = {"salloc", "--no-shell", "--job-name=dmlbench"};
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
  const auto read = [&](std::string_view chunk) {
    output.append(chunk);
    if (job_id.empty()) job_id = After(output, "job allocation ", " \n");
  };
  Pump(
      child, [&](std::string_view line) { read(std::string(line) + "\n"); }, read, [&] { return cancel.load(); },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  if (cancel.load()) {
    if (!job_id.empty()) RunCommand({"scancel", job_id}, kQueryTimeoutS);
    result.interrupted = true;
    result.failure_reason = "interrupted";
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
  return true;
}

std::vector<std::string> SlurmLauncher::StepArgv(const LaunchSpec& spec) const {
  const SlurmOptions& slurm = options_.slurm;
  std::vector<std::string> argv = {"srun", "--verbose", "--jobid=" + allocation_->job_id(), "--mpi=pmix",
                                   "--kill-on-bad-exit=1"};
  const std::vector<std::string> tasks = TaskArgs(slurm, spec.ranks);
  argv.insert(argv.end(), tasks.begin(), tasks.end());
  if (slurm.time_limit_min > 0) argv.push_back("--time=" + std::to_string(slurm.time_limit_min));
  argv.insert(argv.end(), slurm.srun_args.begin(), slurm.srun_args.end());
  argv.push_back(options_.trainer);
  argv.insert(argv.end(), spec.trainer_args.begin(), spec.trainer_args.end());
  if (!spec.dataset_dir.empty()) argv.insert(argv.end(), {"--dataset", spec.dataset_dir});
  return argv;
}

LaunchResult SlurmLauncher::Launch(const LaunchSpec& spec, const std::function<void(std::string_view line)>& on_line,
                                   const std::atomic<bool>& cancel) {
  LaunchResult result;
  if (!EnsureAllocation(spec.ranks, result, cancel)) return result;
  const std::string job_id = allocation_->job_id();
  const std::vector<std::string> argv = StepArgv(spec);
  result.command_line = ShellJoin(argv);

  ChildOptions child_options;
  child_options.extra_env.assign(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  Child child;
  std::string error;
  if (!child.Start(argv, child_options, &error)) {
    result.failure_reason = "cannot start srun: " + error;
    result.permanent = true;
    return result;
  }
  const double deadline = MonotonicNow() + spec.timeout_s;
  std::string srun_stderr;  // whole, for ReadStepReport
  TailBuffer stderr_tail(kStderrTailBytes);
  std::ofstream stderr_file;
  if (!spec.output_dir.empty()) stderr_file.open(spec.output_dir + "/" + kMpirunStderrFile, std::ios::binary);
  LineSplitter stderr_lines;
  const LineSplitter::Sink keep = [&](std::string_view line) {
    srun_stderr.append(line).append("\n");
    if (IsSrunProgressLine(line)) return;
    const std::string kept = std::string(line) + "\n";
    stderr_tail.Add(kept);
    if (stderr_file.is_open()) stderr_file << kept;
  };
  Pump(
      child, on_line, [&](std::string_view chunk) { stderr_lines.Add(chunk, keep); },
      [&] {
        const bool stopping = result.interrupted || result.timed_out;
        if (!stopping) {
          result.interrupted = cancel.load();
          result.timed_out = !result.interrupted && MonotonicNow() >= deadline;
          // Once: cancel what was submitted, the step or the whole job of this run.
          if (result.interrupted || result.timed_out) {
            const std::string step = ReadStepReport(srun_stderr).step_id;
            const bool whole_job = options_.slurm.allocation_per_run || step.empty();
            RunCommand({"scancel", whole_job ? job_id : step}, kQueryTimeoutS);
          }
        }
        return result.interrupted || result.timed_out;
      },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  stderr_lines.Finish(keep);
  result.stderr_tail = stderr_tail.str();
  result.exit_code = ExitCode(child.status());

  const StepReport step = ReadStepReport(srun_stderr);
  result.hosts = step.nodes;
  // The job and step ids are not part of the command; they follow as a shell comment.
  result.command_line += "  # slurm job " + job_id + (step.step_id.empty() ? "" : ", step " + step.step_id);
  const std::string which = "slurm step " + (step.step_id.empty() ? job_id : step.step_id);
  if (result.interrupted) {
    result.failure_reason = "interrupted";
  } else if (result.timed_out) {
    result.failure_reason = "timed out after " + std::to_string(static_cast<int>(spec.timeout_s)) + " s";
  } else if (step.state == "TIMEOUT") {
    result.timed_out = true;
    result.failure_reason = which + " ended TIMEOUT (time_limit_min " + std::to_string(options_.slurm.time_limit_min) + ")";
  } else if (!step.state.empty()) {
    result.host_failure = step.state == "NODE_FAIL" || step.state == "PREEMPTED";
    result.failure_reason = which + " ended " + step.state;
  } else if (result.exit_code != 0) {
    result.failure_reason = which + " ended FAILED: " + ExitDescription("srun", child.status());
  }
  // A per-run allocation ends with its run; a per-sweep one that srun could
  // not use (cancelled or ended from outside) is asked for again next run.
  if (options_.slurm.allocation_per_run || (step.step_id.empty() && result.exit_code != 0)) allocation_.reset();
  return result;
}

}  // namespace dmlbench
