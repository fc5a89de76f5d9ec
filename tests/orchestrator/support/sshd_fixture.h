// SshdFixture: real OpenSSH sshds (DMLBENCH_SSHD), one per loopback address
// ("host"), on one free port, with host and user keys made by ssh-keygen in a
// temp dir; Stop() or the destructor kills them and every process under them.
// No GoogleTest; failures throw std::runtime_error. One thread.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SSHD_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SSHD_FIXTURE_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace dmlbench::testing {

class SshdFixture {
 public:
  // Generates the keys and starts sshd on `addresses` (loopback only).
  explicit SshdFixture(std::vector<std::string> addresses = {"127.0.0.2", "127.0.0.3"});
  ~SshdFixture();
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  // Kills the sshd of host `index` and every process under it (open
  // connections, the commands they run): clients see their connection lost.
  // The host's address:port stays bound (not listening) until Start(), so a
  // connection to it is refused: no other test's process can take the
  // freed port (an MPI rank's bind to port 0, say) and answer in its place.
  void StopHost(size_t index);
  void Stop();   // every host
  // Starts every stopped host again, same port and keys.
  void Start();

  int port() const { return port_; }
  const std::vector<std::string>& addresses() const { return addresses_; }
  const std::string& dir() const { return dir_; }             // temp dir, removed at the end
  const std::string& user_key() const { return user_key_; }   // private key (authorized)
  const std::string& known_hosts() const { return known_hosts_; }  // every address's host key
  std::string host_key_line() const;                          // "ssh-ed25519 AAAA... "
  std::string log() const;                                    // sshd's stderr so far

  // An inventory for hosts named "a", "b", ... (one per address) with the
  // user key, the fixture's known_hosts, and mpi_args that let mpirun reach
  // the hosts through this sshd. `extra` is appended to the top-level keys.
  std::string InventoryToml(int slots = 1, const std::string& extra = "") const;
  // Writes InventoryToml() to dir()/name and returns the path.
  std::string WriteInventory(const std::string& name, int slots = 1,
                             const std::string& extra = "") const;

  // Runs ssh-keygen to make an ed25519 key pair at `path` (and path.pub).
  static void GenerateKey(const std::string& path);
  // Reads a whole file.
  static std::string ReadFile(const std::string& path);

 private:
  // Kills host `index`'s sshd and everything under it; the port is not held.
  void Kill(size_t index);
  // The TMPDIR of sessions on host `index`.
  std::string HostTemporaryDir(size_t index) const { return dir_ + "/tmp." + std::to_string(index); }

  std::vector<std::string> addresses_;
  std::string dir_;
  std::string user_key_;
  std::string known_hosts_;
  int port_ = 0;
  std::vector<pid_t> pids_;  // per address; -1 when stopped
  std::vector<int> reserved_;  // per address: the stopped host's bound socket, or -1
};

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_SSHD_FIXTURE_H_
