#include "orchestrator/core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "orchestrator/core/clock.h"

extern char** environ;

namespace dmlbench {
namespace {

// After the child exits, how long to wait for processes it left holding our pipes.
constexpr double kPipeDrainAfterExitS = 1.0;
// How long the destructor waits after SIGTERM before SIGKILL.
constexpr int kDestructorGraceMs = 5000;

// What the child reports on its status pipe when it cannot reach exec.
enum class StartStage : int { kExec = 0, kCgroup = 1, kNetns = 2, kDirectory = 3 };
struct StartFailure {
  StartStage stage;
  int error;
};

struct Pipe {
  Fd read, write;
};

bool MakePipe(Pipe* pipe, std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  pipe->read.reset(fds[0]);
  pipe->write.reset(fds[1]);
  return true;
}

// Everything the child needs, made before fork: between fork and exec the
// child only reads it and makes async-signal-safe calls.
struct Prepared {
  std::string program;
  std::vector<char*> argv;
  std::vector<std::string> env_strings;
  std::vector<char*> env;
  Fd null_in, cgroup, netns, directory;
  int max_fd = 1024;
};

[[noreturn]] void Report(int status_fd, StartStage stage, int error) {
  const StartFailure failure{stage, error};
  [[maybe_unused]] ssize_t n = ::write(status_fd, &failure, sizeof failure);
  ::_exit(stage == StartStage::kExec ? 127 : 126);
}

// The child side of Start(): only async-signal-safe calls.
[[noreturn]] void ExecChild(const Prepared& p, const ChildOptions& options, pid_t parent, int out_fd,
                            int err_fd, int status_fd) {
  ::setpgid(0, 0);
  if (options.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
  }
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  // "0" moves the writing process itself (cgroup v1 and v2).
  if (p.cgroup.get() >= 0 && ::write(p.cgroup.get(), "0", 1) != 1) Report(status_fd, StartStage::kCgroup, errno);
  if (p.netns.get() >= 0 && ::setns(p.netns.get(), CLONE_NEWNET) != 0) {
    Report(status_fd, StartStage::kNetns, errno);
  }
  if (p.directory.get() >= 0 && ::fchdir(p.directory.get()) != 0) {
    Report(status_fd, StartStage::kDirectory, errno);
  }
  ::dup2(p.null_in.get(), STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  if (options.close_other_fds) {
    // Daemons (sshd) must not keep the caller's files open. Every fd of
    // ours is close-on-exec already; others may not be. The status pipe is
    // close-on-exec too, so it still reports a failing exec.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < p.max_fd; ++fd) {
        if (fd != status_fd) ::close(fd);
      }
    }
  }
  ::execve(p.program.c_str(), p.argv.data(), p.env.data());
  Report(status_fd, StartStage::kExec, errno);
}

// The NAME of "NAME=value".
std::string_view VariableName(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// argv, and this process's environment with options.extra_env added (an
// extra variable in place of an inherited one of its name), as execve
// takes them; the highest fd a child may have to close.
void PrepareArgvAndEnvironment(const std::vector<std::string>& argv, const ChildOptions& options, Prepared* p) {
  for (const std::string& arg : argv) p->argv.push_back(const_cast<char*>(arg.c_str()));
  p->argv.push_back(nullptr);
  for (char** e = environ; *e; ++e) {
    const std::string_view name = VariableName(*e);
    const bool replaced = std::any_of(options.extra_env.begin(), options.extra_env.end(),
                                      [name](const std::string& extra) { return VariableName(extra) == name; });
    if (!replaced) p->env_strings.emplace_back(*e);
  }
  for (const std::string& extra : options.extra_env) p->env_strings.push_back(extra);
  for (const std::string& e : p->env_strings) p->env.push_back(const_cast<char*>(e.c_str()));
  p->env.push_back(nullptr);
  if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    p->max_fd = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20));
  }
}

// Opens what the child enters before exec: /dev/null for its stdin, and
// the cgroup, namespace and directory `options` name. The stage that failed
// and why, or nullopt.
std::optional<StartFailure> OpenChildFiles(const ChildOptions& options, Prepared* p) {
  p->null_in.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const struct {
    const std::string& path;
    int flags;
    Fd& fd;
    StartStage stage;
  } files[] = {{options.cgroup_procs_file, O_WRONLY, p->cgroup, StartStage::kCgroup},
               {options.netns_file, O_RDONLY, p->netns, StartStage::kNetns},
               {options.working_dir, O_RDONLY | O_DIRECTORY, p->directory, StartStage::kDirectory}};
  for (const auto& file : files) {
    if (file.path.empty()) continue;
    file.fd.reset(::open(file.path.c_str(), file.flags | O_CLOEXEC));
    if (file.fd.get() < 0) return StartFailure{file.stage, errno};
  }
  return std::nullopt;
}

// What the child reported on its status pipe before exec, or nullopt when
// exec closed the pipe (the child runs).
std::optional<StartFailure> ReadStartFailure(int status_fd) {
  StartFailure failure{};
  ssize_t n;
  do {
    n = ::read(status_fd, &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof failure) return failure;
  return std::nullopt;
}

// "cannot join cgroup <file>: Permission denied", "cannot enter
// /run/netns/x: No such file or directory", "cannot enter directory <dir>:
// ...", or exec's own error.
std::string StartFailureMessage(const StartFailure& failure, const ChildOptions& options) {
  const std::string reason = std::strerror(failure.error);
  switch (failure.stage) {
    case StartStage::kCgroup:
      return "cannot join cgroup " + options.cgroup_procs_file + ": " + reason;
    case StartStage::kNetns:
      return "cannot enter " + options.netns_file + ": " + reason;
    case StartStage::kDirectory:
      return "cannot enter directory " + options.working_dir + ": " + reason;
    case StartStage::kExec:
      break;
  }
  return reason;
}

}  // namespace

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

void LineSplitter::Add(std::string_view chunk, const Sink& sink) {
  if (dropping_) {
    const std::size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) return;
    chunk.remove_prefix(newline);  // the '\n' ends the cut line below
    dropping_ = false;
  }
  pending_.append(chunk);
  std::size_t start = 0;
  for (std::size_t newline; (newline = pending_.find('\n', start)) != std::string::npos;) {
    if (sink) sink(std::string_view(pending_).substr(start, std::min(newline - start, max_line_)));
    start = newline + 1;
  }
  pending_.erase(0, start);
  if (pending_.size() > max_line_) {
    pending_.resize(max_line_);
    dropping_ = true;
  }
}

void LineSplitter::Finish(const Sink& sink) {
  if (!pending_.empty() && sink) sink(pending_);
  pending_.clear();
  dropping_ = false;
}

void TailBuffer::Add(std::string_view chunk) {
  text_.append(chunk);
  // Trimmed in steps of limit_ so that appending stays amortised O(1).
  if (text_.size() > 2 * limit_) text_.erase(0, text_.size() - limit_);
}

std::string TailBuffer::str() const {
  return text_.size() <= limit_ ? text_ : text_.substr(text_.size() - limit_);
}

std::string ResolveProgram(const std::string& name) {
  if (name.empty()) return "";
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

Child::~Child() {
  if (pid_ <= 0 || reaped_) return;
  // SIGTERM first: mpirun stops its ranks (each in its own process group)
  // only when it is not killed outright.
  ::kill(-pid_, SIGTERM);
  for (int waited = 0; waited < kDestructorGraceMs && !Reap(/*block=*/false); waited += 50) ::usleep(50000);
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);
    Reap(/*block=*/true);
  }
}

bool Child::Start(const std::vector<std::string>& argv, const ChildOptions& options, std::string* error) {
  const auto fail = [&](int exit_code, std::string message) {
    *error = std::move(message);
    start_exit_code_ = exit_code;
    return false;
  };
  if (argv.empty()) return fail(127, "empty command");
  Prepared p;
  p.program = ResolveProgram(argv[0]);
  if (p.program.empty()) return fail(127, "not found or not executable");
  PrepareArgvAndEnvironment(argv, options, &p);
  if (const std::optional<StartFailure> failure = OpenChildFiles(options, &p)) {
    return fail(126, StartFailureMessage(*failure, options));
  }
  Pipe out, err, status;  // status: closed by a successful exec (O_CLOEXEC)
  if (!MakePipe(&out, error) || !MakePipe(&status, error)) return false;
  if (!options.merge_stderr && !MakePipe(&err, error)) return false;
  const int err_write = options.merge_stderr ? out.write.get() : err.write.get();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return fail(127, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) ExecChild(p, options, parent, out.write.get(), err_write, status.write.get());

  pid_ = pid;
  ::setpgid(pid, pid);  // also from here, so the group exists before we signal it
  out.write.reset();
  err.write.reset();
  status.write.reset();
  if (const std::optional<StartFailure> failure = ReadStartFailure(status.read.get())) {
    Reap(/*block=*/true);
    return fail(failure->stage == StartStage::kExec ? 127 : 126, StartFailureMessage(*failure, options));
  }
  out_ = std::move(out.read);
  err_ = std::move(err.read);
  return true;
}

void Child::SignalGroup(int signal) const {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, signal);
}

bool Child::Reap(bool block) {
  if (reaped_) return true;
  if (pid_ <= 0) return false;
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

void Pump(Child& child, const LineSplitter::Sink& on_out, const std::function<void(std::string_view)>& on_err,
          const std::function<bool()>& should_stop, double grace_s) {
  LineSplitter lines;
  double term_sent_at = -1;
  bool kill_sent = false;
  double exited_at = -1;
  char buffer[65536];
  while (true) {
    const double now = MonotonicNow();
    if (term_sent_at < 0 && should_stop && should_stop()) {
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
      // Processes the child left behind in its group still hold the pipes.
      ::kill(-child.pid(), SIGKILL);
      lines.Finish(on_out);
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
    if (count == 0) {
      ::usleep(10000);  // pipes closed, child not yet exited
      continue;
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
        if (is_out) lines.Finish(on_out);
        continue;
      }
      const std::string_view chunk(buffer, static_cast<std::size_t>(n));
      if (is_out) {
        lines.Add(chunk, on_out);
      } else if (on_err) {
        on_err(chunk);
      }
    }
  }
}

CommandOutput RunCommand(const std::vector<std::string>& argv, double timeout_s, const ChildOptions& options) {
  CommandOutput output;
  Child child;
  std::string error;
  if (!child.Start(argv, options, &error)) {
    output.exit_code = child.start_exit_code();
    output.err = (argv.empty() ? std::string("") : argv[0]) + ": " + error;
    if (options.merge_stderr) output.out = output.err + "\n";
    return output;
  }
  const double deadline = MonotonicNow() + timeout_s;
  bool timed_out = false;
  Pump(
      child,
      [&](std::string_view line) {
        output.out.append(line);
        output.out += '\n';
      },
      [&](std::string_view chunk) { output.err.append(chunk); },
      [&] { return timed_out = timed_out || MonotonicNow() >= deadline; }, 0.5);
  child.Reap(/*block=*/true);
  output.exit_code = timed_out ? -1 : ExitCode(child.status());
  return output;
}

std::string ExitDescription(const std::string& program, int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return program + " was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return program + " exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

int ExitCode(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return WEXITSTATUS(wait_status);
}

}  // namespace dmlbench
