// Subprocess: the one way the orchestrator starts programs on this machine
// (mpirun, git, ip, tc, sshd, ...). Owns the child's pipes and process group
// until it is reaped. Start() prepares everything (argv, environment, the
// namespace and cgroup files) before fork, and between fork and exec the
// child makes only async-signal-safe calls, error paths included, so it is
// safe to start children from several threads at once. One Child belongs to
// one thread; distinct Children may be used concurrently.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_SUBPROCESS_H_
#define DMLBENCH_ORCHESTRATOR_CORE_SUBPROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dmlbench {

// A file descriptor with one owner; closed at destruction.
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
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Splits a byte stream into lines (without their '\n') as chunks arrive.
// A line longer than `max_line` bytes is cut to its first `max_line` bytes
// and the rest dropped as it arrives, so that a process printing without a
// newline cannot make the reader buffer without bound; a reader that must
// tell a cut line apart sees its size equal `max_line`.
class LineSplitter {
 public:
  using Sink = std::function<void(std::string_view line)>;
  // Far above any line the trainer prints (an epoch event of 60,000
  // iteration times is about 1 MB).
  static constexpr std::size_t kMaxLineBytes = 16 << 20;

  explicit LineSplitter(std::size_t max_line = kMaxLineBytes) : max_line_(max_line) {}
  // Passes every complete line of pending text + `chunk` to `sink`.
  void Add(std::string_view chunk, const Sink& sink);
  // Passes the last line if it had no '\n'.
  void Finish(const Sink& sink);

 private:
  std::size_t max_line_;
  std::string pending_;
  bool dropping_ = false;  // pending_ is a cut line whose rest is being dropped
};

// The last `limit` bytes of a stream (mpirun's stderr tail).
class TailBuffer {
 public:
  explicit TailBuffer(std::size_t limit) : limit_(limit) {}
  void Add(std::string_view chunk);
  std::string str() const;

 private:
  std::size_t limit_;
  std::string text_;
};

// Where and how a child starts.
struct ChildOptions {
  std::vector<std::string> extra_env;   // NAME=value added to this process's environment, replacing NAME's value
  bool die_with_parent = true;          // SIGTERM when the starting thread ends (prctl)
  bool merge_stderr = false;            // stderr goes to the stdout pipe
  bool close_other_fds = false;         // close every fd above 2 (for daemons such as sshd)
  std::string netns_file;               // enter this network namespace first (/run/netns/NAME); "" = ours
  std::string cgroup_procs_file;        // join this cgroup first (its cgroup.procs); "" = ours
  std::string working_dir;              // start in this directory; "" = ours
};

// A started child in its own process group, stdin from /dev/null, stdout
// and stderr on pipes. The destructor stops a child that is still running
// (SIGTERM to its group, SIGKILL 5 s later) and reaps it.
class Child {
 public:
  Child() = default;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Starts argv[0] (searched in PATH unless it has a '/'). Returns false
  // with `error` set when it cannot run: "not found or not executable",
  // "cannot enter /run/netns/x: No such file or directory", "cannot join
  // cgroup <file>: Permission denied", or exec's own error. On false,
  // start_exit_code() is 127 (exec) or 126 (namespace or cgroup), as a shell
  // would report.
  bool Start(const std::vector<std::string>& argv, const ChildOptions& options, std::string* error);

  // Signals every process of the child's group.
  void SignalGroup(int signal) const;
  // True once the child has exited; status() is then its wait status.
  bool Reap(bool block);
  int status() const { return status_; }
  int start_exit_code() const { return start_exit_code_; }
  pid_t pid() const { return pid_; }
  Fd& out() { return out_; }
  Fd& err() { return err_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int start_exit_code_ = 0;
  Fd out_, err_;
};

// Reads both pipes of a started child until it exited and they are drained:
// on_out gets each complete stdout line, on_err every stderr chunk.
// `should_stop` is asked between reads (at least every 50 ms); once it says
// true the group gets SIGTERM, and SIGKILL grace_s later. Processes the child
// left behind holding the pipes are killed 1 s after it exited.
void Pump(Child& child, const LineSplitter::Sink& on_out, const std::function<void(std::string_view)>& on_err,
          const std::function<bool()>& should_stop, double grace_s);

// Output of a command run to completion.
struct CommandOutput {
  int exit_code = -1;  // 128+N when killed by signal N; 127/126 when it could not start; -1 timed out
  std::string out;     // with merge_stderr: both streams, interleaved
  std::string err;     // why it could not start, or its stderr
};

// Runs argv to completion or until timeout_s (then its group is killed).
// Never throws for a failing command.
CommandOutput RunCommand(const std::vector<std::string>& argv, double timeout_s, const ChildOptions& options = {});

// "mpirun" -> "/usr/bin/mpirun" by PATH; names with a '/' are kept if
// executable. "" when nothing executable is found.
std::string ResolveProgram(const std::string& name);

// "mpirun exited with status 3", "mpirun was killed by signal 9 (Killed)".
std::string ExitDescription(const std::string& program, int wait_status);
// 128+N for a signal, else the exit status.
int ExitCode(int wait_status);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_SUBPROCESS_H_
