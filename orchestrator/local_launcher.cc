#include "orchestrator/local_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "orchestrator/sha256.h"
#include "orchestrator/ssh/quote.h"

extern char** environ;

namespace dmlbench {
namespace {

constexpr size_t kStderrTailBytes = 8192;
// After mpirun exits, how long to wait for processes it left holding our pipes.
constexpr double kPipeDrainAfterExitS = 1.0;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string FormatSeconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// A file descriptor with one owner.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

// "mpirun" -> "/usr/bin/mpirun" by PATH; names with a slash are kept. ""
// when nothing executable is found.
std::string ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// A started child process in its own process group, with stdout and stderr
// on pipes. The destructor kills the group and reaps the child if the owner
// has not (e.g. when a line callback threw).
class Child {
 public:
  // Starts argv (argv[0] resolved in PATH) with `extra_env` added to ours.
  // Returns false with `error` set ("No such file or directory") when it
  // cannot be started.
  bool Start(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
             bool die_with_parent, std::string* error) {
    const std::string program = ResolveProgram(argv.at(0));
    if (program.empty()) {
      *error = "not found or not executable";
      return false;
    }
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    for (const std::string& extra : extra_env) env_strings.push_back(extra);
    std::vector<char*> env;
    for (const std::string& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);

    Pipe out = MakePipe();
    Pipe err = MakePipe();
    Pipe exec_status = MakePipe();  // closed by a successful exec (O_CLOEXEC)
    Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      *error = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid == 0) {
      // Child: only async-signal-safe calls from here on.
      ::setpgid(0, 0);
      if (die_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);
      }
      sigset_t all;
      sigemptyset(&all);
      ::sigprocmask(SIG_SETMASK, &all, nullptr);
      ::signal(SIGPIPE, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::dup2(null_in.get(), 0);
      ::dup2(out.write.get(), 1);
      ::dup2(err.write.get(), 2);
      ::execve(program.c_str(), args.data(), env.data());
      const int code = errno;
      [[maybe_unused]] ssize_t n = ::write(exec_status.write.get(), &code, sizeof code);
      ::_exit(127);
    }
    pid_ = pid;
    ::setpgid(pid, pid);  // also from here, so the group exists before we signal it
    out.write.reset();
    err.write.reset();
    exec_status.write.reset();
    int code = 0;
    ssize_t n;
    do {
      n = ::read(exec_status.read.get(), &code, sizeof code);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof code) {
      Reap(/*block=*/true);
      *error = std::strerror(code);
      return false;
    }
    out_ = std::move(out.read);
    err_ = std::move(err.read);
    return true;
  }

  // Stops a child still running (when a line callback threw): SIGTERM first,
  // because mpirun only stops its ranks (each in its own process group) when
  // it is not killed outright.
  ~Child() {
    if (pid_ <= 0 || reaped_) return;
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 100 && !Reap(/*block=*/false); ++i) ::usleep(50000);
    if (!reaped_) {
      ::kill(-pid_, SIGKILL);
      Reap(/*block=*/true);
    }
  }

  // Signals every process of the child's group.
  void SignalGroup(int signal) const {
    if (pid_ > 0) ::kill(-pid_, signal);
  }

  // True once the child has exited; status() is then valid.
  bool Reap(bool block) {
    if (reaped_) return true;
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
    }
    return reaped_;
  }

  int status() const { return status_; }
  Fd& out() { return out_; }
  Fd& err() { return err_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  Fd out_, err_;
};

// Reads both pipes of `child` until it exited and the pipes are drained.
// Calls on_out for each complete stdout line and on_err with every stderr
// chunk. `should_stop` is asked between reads; once it returns true the
// group gets SIGTERM, and SIGKILL grace_s later.
template <typename OnOut, typename OnErr, typename ShouldStop>
void Pump(Child& child, OnOut&& on_out, OnErr&& on_err, ShouldStop&& should_stop, double grace_s) {
  std::string pending;
  double term_sent_at = -1;
  bool kill_sent = false;
  double exited_at = -1;
  char buffer[65536];
  while (true) {
    const double now = Now();
    if (term_sent_at < 0 && should_stop()) {
      child.SignalGroup(SIGTERM);
      term_sent_at = now;
    }
    if (term_sent_at >= 0 && !kill_sent && now - term_sent_at >= grace_s) {
      child.SignalGroup(SIGKILL);
      kill_sent = true;
    }
    if (exited_at < 0 && child.Reap(/*block=*/false)) exited_at = now;
    const bool open = child.out().get() >= 0 || child.err().get() >= 0;
    if (exited_at >= 0 && !open) return;
    if (exited_at >= 0 && now - exited_at > kPipeDrainAfterExitS) {
      // Processes mpirun left behind in its group still hold the pipes.
      child.SignalGroup(SIGKILL);
      return;
    }

    pollfd fds[2];
    nfds_t count = 0;
    Fd* owners[2];
    for (Fd* fd : {&child.out(), &child.err()}) {
      if (fd->get() < 0) continue;
      fds[count] = pollfd{fd->get(), POLLIN, 0};
      owners[count] = fd;
      ++count;
    }
    const int ready = ::poll(fds, count, 50);
    if (ready <= 0) continue;
    for (nfds_t i = 0; i < count; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      const bool is_out = owners[i] == &child.out();
      if (n <= 0) {
        owners[i]->reset();
        if (is_out && !pending.empty()) {
          on_out(std::string_view(pending));
          pending.clear();
        }
        continue;
      }
      if (!is_out) {
        on_err(std::string_view(buffer, static_cast<size_t>(n)));
        continue;
      }
      pending.append(buffer, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
        on_out(std::string_view(pending).substr(start, nl - start));
        start = nl + 1;
      }
      pending.erase(0, start);
    }
  }
}

std::string ExitDescription(const std::string& program, int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return program + " was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return program + " exited with status " + std::to_string(WEXITSTATUS(status));
}

int ExitCode(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

CommandOutput RunCommand(const std::vector<std::string>& argv, double timeout_s) {
  CommandOutput output;
  Child child;
  std::string error;
  if (!child.Start(argv, {}, /*die_with_parent=*/true, &error)) {
    output.err = argv.at(0) + ": " + error;
    return output;
  }
  const double deadline = Now() + timeout_s;
  bool timed_out = false;
  Pump(
      child,
      [&](std::string_view line) {
        output.out.append(line);
        output.out += '\n';
      },
      [&](std::string_view chunk) { output.err.append(chunk); },
      [&] { return timed_out = timed_out || Now() >= deadline; }, 0.5);
  child.Reap(/*block=*/true);
  if (!timed_out && WIFEXITED(child.status())) output.exit_code = WEXITSTATUS(child.status());
  return output;
}

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
  facts.cpu_model = ProcField(ReadWhole("/proc/cpuinfo"), "model name");
  facts.cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const std::string mem_kib = ProcField(ReadWhole("/proc/meminfo"), "MemTotal");
  facts.memory_bytes = mem_kib.empty() ? 0 : std::stoll(mem_kib) * 1024;
  utsname uts{};
  if (::uname(&uts) == 0) {
    facts.kernel = std::string(uts.sysname) + " " + uts.release + " " + uts.machine;
  }
  return {facts};
}

std::string LocalLauncher::TrainerSha256() const {
  try {
    const std::string path = ResolveProgram(options_.trainer);
    return Sha256FileHex(path.empty() ? options_.trainer : path);
  } catch (const Sha256Error& e) {
    throw LaunchError(std::string("local: ") + e.what());
  }
}

LaunchResult LocalLauncher::Launch(const LaunchSpec& spec,
                                   const std::function<void(std::string_view line)>& on_line,
                                   const std::atomic<bool>& cancel) {
  LaunchResult result;
  result.hosts = {"local"};
  std::vector<std::string> argv = {options_.mpirun, "-np", std::to_string(spec.ranks)};
  const int cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  if (spec.ranks > cores) {
    argv.push_back("--oversubscribe");
    if (warned_ranks_.insert(spec.ranks).second) {
      std::ostream& warnings = options_.warnings ? *options_.warnings : std::cerr;
      warnings << "dmlbench: warning: " << spec.ranks << " ranks on " << cores
               << " cores: oversubscribing, timings include CPU contention\n";
    }
  }
  argv.push_back(options_.trainer);
  argv.insert(argv.end(), spec.trainer_args.begin(), spec.trainer_args.end());
  if (!spec.dataset_dir.empty()) {
    argv.push_back("--dataset");
    argv.push_back(spec.dataset_dir);
  }
  result.command_line = ShellJoin(argv);

  std::vector<std::string> env(std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  if (::geteuid() == 0) {
    env.insert(env.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  }
  Child child;
  std::string error;
  if (!child.Start(argv, env, /*die_with_parent=*/true, &error)) {
    result.failure_reason = "cannot start " + options_.mpirun + ": " + error;
    return result;
  }
  const double deadline = Now() + spec.timeout_s;
  Pump(
      child, on_line,
      [&](std::string_view chunk) {
        result.stderr_tail.append(chunk);
        if (result.stderr_tail.size() > 2 * kStderrTailBytes) {
          result.stderr_tail.erase(0, result.stderr_tail.size() - kStderrTailBytes);
        }
      },
      [&] {
        if (result.timed_out || result.interrupted) return true;
        if (cancel.load()) {
          result.interrupted = true;
        } else if (Now() >= deadline) {
          result.timed_out = true;
        }
        return result.timed_out || result.interrupted;
      },
      options_.kill_grace_s);
  child.Reap(/*block=*/true);
  if (result.stderr_tail.size() > kStderrTailBytes) {
    result.stderr_tail.erase(0, result.stderr_tail.size() - kStderrTailBytes);
  }
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
