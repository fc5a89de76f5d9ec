#include "tests/orchestrator/support/slurm_fixture.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "orchestrator/core/subprocess.h"
#include "tests/orchestrator/support/free_port.h"

namespace dmlbench::testing {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void Run(const std::vector<std::string>& argv) {
  const CommandOutput output = RunCommand(argv, 30);
  if (output.exit_code != 0) throw std::runtime_error(argv[0] + " failed: " + output.err + output.out);
}

// Polls `ready` every 50 ms for up to `timeout_s`.
bool WaitFor(const std::function<bool()>& ready, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Multi-node: ranks of different "nodes" on this one machine.
constexpr const char* kLoopbackMpi[][2] = {
    {"OMPI_MCA_btl", "self,tcp"}, {"OMPI_MCA_btl_tcp_if_include", "lo"}, {"OMPI_MCA_oob_tcp_if_include", "lo"}};

std::string SlurmConf(const std::string& b, int ctld_port, const std::vector<int>& slurmd_ports, int cpus) {
  std::ostringstream conf;
  conf << "ClusterName=fixture\nSlurmctldHost=localhost\n"
       << "SlurmctldPort=" << ctld_port << "\n"
       << "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
       << "AuthInfo=socket=" << b << "/run/munge.sock\n"
       << "StateSaveLocation=" << b << "/ctld\nSlurmdSpoolDir=" << b << "/spool/%n\nTmpFS=" << b << "/tmp/%n\n"
       << "SlurmctldPidFile=" << b << "/run/slurmctld.pid\nSlurmdPidFile=" << b << "/run/slurmd-%n.pid\n"
       << "SlurmctldLogFile=" << b << "/log/slurmctld.log\nSlurmdLogFile=" << b << "/log/slurmd-%n.log\n"
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
       << "MpiDefault=pmix\nReturnToService=1\n"
       << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
       << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << b << "/log/jobcomp.txt\n"
       // Configured CPUs, not the machine's: runs of up to 8 ranks fit one node.
       << "SlurmdParameters=config_overrides\n";
  for (std::size_t i = 0; i < slurmd_ports.size(); ++i) {
    conf << "NodeName=n" << i + 1 << " NodeAddr=127.0.0.1 Port=" << slurmd_ports[i] << " CPUs=" << cpus
         << " Feature=fixture State=UNKNOWN\n";
  }
  conf << "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  return conf.str();
}

}  // namespace

std::string SlurmFixture::Unavailable() {
  if (::geteuid() != 0) return "not root";
  for (const char* program : {"munged", "mungekey", "slurmctld", "slurmd", "srun", "salloc", "scontrol"}) {
    if (ResolveProgram(program).empty() && ResolveProgram(std::string("/usr/sbin/") + program).empty()) {
      return std::string(program) + " is not installed (scripts/setup installs Slurm)";
    }
  }
  return "";
}

SlurmFixture::SlurmFixture(int nodes, int cpus_per_node) : nodes_(nodes) {
  std::string pattern = (std::filesystem::temp_directory_path() / "dmlbench-slurm-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  try {
    for (const char* sub : {"etc", "munge", "run", "log", "ctld"}) std::filesystem::create_directories(dir_ + "/" + sub);
    for (int n = 1; n <= nodes_; ++n) {
      std::filesystem::create_directories(dir_ + "/spool/n" + std::to_string(n));
      std::filesystem::create_directories(dir_ + "/tmp/n" + std::to_string(n));
    }
    // munged refuses a socket in a directory others cannot search.
    ::chmod(dir_.c_str(), 0755);
    ::chmod((dir_ + "/run").c_str(), 0755);
    ::chmod((dir_ + "/munge").c_str(), 0700);
    std::vector<int> ports;
    while (static_cast<int>(ports.size()) < nodes_ + 1) {
      const int port = FreePort();
      if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
    }
    std::ofstream(conf()) << SlurmConf(dir_, ports[0], std::vector<int>(ports.begin() + 1, ports.end()),
                                       cpus_per_node);
    ::setenv("SLURM_CONF", conf().c_str(), 1);
    if (nodes_ > 1) {
      for (const auto& [name, value] : kLoopbackMpi) ::setenv(name, value, 1);
    }

    const std::string sbin = ResolveProgram("munged").empty() ? "/usr/sbin/" : "";
    Run({sbin + "mungekey", "-c", "-k", dir_ + "/munge/munge.key"});
    Run({sbin + "munged", "-S", dir_ + "/run/munge.sock", "--key-file=" + dir_ + "/munge/munge.key",
         "--log-file=" + dir_ + "/log/munged.log", "--pid-file=" + dir_ + "/run/munged.pid",
         "--seed-file=" + dir_ + "/munge/munged.seed"});
    munged_pid_ = std::atoi(ReadWhole(dir_ + "/run/munged.pid").c_str());

    StartController(/*keep_state=*/false);
    std::string error;
    ChildOptions daemon;
    daemon.close_other_fds = true;
    daemon.die_with_parent = false;  // the fixture stops it, in order
    for (int n = 1; n <= nodes_; ++n) {
      slurmds_.push_back(std::make_unique<Child>());
      if (!slurmds_.back()->Start({sbin + "slurmd", "-D", "-f", conf(), "-N", "n" + std::to_string(n)}, daemon,
                                  &error)) {
        throw std::runtime_error("slurmd: " + error);
      }
    }
    for (int n = 1; n <= nodes_; ++n) {
      const std::string node = "n" + std::to_string(n);
      if (!WaitFor([&] { return RunCommand({"sinfo", "-h", "-n", node, "-o", "%T"}, 5).out == "idle\n"; }, 20)) {
        throw std::runtime_error("node " + node + " does not become idle:\n" + logs());
      }
    }
  } catch (...) {
    Stop();
    throw;
  }
}

SlurmFixture::~SlurmFixture() { Stop(); }

void SlurmFixture::StartController(bool keep_state) {
  const std::string sbin = ResolveProgram("slurmctld").empty() ? "/usr/sbin/" : "";
  std::string error;
  slurmctld_ = std::make_unique<Child>();
  ChildOptions daemon;
  daemon.close_other_fds = true;
  daemon.die_with_parent = false;  // the fixture stops it, in order
  std::vector<std::string> argv = {sbin + "slurmctld", "-D", "-f", conf()};
  if (!keep_state) argv.insert(argv.begin() + 2, "-i");
  if (!slurmctld_->Start(argv, daemon, &error)) throw std::runtime_error("slurmctld: " + error);
  if (!WaitFor([] { return RunCommand({"scontrol", "ping"}, 5).exit_code == 0; }, 15)) {
    throw std::runtime_error("slurmctld does not answer:\n" + logs());
  }
}

void SlurmFixture::RestartController() {
  slurmctld_->SignalGroup(SIGTERM);
  for (int i = 0; i < 200 && !slurmctld_->Reap(false); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  slurmctld_.reset();
  StartController(/*keep_state=*/true);
}

void SlurmFixture::Stop() noexcept {
  // Reverse order: slurmd stalls ~9 s when its controller is gone first.
  for (std::unique_ptr<Child>& slurmd : slurmds_) {
    if (slurmd) slurmd->SignalGroup(SIGTERM);
  }
  std::vector<std::unique_ptr<Child>*> daemons;
  for (std::unique_ptr<Child>& slurmd : slurmds_) daemons.push_back(&slurmd);
  daemons.push_back(&slurmctld_);
  for (std::unique_ptr<Child>* daemon : daemons) {
    if (*daemon) {
      (*daemon)->SignalGroup(SIGTERM);
      for (int i = 0; i < 200 && !(*daemon)->Reap(false); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      daemon->reset();  // SIGKILL if still running, and reaped
    }
  }
  slurmds_.clear();
  if (munged_pid_ > 0) {
    ::kill(munged_pid_, SIGTERM);
    for (int i = 0; i < 100 && ::kill(munged_pid_, 0) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    munged_pid_ = -1;
  }
  ::unsetenv("SLURM_CONF");
  if (nodes_ > 1) {
    for (const auto& [name, value] : kLoopbackMpi) ::unsetenv(name);
  }
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::string SlurmFixture::logs() const {
  std::string text;
  std::vector<std::string> logs = {"slurmctld.log", "munged.log"};
  for (int n = 1; n <= nodes_; ++n) logs.push_back("slurmd-n" + std::to_string(n) + ".log");
  for (const std::string& log : logs) text += "--- " + log + "\n" + ReadWhole(dir_ + "/log/" + log);
  return text;
}

}  // namespace dmlbench::testing
