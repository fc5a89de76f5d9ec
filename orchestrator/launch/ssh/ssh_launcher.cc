#include "orchestrator/launch/ssh/ssh_launcher.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include "orchestrator/launch/ssh/collect_output.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/provision.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/core/subprocess.h"
#include "orchestrator/launch/job_output.h"
#include "orchestrator/launch/ssh/session.h"

namespace dmlbench {
namespace {

constexpr size_t kStderrTailBytes = 8 * 1024;
constexpr double kHousekeepingTimeoutS = 10;   // hostfile removal, process-group kill
constexpr auto kPoolWait = std::chrono::milliseconds(100);
constexpr std::string_view kPgidMarker = "dmlbench-pgid=";

// The most telling line of mpirun's stderr: the first "...error: ..." line
// (the trainer's own message), else the last line that is not decoration.
std::string SummaryLine(const std::string& stderr_text) {
  std::istringstream lines(stderr_text);
  std::string last;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error:") != std::string::npos) return line;
    if (line.find_first_not_of("- \t") != std::string::npos) last = line;
  }
  return last;
}

class SshLauncher final : public Launcher {
 public:
  SshLauncher(Inventory inventory, const std::string& trainer_path, const std::string& dataset_dir)
      : inventory_(std::move(inventory)),
        dataset_dir_(dataset_dir),
        plan_(MakeProvisionPlan(inventory_.work_dir, trainer_path, dataset_dir)),
        pool_(inventory_.hosts.size()) {}

  std::vector<HostFacts> Prepare() override {
    std::vector<HostProvision> provisioned;
    try {
      provisioned = ProvisionHosts(inventory_, plan_, [this](const InventoryHost& host) {
        return std::unique_ptr<RemoteShell>(new SshSession(MakeTarget(inventory_, host)));
      });
    } catch (const SshError& error) {
      throw LaunchError(error.what());
    } catch (const ProvisionError& error) {
      throw LaunchError(error.what());
    }
    std::vector<HostFacts> facts;
    for (const HostProvision& host : provisioned) facts.push_back(host.facts);
    std::lock_guard<std::mutex> lock(mutex_);
    remote_work_dir_ = provisioned.front().work_dir;
    for (PoolHost& host : pool_) host.down = false;
    return facts;
  }

  std::string TrainerSha256() const override { return plan_.files.front().sha256; }

  int max_concurrent_runs() const override { return inventory_.max_concurrent_runs; }

  std::vector<LaunchHost> Hosts() const override {
    std::vector<LaunchHost> hosts;
    for (const InventoryHost& host : inventory_.hosts) hosts.push_back({host.name, host.slots});
    return hosts;
  }

  std::vector<std::string> LostHosts() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> lost;
    for (size_t i = 0; i < pool_.size(); ++i) {
      if (pool_[i].down) lost.push_back(inventory_.hosts[i].name);
    }
    return lost;
  }

  LaunchResult Launch(const LaunchSpec& spec,
                      const std::function<void(std::string_view line)>& on_line,
                      const std::atomic<bool>& cancel) override;

 private:
  struct PoolHost {
    bool busy = false;
    bool down = false;
  };

  // Marks hosts busy for one run and frees them on every path.
  class Allocation {
   public:
    Allocation(SshLauncher& launcher, std::vector<size_t> hosts)
        : launcher_(launcher), hosts_(std::move(hosts)) {}
    ~Allocation() {
      std::lock_guard<std::mutex> lock(launcher_.mutex_);
      for (size_t i : hosts_) launcher_.pool_[i].busy = false;
      launcher_.freed_.notify_all();
    }
    Allocation(const Allocation&) = delete;
    Allocation& operator=(const Allocation&) = delete;
    const std::vector<size_t>& hosts() const { return hosts_; }

   private:
    SshLauncher& launcher_;
    std::vector<size_t> hosts_;
  };

  // Free hosts with at least `ranks` slots, in inventory order; waits while
  // busy hosts may still free them. Empty with `reason` set when the hosts
  // that are up can never hold the run, or when cancelled.
  std::vector<size_t> Acquire(int ranks, const std::atomic<bool>& cancel, std::string* reason);
  // The hosts `names` (a spec's), marked busy; empty with `reason` set when
  // one is unknown, lost or busy (the schedule gives a host to one job at
  // a time and never a lost one again).
  std::vector<size_t> Claim(const std::vector<std::string>& names, std::string* reason);
  // Whether a host was lost in this sweep.
  bool AnyDown() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(pool_.begin(), pool_.end(), [](const PoolHost& host) { return host.down; });
  }
  void MarkDown(size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    pool_[index].down = true;
  }
  std::string RemoteCommand(const LaunchSpec& spec, const std::string& hostfile, const std::string& output_dir,
                            std::string* failure) const;
  // The steps of Launch().
  std::string WorkDir();
  std::string HostfileText(const std::vector<size_t>& hosts) const;
  // A session to the head host with the hostfile written; nullptr (the host
  // marked down, `result` saying why) when it cannot be reached.
  std::unique_ptr<SshSession> OpenHead(size_t head, const std::string& hostfile, const std::string& hostfile_text,
                                       LaunchResult* result);
  // Runs the job, streaming its stdout lines; keeps the stderr tail, and the
  // whole stderr in `mpirun_stderr` when it is open.
  StreamResult StreamJob(SshSession& session, const LaunchSpec& spec,
                         const std::function<void(std::string_view line)>& on_line,
                         const std::atomic<bool>& cancel, std::ofstream& mpirun_stderr, LaunchResult* result);
  // The failure reason of a job that did not end with 0.
  void DescribeEnd(const LaunchSpec& spec, const StreamResult& streamed, const std::vector<size_t>& hosts,
                   LaunchResult* result);
  void FindLostHosts(const std::vector<size_t>& hosts, LaunchResult* result);

  const Inventory inventory_;
  const std::string dataset_dir_;
  const ProvisionPlan plan_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<PoolHost> pool_;        // index = inventory host index; guarded by mutex_
  std::string remote_work_dir_;       // absolute; "" until Prepare(); guarded by mutex_
};

std::vector<size_t> SshLauncher::Acquire(int ranks, const std::atomic<bool>& cancel,
                                         std::string* reason) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    int up_slots = 0;
    std::string down;
    for (size_t i = 0; i < pool_.size(); ++i) {
      if (!pool_[i].down) {
        up_slots += inventory_.hosts[i].slots;
      } else {
        down += (down.empty() ? "" : ", ") + inventory_.hosts[i].name;
      }
    }
    if (up_slots < ranks) {
      *reason = "needs " + std::to_string(ranks) + " ranks but the hosts that are up have " +
                std::to_string(up_slots) + " slots" + (down.empty() ? "" : " (down: " + down + ")");
      return {};
    }
    std::vector<size_t> chosen;
    int slots = 0;
    for (size_t i = 0; i < pool_.size() && slots < ranks; ++i) {
      if (pool_[i].down || pool_[i].busy) continue;
      chosen.push_back(i);
      slots += inventory_.hosts[i].slots;
    }
    if (slots >= ranks) {
      for (size_t i : chosen) pool_[i].busy = true;
      return chosen;
    }
    if (cancel.load()) {
      *reason = "interrupted while waiting for free hosts";
      return {};
    }
    freed_.wait_for(lock, kPoolWait);
  }
}

std::vector<size_t> SshLauncher::Claim(const std::vector<std::string>& names, std::string* reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<size_t> chosen;
  for (const std::string& name : names) {
    size_t i = 0;
    while (i < inventory_.hosts.size() && inventory_.hosts[i].name != name) ++i;
    if (i == inventory_.hosts.size()) {
      *reason = "no host " + name + " in " + inventory_.source_path;
    } else if (pool_[i].down) {
      *reason = "host " + name + " was lost earlier in this sweep";
    } else if (pool_[i].busy) {
      *reason = "host " + name + " is running another job";
    } else {
      chosen.push_back(i);
      continue;
    }
    return {};
  }
  for (size_t i : chosen) pool_[i].busy = true;
  return chosen;
}

std::string SshLauncher::RemoteCommand(const LaunchSpec& spec, const std::string& hostfile,
                                       const std::string& output_dir, std::string* failure) const {
  const std::string work_dir = hostfile.substr(0, hostfile.rfind('/'));
  std::vector<std::string> trainer_args = spec.trainer_args;
  if (!spec.dataset_dir.empty()) {
    std::error_code ignored;
    if (dataset_dir_.empty() || !std::filesystem::equivalent(spec.dataset_dir, dataset_dir_, ignored)) {
      *failure = "dataset directory " + spec.dataset_dir + " was not provisioned on the hosts (" +
                 (dataset_dir_.empty() ? "none was" : dataset_dir_ + " was") + ")";
      return "";
    }
    // The trainer reads the hosts' copy.
    const std::string remote_dataset = work_dir + "/dataset";
    bool replaced = false;
    for (size_t i = 0; i < trainer_args.size(); ++i) {
      if (trainer_args[i] == "--dataset" && i + 1 < trainer_args.size()) {
        trainer_args[++i] = remote_dataset;
        replaced = true;
      } else if (trainer_args[i].rfind("--dataset=", 0) == 0) {
        trainer_args[i] = "--dataset=" + remote_dataset;
        replaced = true;
      }
    }
    if (!replaced) {
      trainer_args.push_back("--dataset");
      trainer_args.push_back(remote_dataset);
    }
    // Decoded once per host, by the first run that reads the hosts' copy.
    trainer_args.insert(trainer_args.end(), {"--dataset-cache", work_dir + "/dataset-cache"});
  }
  std::vector<std::string> words = {"env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  words.insert(words.end(), std::begin(kMpirunEnvironment), std::end(kMpirunEnvironment));
  words.insert(words.end(), {"mpirun", "--hostfile", hostfile, "-np", std::to_string(spec.ranks)});
  words.insert(words.end(), inventory_.mpi_args.begin(), inventory_.mpi_args.end());
  if (!output_dir.empty()) {
    const std::vector<std::string> output = OutputFilenameArgs(output_dir);
    words.insert(words.end(), output.begin(), output.end());
  }
  words.push_back(work_dir + "/dmlbench-trainer");
  words.insert(words.end(), trainer_args.begin(), trainer_args.end());
  // setsid: mpirun and everything it starts form one process group, whose
  // id is printed first on stderr so that a timeout or cancel can kill it.
  // A watcher in the group holds the session's stdin (mpirun gets
  // /dev/null): it reads end-of-file when the connection goes, the
  // orchestrator killed or its machine gone, and then kills the group, so
  // that no job outlives the sweep that started it.
  return "exec setsid -w sh -c " +
         ShellQuote(std::string("echo ") + std::string(kPgidMarker) +
                    "$$ >&2; (trap '' TERM; cat >/dev/null; kill -TERM -- -$$; sleep 1; kill -KILL -- -$$) "
                    ">/dev/null 2>&1 & exec \"$@\" </dev/null") +
         " sh " + ShellJoin(words);
}

LaunchResult SshLauncher::Launch(const LaunchSpec& spec,
                                 const std::function<void(std::string_view line)>& on_line,
                                 const std::atomic<bool>& cancel) {
  LaunchResult result;
  const std::string work_dir = WorkDir();
  if (work_dir.empty()) {
    result.failure_reason = "the SSH hosts were not prepared (Prepare() was not called or failed)";
    return result;
  }
  std::string reason;
  std::vector<size_t> chosen =
      spec.hosts.empty() ? Acquire(spec.ranks, cancel, &reason) : Claim(spec.hosts, &reason);
  if (chosen.empty() && !spec.hosts.empty()) {
    result.host_failure = true;  // tried again on other hosts
    result.failure_reason = reason;
    return result;
  }
  if (chosen.empty()) {
    result.interrupted = cancel.load();
    result.failure_reason = reason;
    // Hosts lost in this sweep do not come back: no later attempt would fit.
    result.permanent = !result.interrupted && AnyDown();
    return result;
  }
  Allocation allocation(*this, std::move(chosen));
  for (size_t i : allocation.hosts()) result.hosts.push_back(inventory_.hosts[i].name);
  const size_t head = allocation.hosts().front();
  const std::string hostfile = work_dir + "/.hostfile-" + spec.run_key;
  // Each rank writes its output on its own host, in a directory named after
  // the (unique) local one it is collected into.
  const std::string remote_output =
      spec.output_dir.empty() ? "" : RemoteOutputDir(work_dir, spec.run_key, spec.output_dir);
  result.command_line = RemoteCommand(spec, hostfile, remote_output, &result.failure_reason);
  if (result.command_line.empty()) return result;

  // mpirun runs on the first host, which reaches the others itself.
  std::unique_ptr<SshSession> session = OpenHead(head, hostfile, HostfileText(allocation.hosts()), &result);
  if (!session) return result;
  std::ofstream mpirun_stderr;
  if (!spec.output_dir.empty()) mpirun_stderr.open(spec.output_dir + "/" + kMpirunStderrFile, std::ios::binary);
  const StreamResult streamed = StreamJob(*session, spec, on_line, cancel, mpirun_stderr, &result);
  if (streamed.connection_lost) {
    MarkDown(head);
    result.host_failure = true;
    result.failure_reason = streamed.error;
    return result;
  }
  try {
    session->Exec("rm -f -- " + ShellQuote(hostfile), kHousekeepingTimeoutS);
  } catch (const SshError&) {
    // The run's outcome stands; a leftover hostfile is harmless.
  }
  if (!remote_output.empty()) {
    CollectOutput(inventory_, allocation.hosts(), remote_output, spec.output_dir, session.get());
  }
  DescribeEnd(spec, streamed, allocation.hosts(), &result);
  return result;
}

std::string SshLauncher::WorkDir() {
  std::lock_guard<std::mutex> lock(mutex_);
  return remote_work_dir_;
}

std::string SshLauncher::HostfileText(const std::vector<size_t>& hosts) const {
  std::string text;
  for (size_t i : hosts) {
    text += inventory_.hosts[i].address + " slots=" + std::to_string(inventory_.hosts[i].slots) + "\n";
  }
  return text;
}

std::unique_ptr<SshSession> SshLauncher::OpenHead(size_t head, const std::string& hostfile,
                                                  const std::string& hostfile_text, LaunchResult* result) {
  try {
    auto session = std::make_unique<SshSession>(MakeTarget(inventory_, inventory_.hosts[head]));
    session->WriteFile(hostfile, hostfile_text);
    return session;
  } catch (const SshError& error) {
    MarkDown(head);
    result->host_failure = true;
    result->failure_reason = error.what();
    return nullptr;
  }
}

StreamResult SshLauncher::StreamJob(SshSession& session, const LaunchSpec& spec,
                                    const std::function<void(std::string_view line)>& on_line,
                                    const std::atomic<bool>& cancel, std::ofstream& mpirun_stderr,
                                    LaunchResult* result) {
  std::string pgid;
  TailBuffer stderr_tail(kStderrTailBytes);
  StreamOptions options;
  options.timeout_s = spec.timeout_s;
  options.cancel = &cancel;
  options.on_stdout_line = on_line;
  options.on_stderr_line = [&](std::string_view line) {
    // The first stderr line is the process group of mpirun (RemoteCommand).
    if (pgid.empty() && line.substr(0, kPgidMarker.size()) == kPgidMarker) {
      pgid = line.substr(kPgidMarker.size());
      return;
    }
    stderr_tail.Add(line);
    stderr_tail.Add("\n");
    if (mpirun_stderr.is_open()) mpirun_stderr << line << '\n';
  };
  options.stop_command = [&]() -> std::string {
    if (pgid.empty()) return "";
    const std::string group = ShellQuote("-" + pgid);
    return "kill -TERM -- " + group + " 2>/dev/null; sleep 1; kill -KILL -- " + group + " 2>/dev/null; true";
  };
  const StreamResult streamed = session.ExecStreaming(result->command_line, options);
  result->stderr_tail = stderr_tail.str();
  result->exit_code = streamed.exit_status.value_or(-1);
  result->timed_out = streamed.timed_out;
  result->interrupted = streamed.cancelled;
  return streamed;
}

void SshLauncher::DescribeEnd(const LaunchSpec& spec, const StreamResult& streamed,
                              const std::vector<size_t>& hosts, LaunchResult* result) {
  if (streamed.timed_out) {
    std::ostringstream reason_text;
    reason_text << "timed out after " << spec.timeout_s << " s; the remote process group was killed";
    result->failure_reason = reason_text.str();
  } else if (streamed.cancelled) {
    result->failure_reason = "interrupted; the remote process group was killed";
  } else if (result->exit_code != 0) {
    const std::string last = SummaryLine(result->stderr_tail);
    result->failure_reason = streamed.exit_status ? "mpirun exited with status " + std::to_string(result->exit_code)
                                                  : std::string("mpirun ended without an exit status");
    if (!last.empty()) result->failure_reason += ": " + last;
    FindLostHosts(hosts, result);
  }
}

void SshLauncher::FindLostHosts(const std::vector<size_t>& hosts, LaunchResult* result) {
  // A host lost under mpirun shows up as a failing job: connect to each of
  // the others (the head answered) to find it.
  for (size_t n = 1; n < hosts.size(); ++n) {
    try {
      SshSession probe(MakeTarget(inventory_, inventory_.hosts[hosts[n]]));
    } catch (const SshError& error) {
      MarkDown(hosts[n]);
      result->host_failure = true;
      result->failure_reason += "; " + std::string(error.what());
    }
  }
}

}  // namespace

std::unique_ptr<Launcher> MakeSshLauncher(const std::string& inventory_path,
                                          const std::string& trainer_path,
                                          const std::string& dataset_dir) {
  return std::make_unique<SshLauncher>(LoadInventory(inventory_path), trainer_path, dataset_dir);
}

}  // namespace dmlbench
