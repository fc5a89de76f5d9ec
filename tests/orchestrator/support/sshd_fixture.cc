#include "tests/orchestrator/support/sshd_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/orchestrator/support/free_port.h"

extern char** environ;

namespace dmlbench::testing {
namespace {

constexpr double kStartTimeoutS = 10;

int RunProgram(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

sockaddr_in Address(const std::string& ip, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip.c_str(), &address.sin_addr);
  return address;
}

bool Accepts(const std::string& ip, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in address = Address(ip, port);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

// A process's state letter and parent, from /proc/PID/stat; nullopt when it
// is gone.
std::optional<std::pair<char, pid_t>> StateAndParent(const std::filesystem::path& stat_path) {
  std::ifstream stat(stat_path);
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const size_t paren = line.rfind(')');  // the command may hold spaces and ')'
  if (paren == std::string::npos || paren + 2 >= line.size()) return std::nullopt;
  std::istringstream rest(line.substr(paren + 2));
  char state;
  pid_t parent;
  if (!(rest >> state >> parent)) return std::nullopt;
  return std::pair{state, parent};
}

// Every process under `root` (children, their children, ...), from /proc.
std::vector<pid_t> Descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (const auto process = StateAndParent(entry.path() / "stat")) {
      children.emplace(process->second, std::stoi(name));
    }
  }
  std::vector<pid_t> found;
  std::vector<pid_t> queue = {root};
  while (!queue.empty()) {
    const pid_t pid = queue.back();
    queue.pop_back();
    const auto [begin, end] = children.equal_range(pid);
    for (auto it = begin; it != end; ++it) {
      found.push_back(it->second);
      queue.push_back(it->second);
    }
  }
  return found;
}

// Whether `pid` is gone or a zombie: either way its files, sockets among
// them, are closed.
bool Exited(pid_t pid) {
  const auto process = StateAndParent("/proc/" + std::to_string(pid) + "/stat");
  return !process || process->first == 'Z' || process->first == 'X';
}

std::string UserName() {
  const passwd* entry = getpwuid(getuid());
  return entry != nullptr ? entry->pw_name : "root";
}

}  // namespace

void SshdFixture::GenerateKey(const std::string& path) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".pub");
  if (RunProgram({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "dmlbench-test", "-f", path},
                 path + ".log") != 0) {
    throw std::runtime_error("ssh-keygen failed: " + ReadFile(path + ".log"));
  }
}

std::string SshdFixture::ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

SshdFixture::SshdFixture(std::vector<std::string> addresses) : addresses_(std::move(addresses)) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "dmlbench-sshd-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  const std::string host_key = dir_ + "/host_ed25519";
  user_key_ = dir_ + "/user_ed25519";
  known_hosts_ = dir_ + "/known_hosts";
  GenerateKey(host_key);
  GenerateKey(user_key_);
  std::filesystem::copy_file(user_key_ + ".pub", dir_ + "/authorized_keys");
  port_ = FreePort();

  std::ofstream known(known_hosts_);
  for (const std::string& address : addresses_) {
    known << "[" << address << "]:" << port_ << " " << host_key_line() << "\n";
  }
  known.close();
  for (size_t i = 0; i < addresses_.size(); ++i) {
    std::ofstream config(dir_ + "/sshd_config." + std::to_string(i));
    config << "ListenAddress " << addresses_[i] << ":" << port_ << "\n"
           << "HostKey " << host_key << "\n"
           << "AuthorizedKeysFile " << dir_ << "/authorized_keys\n"
           << "PidFile " << dir_ << "/sshd.pid." << i << "\n"
           << "PermitRootLogin prohibit-password\n"
           << "PasswordAuthentication no\n"
           << "KbdInteractiveAuthentication no\n"
           << "PubkeyAuthentication yes\n"
           << "StrictModes no\n"
           << "UsePAM no\n"
           << "MaxStartups 64\n"
           << "MaxSessions 64\n"
           << "Subsystem sftp internal-sftp\n"
           << "LogLevel VERBOSE\n"
           // bash run by sshd at shell level 1 sources ~/.bashrc even for a
           // command; on some machines that takes seconds. Level 1 here makes
           // the login shell level 2, so commands start at once. Each host
           // has its own temporary directory, as real hosts have their own
           // /tmp: Open MPI's daemons of one job share a node name here, and
           // two of them creating one session directory at once fail
           // ("mkdir ... File exists", then "ORTE does not know how to route
           // a message"), 5 of 30 link probes under load.
           << "SetEnv SHLVL=1 TMPDIR=" << HostTemporaryDir(i) << "\n";
    std::filesystem::create_directory(HostTemporaryDir(i));
  }
  pids_.assign(addresses_.size(), -1);
  reserved_.assign(addresses_.size(), -1);
  // sshd refuses to start without its privilege separation directory.
  if (geteuid() == 0) mkdir("/run/sshd", 0755);
  Start();
}

SshdFixture::~SshdFixture() {
  for (size_t i = 0; i < pids_.size(); ++i) Kill(i);
  for (int fd : reserved_) {
    if (fd >= 0) close(fd);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string SshdFixture::host_key_line() const {
  std::string line = ReadFile(dir_ + "/host_ed25519.pub");
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

std::string SshdFixture::log() const { return ReadFile(dir_ + "/sshd.log"); }

void SshdFixture::Start() {
  const std::string log_path = dir_ + "/sshd.log";
  for (size_t i = 0; i < addresses_.size(); ++i) {
    if (pids_[i] > 0) continue;
    if (reserved_[i] >= 0) close(reserved_[i]);
    reserved_[i] = -1;
    const std::string config = dir_ + "/sshd_config." + std::to_string(i);
    const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    pids_[i] = fork();
    if (pids_[i] == 0) {
      dup2(log_fd, 2);
      const int null_fd = open("/dev/null", O_RDWR);
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      execl(DMLBENCH_SSHD, DMLBENCH_SSHD, "-D", "-e", "-f", config.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(log_fd);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kStartTimeoutS);
  for (size_t i = 0; i < addresses_.size(); ++i) {
    while (!Accepts(addresses_[i], port_)) {
      int status = 0;
      if (waitpid(pids_[i], &status, WNOHANG) == pids_[i] ||
          std::chrono::steady_clock::now() > deadline) {
        pids_[i] = -1;
        for (size_t j = 0; j < pids_.size(); ++j) Kill(j);
        throw std::runtime_error("sshd did not start: " + log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void SshdFixture::Kill(size_t index) {
  const pid_t pid = pids_.at(index);
  if (pid <= 0) return;
  kill(pid, SIGSTOP);  // forks no session while its sessions are listed
  const std::vector<pid_t> descendants = Descendants(pid);
  for (pid_t child : descendants) kill(child, SIGKILL);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  pids_[index] = -1;
  // The sessions are not our children: wait until they have died, since one
  // just forked may still hold the listening socket and would accept a
  // connection, then reset it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t child : descendants) {
    while (!Exited(child) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void SshdFixture::StopHost(size_t index) {
  if (pids_.at(index) <= 0) return;
  Kill(index);
  // Bound, never listening: a connection is refused. SO_REUSEADDR lets the
  // bind succeed beside the killed sessions' TIME_WAIT sockets; a bind to
  // port 0 elsewhere still skips this port (the kernel does not share a port
  // it chooses).
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const sockaddr_in address = Address(addresses_[index], port_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    if (error == EADDRINUSE && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    close(fd);
    throw std::runtime_error("cannot hold " + addresses_[index] + ":" + std::to_string(port_) +
                             " after stopping its sshd: " + std::strerror(error));
  }
  reserved_[index] = fd;
}

void SshdFixture::Stop() {
  for (size_t i = 0; i < pids_.size(); ++i) StopHost(i);
}

std::string SshdFixture::InventoryToml(int slots, const std::string& extra) const {
  std::ostringstream toml;
  toml << "format_version = 1\n"
       << "known_hosts = \"" << known_hosts_ << "\"\n"
       << "ssh_config = \"\"\n"
       << "connect_timeout_s = 5\n"
       << "work_dir = \"" << dir_ << "/remote-work\"\n"
       << "mpi_args = [\"--mca\", \"plm_rsh_agent\", \"ssh\", \"--mca\", \"plm_rsh_args\", \"-p "
       << port_ << " -i " << user_key_ << " -o UserKnownHostsFile=" << known_hosts_
       << " -o StrictHostKeyChecking=yes -o BatchMode=yes\", \"--mca\", \"btl\", \"tcp,self\", "
          "\"--mca\", \"btl_tcp_if_include\", \"lo\", \"--mca\", \"oob_tcp_if_include\", \"lo\", "
          "\"--oversubscribe\"]\n"
       << extra << "\n";
  char name = 'a';
  for (const std::string& address : addresses_) {
    toml << "\n[[host]]\n"
         << "name = \"" << name++ << "\"\n"
         << "address = \"" << address << "\"\n"
         << "port = " << port_ << "\n"
         << "user = \"" << UserName() << "\"\n"
         << "identity_file = \"" << user_key_ << "\"\n"
         << "slots = " << slots << "\n"
         << "tags = { provider = \"local\" }\n";
  }
  return toml.str();
}

std::string SshdFixture::WriteInventory(const std::string& name, int slots,
                                        const std::string& extra) const {
  const std::string path = dir_ + "/" + name;
  std::ofstream(path) << InventoryToml(slots, extra);
  return path;
}

}  // namespace dmlbench::testing
