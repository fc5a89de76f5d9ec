// Session: one authenticated SSH connection (libssh) with exec (captured or
// streamed by line) and SFTP upload and download. Owns every libssh handle; SshError is the
// only exception leaving this module. A session is used by one thread at a
// time; distinct sessions may be used from different threads concurrently.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SESSION_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SESSION_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "orchestrator/core/error.h"
#include "orchestrator/launch/ssh/inventory.h"

struct ssh_session_struct;
struct sftp_session_struct;

namespace dmlbench {

// Any failure of a connection, host key check, authentication, channel or
// SFTP operation. what(): "host 'a' (root@127.0.0.2:2222): <what failed>: <libssh message>".
class SshError : public Error {
 public:
  SshError(const std::string& host, const std::string& message, int code = 0);
  const std::string& host() const { return host_; }
  // libssh's error code (SSH_REQUEST_DENIED = 1, SSH_FATAL = 2) or the SFTP
  // status; 0 when the failure did not come from libssh.
  int code() const { return code_; }

 private:
  std::string host_;
  int code_;
};

// Everything needed to reach one host; built from an inventory entry.
struct SshTarget {
  std::string name;             // inventory name, used in messages
  std::string address;
  int port = 0;                 // 0 = ssh config, else 22
  std::string user;             // "" = ssh config, else local user
  std::string identity_file;    // "" = ssh-agent and ssh config / default keys
  std::string known_hosts;      // the only known_hosts file consulted
  std::string ssh_config;       // "" = none
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  double connect_timeout_s = 10;
};
SshTarget MakeTarget(const Inventory& inventory, const InventoryHost& host);

struct ExecResult {
  int exit_status = -1;        // -1 when the command did not report one (killed, timed out)
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Where provisioning runs commands and puts files: the seam between the
// provisioning logic and libssh (tests use a fake).
class RemoteShell {
 public:
  virtual ~RemoteShell() = default;
  virtual const std::string& host_name() const = 0;
  // Runs `command` through the remote shell (the caller quotes arguments).
  virtual ExecResult Exec(const std::string& command, double timeout_s) = 0;
  // Copies a local file to remote_path ("~/" = remote home), mode 0700.
  virtual void Upload(const std::string& local_path, const std::string& remote_path) = 0;
  // Writes bytes to remote_path (created or truncated), mode 0600.
  virtual void WriteFile(const std::string& remote_path, std::string_view bytes) = 0;
};

// How a streamed command ended.
struct StreamResult {
  std::optional<int> exit_status;  // empty if none was reported
  bool timed_out = false;
  bool cancelled = false;
  bool connection_lost = false;    // the session died; `error` says how
  std::string error;
};

struct StreamOptions {
  double timeout_s = 600;
  const std::atomic<bool>* cancel = nullptr;                 // may be null
  std::function<void(std::string_view line)> on_stdout_line;  // without '\n'
  std::function<void(std::string_view line)> on_stderr_line;
  // On timeout or cancel: a command run on a second channel to stop the
  // first one's processes (e.g. kill its process group); "" = none.
  std::function<std::string()> stop_command;
};

class SshSession final : public RemoteShell {
 public:
  // Connects within target.connect_timeout_s, verifies the host key against
  // target.known_hosts (see HostKeyPolicy) and authenticates. Throws SshError.
  explicit SshSession(const SshTarget& target);
  ~SshSession() override;
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  const std::string& host_name() const override { return target_.name; }
  ExecResult Exec(const std::string& command, double timeout_s) override;
  void Upload(const std::string& local_path, const std::string& remote_path) override;
  void WriteFile(const std::string& remote_path, std::string_view bytes) override;
  // Copies remote_path ("~/" = remote home) to local_path (created or
  // truncated), byte for byte. Throws SshError naming the remote file.
  void Download(const std::string& remote_path, const std::string& local_path);

  // Runs `command`, passing complete output lines to the callbacks as they
  // arrive (from the calling thread). Never throws for the command's own
  // failure or a lost connection: that is in the result.
  StreamResult ExecStreaming(const std::string& command, const StreamOptions& options);

 private:
  [[noreturn]] void Fail(const std::string& what) const;
  void Connect();
  void VerifyHostKey();
  void Authenticate();
  sftp_session_struct* Sftp();
  void WriteRemote(const std::string& remote_path, int mode,
                   const std::function<size_t(char*, size_t)>& read_chunk);

  SshTarget target_;
  std::string label_;                  // "host 'a' (root@127.0.0.2:2222)"
  ssh_session_struct* session_ = nullptr;
  sftp_session_struct* sftp_ = nullptr;
};

// "SHA256:<base64>" as OpenSSH prints it, of a public key in known_hosts /
// authorized_keys form ("ssh-ed25519 AAAA..."). Throws SshError (host "").
std::string PublicKeyFingerprint(const std::string& key_line);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SESSION_H_
