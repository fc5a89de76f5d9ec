#include "orchestrator/launch/local/local_launcher.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common/sha256.h"
#include "orchestrator/core/clock.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/text_file.h"
#include "orchestrator/launch/job_output.h"

namespace dmlbench {
namespace {

constexpr size_t kStderrTailBytes = 8192;

std::string FormatSeconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// The value after "key<spaces>:" on the first line starting with key.
std::string ProcField(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin);
  }
  return "";
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

LocalLauncher::LocalLauncher(LocalLauncherOptions options) : options_(std::move(options)) {}

std::vector<HostFacts> LocalLauncher::Prepare() {
  if (ResolveProgram(options_.trainer).empty()) {
    throw LaunchError("local: trainer " + options_.trainer + " is not an executable file");
  }
  const CommandOutput version = RunCommand({options_.mpirun, "--version"}, 30);
  if (version.exit_code != 0) {
    throw LaunchError("local: cannot run `" + options_.mpirun + " --version`: " + FirstLine(version.err));
  }
  HostFacts facts;
  facts.name = "local";
  facts.provider = "local";
  facts.tags_json = "{}";
  facts.mpi_version = FirstLine(version.out);
  facts.cpu_model = ProcField(ReadTextFile("/proc/cpuinfo"), "model name");
  facts.cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const std::string mem_kib = ProcField(ReadTextFile("/proc/meminfo"), "MemTotal");
  facts.memory_bytes = mem_kib.empty() ? 0 : std::stoll(mem_kib) * 1024;
  utsname uts{};
  if (::uname(&uts) == 0) {
    facts.kernel = std::string(uts.sysname) + " " + uts.release + " " + uts.machine;
  }
  return {facts};
}

std::string LocalLauncher::TrainerSha256() const {
  try {
    const std::string resolved = ResolveProgram(options_.trainer);
    const std::string path = resolved.empty() ? options_.trainer : resolved;
    struct stat st {};
    std::string stamp;
    if (::stat(path.c_str(), &st) == 0) {
      stamp = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
              std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    }
    if (stamp.empty() || stamp != trainer_stamp_) {
      trainer_sha256_ = Sha256FileHex(path);
      trainer_stamp_ = stamp;
    }
    return trainer_sha256_;
  } catch (const Sha256Error& e) {
    throw LaunchError(std::string("local: ") + e.what());
  }
}

LaunchResult LocalLauncher::Launch(const LaunchSpec& spec,
                                   const std::function<void(std::string_view line)>& on_line,
                                   const std::atomic<bool>& cancel) {
  LaunchResult result;
  result.hosts = {"local"};
  std::vector<std::string> argv = {options_.mpirun};
  argv.insert(argv.end(), options_.mpirun_args.begin(), options_.mpirun_args.end());
  argv.insert(argv.end(), {"-np", std::to_string(spec.ranks)});
  const int cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  if (options_.ranks_on_this_machine && spec.ranks > cores) {
    argv.push_back("--oversubscribe");
    if (warned_ranks_.insert(spec.ranks).second) {
      std::ostream& warnings = options_.warnings ? *options_.warnings : std::cerr;
      warnings << "dmlbench: warning: " << spec.ranks << " ranks on " << cores
               << " cores: oversubscribing, timings include CPU contention\n";
    }
  }
  if (!spec.output_dir.empty()) {
    const std::vector<std::string> output =
        OutputFilenameArgs(options_.ranks_output_dir.empty() ? spec.output_dir : options_.ranks_output_dir);
    argv.insert(argv.end(), output.begin(), output.end());
  }
  argv.push_back(options_.trainer);
  argv.insert(argv.end(), spec.trainer_args.begin(), spec.trainer_args.end());
  if (!spec.dataset_dir.empty()) {
    argv.push_back("--dataset");
    argv.push_back(spec.dataset_dir);
    if (!options_.dataset_cache_dir.empty()) argv.insert(argv.end(), {"--dataset-cache", options_.dataset_cache_dir});
  }
  result.command_line = ShellJoin(argv);

  std::vector<std::string> env(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  if (::geteuid() == 0) {
    env.insert(env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  }
  ChildOptions child_options;
  child_options.extra_env = env;
  Child child;
  std::string error;
  if (!child.Start(argv, child_options, &error)) {
    result.failure_reason = "cannot start " + options_.mpirun + ": " + error;
    result.permanent = true;
    return result;
  }
  const double deadline = MonotonicNow() + spec.timeout_s;
  TailBuffer stderr_tail(kStderrTailBytes);
  std::ofstream mpirun_stderr;
  if (!spec.output_dir.empty()) mpirun_stderr.open(spec.output_dir + "/" + kMpirunStderrFile, std::ios::binary);
  Pump(
      child, on_line,
      [&](std::string_view chunk) {
        stderr_tail.Add(chunk);
        if (mpirun_stderr.is_open()) mpirun_stderr.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      },
      [&] {
        if (result.timed_out || result.interrupted) return true;
        if (cancel.load()) {
          result.interrupted = true;
        } else if (MonotonicNow() >= deadline) {
          result.timed_out = true;
        }
        return result.timed_out || result.interrupted;
      },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  result.stderr_tail = stderr_tail.str();
  result.exit_code = ExitCode(child.status());
  if (result.interrupted) {
    result.failure_reason = "interrupted";
  } else if (result.timed_out) {
    result.failure_reason = "timed out after " + FormatSeconds(spec.timeout_s) + " s";
  } else if (result.exit_code != 0) {
    result.failure_reason = ExitDescription("mpirun", child.status());
  }
  return result;
}

}  // namespace dmlbench
