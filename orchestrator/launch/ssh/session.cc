#include "orchestrator/launch/ssh/session.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/terminal_text.h"

namespace dmlbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChunkBytes = 32 * 1024;   // one SFTP write / channel read
constexpr int kPollMs = 50;                 // how often a waiting exec checks cancel/timeout
constexpr double kStopDrainS = 5;           // after a stop command: wait this long for EOF

struct KeyDeleter {
  void operator()(ssh_key key) const noexcept { ssh_key_free(key); }
};
using KeyPtr = std::unique_ptr<std::remove_pointer_t<ssh_key>, KeyDeleter>;

// An exec channel; closed and freed on every path.
class Channel {
 public:
  explicit Channel(ssh_session session) : channel_(ssh_channel_new(session)) {}
  ~Channel() {
    if (channel_ == nullptr) return;
    if (ssh_channel_is_open(channel_) != 0) ssh_channel_close(channel_);
    ssh_channel_free(channel_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ssh_channel get() const { return channel_; }

 private:
  ssh_channel channel_;
};

class SftpFile {
 public:
  explicit SftpFile(sftp_file file) : file_(file) {}
  ~SftpFile() {
    if (file_ != nullptr) sftp_close(file_);
  }
  SftpFile(const SftpFile&) = delete;
  SftpFile& operator=(const SftpFile&) = delete;
  sftp_file get() const { return file_; }
  // Closes now, reporting failure (the destructor cannot).
  bool Close() {
    const int rc = sftp_close(file_);
    file_ = nullptr;
    return rc == SSH_NO_ERROR;
  }

 private:
  sftp_file file_;
};

std::string Fingerprint(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t length = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) != SSH_OK) {
    return "SHA256:?";
  }
  char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
  ssh_clean_pubkey_hash(&hash);
  std::string fingerprint = text != nullptr ? text : "SHA256:?";
  ssh_string_free_char(text);
  return fingerprint;
}

// The fingerprint known_hosts records for `host` ("[addr]:port" or "addr";
// plain or hashed entries, matched by libssh), preferring an entry of the
// server key's type; "" if none.
std::string KnownFingerprint(const std::string& known_hosts, const std::string& host,
                             const std::string& key_type) {
  std::ifstream in(known_hosts);
  std::string any;
  for (std::string line; std::getline(in, line);) {
    ssh_knownhosts_entry* entry = nullptr;
    if (ssh_known_hosts_parse_line(host.c_str(), line.c_str(), &entry) != SSH_OK) continue;
    const std::string fingerprint = Fingerprint(entry->publickey);
    const bool same_type = ssh_key_type_to_char(ssh_key_type(entry->publickey)) == key_type;
    ssh_knownhosts_entry_free(entry);
    if (same_type) return fingerprint;
    if (any.empty()) any = fingerprint;
  }
  return any;
}

}  // namespace

SshError::SshError(const std::string& host, const std::string& message, int code)
    : Error(message), host_(host), code_(code) {}

SshTarget MakeTarget(const Inventory& inventory, const InventoryHost& host) {
  SshTarget target;
  target.name = host.name;
  target.address = host.address;
  target.port = host.port;
  target.user = host.user;
  target.identity_file = host.identity_file;
  target.known_hosts = inventory.known_hosts;
  target.ssh_config = inventory.ssh_config;
  target.host_key_policy = inventory.host_key_policy;
  target.connect_timeout_s = inventory.connect_timeout_s;
  return target;
}

std::string PublicKeyFingerprint(const std::string& key_line) {
  std::istringstream fields(key_line);
  std::string type, base64;
  ssh_key key = nullptr;
  if (!(fields >> type >> base64) ||
      ssh_pki_import_pubkey_base64(base64.c_str(), ssh_key_type_from_name(type.c_str()), &key) !=
          SSH_OK) {
    throw SshError("", "not a public key: '" + key_line + "'");
  }
  KeyPtr owned(key);
  return Fingerprint(key);
}

SshSession::SshSession(const SshTarget& target) : target_(target) {
  label_ = "host '" + target_.name + "' (" + target_.address + ")";
  session_ = ssh_new();
  if (session_ == nullptr) throw SshError(target_.name, label_ + ": cannot create an SSH session");
  try {
    Connect();
    VerifyHostKey();
    Authenticate();
  } catch (...) {
    ssh_disconnect(session_);
    ssh_free(session_);
    session_ = nullptr;
    throw;
  }
}

SshSession::~SshSession() {
  if (sftp_ != nullptr) sftp_free(sftp_);
  if (session_ != nullptr) {
    if (ssh_is_connected(session_) != 0) ssh_disconnect(session_);
    ssh_free(session_);
  }
}

void SshSession::Fail(const std::string& what) const {
  throw SshError(target_.name, label_ + ": " + what + ": " + ssh_get_error(session_),
                 ssh_get_error_code(session_));
}

void SshSession::Connect() {
  const int no = 0;
  const int yes = 1;
  ssh_options_set(session_, SSH_OPTIONS_PROCESS_CONFIG, &no);
  // Without it each small SFTP write waits for a delayed ACK (~40 ms).
  ssh_options_set(session_, SSH_OPTIONS_NODELAY, &yes);
  if (ssh_options_set(session_, SSH_OPTIONS_HOST, target_.address.c_str()) != SSH_OK) {
    const std::string error = ssh_get_error(session_);
    throw SshError(target_.name, label_ + ": invalid address '" + TerminalText(target_.address) + "'" +
                                     (error.empty() ? "" : ": " + error));
  }
  // The ssh config first, so that the inventory's own values win.
  if (!target_.ssh_config.empty() &&
      ssh_options_parse_config(session_, target_.ssh_config.c_str()) != SSH_OK) {
    Fail("cannot read ssh config '" + target_.ssh_config + "'");
  }
  if (target_.port > 0) {
    const unsigned int port = static_cast<unsigned int>(target_.port);
    ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  }
  if (!target_.user.empty()) ssh_options_set(session_, SSH_OPTIONS_USER, target_.user.c_str());
  // Only the inventory's known_hosts is trusted.
  ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, target_.known_hosts.c_str());
  ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, target_.known_hosts.c_str());
  const long seconds = static_cast<long>(target_.connect_timeout_s);
  const long usec = static_cast<long>(std::lround((target_.connect_timeout_s - seconds) * 1e6));
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT_USEC, &usec);

  char* user = nullptr;
  char* host = nullptr;
  unsigned int port = 22;
  ssh_options_get(session_, SSH_OPTIONS_USER, &user);
  ssh_options_get(session_, SSH_OPTIONS_HOST, &host);
  ssh_options_get_port(session_, &port);
  label_ = "host '" + target_.name + "' (" + (user != nullptr ? std::string(user) + "@" : "") +
           (host != nullptr ? host : target_.address) + ":" + std::to_string(port) + ")";
  ssh_string_free_char(user);
  ssh_string_free_char(host);

  if (ssh_connect(session_) != SSH_OK) Fail("connect failed");
}

void SshSession::VerifyHostKey() {
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(session_, &raw_key) != SSH_OK) Fail("no host key");
  KeyPtr server_key(raw_key);
  const std::string offered = Fingerprint(server_key.get());
  switch (ssh_session_is_known_server(session_)) {
    case SSH_KNOWN_HOSTS_OK:
      return;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER: {
      unsigned int port = 22;
      ssh_options_get_port(session_, &port);
      char* host = nullptr;
      ssh_options_get(session_, SSH_OPTIONS_HOST, &host);
      const std::string name = port == 22 ? std::string(host)
                                          : "[" + std::string(host) + "]:" + std::to_string(port);
      ssh_string_free_char(host);
      const std::string known = KnownFingerprint(
          target_.known_hosts, name, ssh_key_type_to_char(ssh_key_type(server_key.get())));
      throw SshError(target_.name, label_ + ": host key CHANGED: " + target_.known_hosts +
                                       " has " + known + ", the server offered " + offered +
                                       "; refusing to connect (remove the old entry if the "
                                       "change is expected)");
    }
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (target_.host_key_policy == HostKeyPolicy::kAcceptNew) {
        if (ssh_session_update_known_hosts(session_) != SSH_OK) {
          Fail("cannot add the host key to " + target_.known_hosts);
        }
        return;
      }
      throw SshError(target_.name, label_ + ": unknown host key " + offered + " (not in " +
                                       target_.known_hosts +
                                       "); add it there or set host_key_policy = \"accept-new\"");
    case SSH_KNOWN_HOSTS_ERROR:
      break;
  }
  Fail("host key check failed");
}

void SshSession::Authenticate() {
  int rc = SSH_AUTH_ERROR;
  std::string method;
  if (!target_.identity_file.empty()) {
    method = "identity file " + target_.identity_file;
    ssh_key raw_key = nullptr;
    if (ssh_pki_import_privkey_file(target_.identity_file.c_str(), nullptr, nullptr, nullptr,
                                    &raw_key) != SSH_OK) {
      throw SshError(target_.name, label_ + ": cannot read identity file " +
                                       target_.identity_file + " (a key without passphrase, or "
                                       "leave identity_file out to use the ssh-agent)");
    }
    KeyPtr key(raw_key);
    rc = ssh_userauth_publickey(session_, nullptr, key.get());
  } else {
    method = "ssh-agent and default keys";
    rc = ssh_userauth_publickey_auto(session_, nullptr, nullptr);
  }
  if (rc == SSH_AUTH_SUCCESS) return;
  if (rc == SSH_AUTH_DENIED || rc == SSH_AUTH_PARTIAL) {
    Fail("authentication failed with " + method);
  }
  Fail("authentication error with " + method);
}

StreamResult SshSession::ExecStreaming(const std::string& command, const StreamOptions& options) {
  StreamResult result;
  Channel channel(session_);
  if (channel.get() == nullptr || ssh_channel_open_session(channel.get()) != SSH_OK ||
      ssh_channel_request_exec(channel.get(), command.c_str()) != SSH_OK) {
    result.connection_lost = ssh_is_connected(session_) == 0;
    result.error = label_ + ": cannot start a command: " + ssh_get_error(session_);
    return result;
  }
  LineSplitter out;
  LineSplitter err;
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> drain_until;  // set once a stop command ran
  char buffer[kChunkBytes];
  while (true) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (!drain_until) {
      const bool cancelled = options.cancel != nullptr && options.cancel->load();
      if (cancelled || elapsed > options.timeout_s) {
        (cancelled ? result.cancelled : result.timed_out) = true;
        const std::string stop = options.stop_command ? options.stop_command() : "";
        if (stop.empty()) break;
        Exec(stop, kStopDrainS);
        drain_until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(kStopDrainS));
      }
    } else if (Clock::now() > *drain_until) {
      break;
    }
    const int polled = ssh_channel_poll_timeout(channel.get(), kPollMs, 0);
    bool failed = polled == SSH_ERROR;
    for (int is_stderr = 0; is_stderr <= 1 && !failed; ++is_stderr) {
      int n;
      while ((n = ssh_channel_read_nonblocking(channel.get(), buffer, sizeof buffer, is_stderr)) > 0) {
        (is_stderr ? err : out)
            .Add(std::string_view(buffer, static_cast<size_t>(n)),
                 is_stderr ? options.on_stderr_line : options.on_stdout_line);
      }
      failed = n == SSH_ERROR;
    }
    if (failed || ssh_is_connected(session_) == 0) {
      result.connection_lost = true;
      result.error = label_ + ": connection lost: " + ssh_get_error(session_);
      break;
    }
    if (ssh_channel_is_eof(channel.get()) != 0 && ssh_channel_poll(channel.get(), 0) <= 0 &&
        ssh_channel_poll(channel.get(), 1) <= 0) {
      break;
    }
  }
  out.Finish(options.on_stdout_line);
  err.Finish(options.on_stderr_line);
  if (!result.connection_lost && ssh_channel_is_eof(channel.get()) != 0) {
    const int status = ssh_channel_get_exit_status(channel.get());
    if (status >= 0) result.exit_status = status;
  }
  return result;
}

ExecResult SshSession::Exec(const std::string& command, double timeout_s) {
  ExecResult result;
  StreamOptions options;
  options.timeout_s = timeout_s;
  options.on_stdout_line = [&](std::string_view line) { (result.out += line) += '\n'; };
  options.on_stderr_line = [&](std::string_view line) { (result.err += line) += '\n'; };
  const StreamResult streamed = ExecStreaming(command, options);
  if (streamed.connection_lost || !streamed.error.empty()) {
    throw SshError(target_.name, streamed.error, ssh_get_error_code(session_));
  }
  result.timed_out = streamed.timed_out;
  result.exit_status = streamed.exit_status.value_or(-1);
  return result;
}

sftp_session_struct* SshSession::Sftp() {
  if (sftp_ != nullptr) return sftp_;
  sftp_ = sftp_new(session_);
  if (sftp_ == nullptr) Fail("cannot open an SFTP session");
  if (sftp_init(sftp_) != SSH_OK) {
    const int code = sftp_get_error(sftp_);
    sftp_free(sftp_);
    sftp_ = nullptr;
    throw SshError(target_.name, label_ + ": SFTP start failed: " + ssh_get_error(session_), code);
  }
  return sftp_;
}

namespace {

// SFTP paths are relative to the remote home; "~/" is spelled that way in
// the inventory.
std::string SftpPath(const std::string& path) {
  if (path.rfind("~/", 0) == 0) return path.substr(2);
  return path;
}

}  // namespace

void SshSession::WriteRemote(const std::string& remote_path, int mode,
                             const std::function<size_t(char*, size_t)>& read_chunk) {
  sftp_session sftp = Sftp();
  const std::string path = SftpPath(remote_path);
  SftpFile file(sftp_open(sftp, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, static_cast<mode_t>(mode)));
  auto fail = [&](const std::string& what) {
    throw SshError(target_.name, label_ + ": " + what + " " + remote_path + ": " +
                                     ssh_get_error(session_), sftp_get_error(sftp));
  };
  if (file.get() == nullptr) fail("SFTP cannot create");
  std::vector<char> buffer(kChunkBytes);
  for (size_t n; (n = read_chunk(buffer.data(), buffer.size())) > 0;) {
    if (sftp_write(file.get(), buffer.data(), n) != static_cast<ssize_t>(n)) fail("SFTP write failed for");
  }
  if (!file.Close()) fail("SFTP close failed for");
}

void SshSession::Upload(const std::string& local_path, const std::string& remote_path) {
  std::ifstream in(local_path, std::ios::binary);
  if (!in) throw SshError(target_.name, label_ + ": cannot read local file " + local_path);
  WriteRemote(remote_path, 0700, [&](char* data, size_t size) {
    in.read(data, static_cast<std::streamsize>(size));
    return static_cast<size_t>(in.gcount());
  });
}

void SshSession::WriteFile(const std::string& remote_path, std::string_view bytes) {
  size_t offset = 0;
  WriteRemote(remote_path, 0600, [&](char* data, size_t size) {
    const size_t n = std::min(size, bytes.size() - offset);
    std::copy_n(bytes.data() + offset, n, data);
    offset += n;
    return n;
  });
}

void SshSession::Download(const std::string& remote_path, const std::string& local_path) {
  sftp_session sftp = Sftp();
  const std::string path = SftpPath(remote_path);
  SftpFile file(sftp_open(sftp, path.c_str(), O_RDONLY, 0));
  auto fail = [&](const std::string& what) {
    throw SshError(target_.name, label_ + ": " + what + " " + remote_path + ": " + ssh_get_error(session_),
                   sftp_get_error(sftp));
  };
  if (file.get() == nullptr) fail("SFTP cannot open");
  std::ofstream out(local_path, std::ios::binary | std::ios::trunc);
  if (!out) throw SshError(target_.name, label_ + ": cannot write local file " + local_path);
  std::vector<char> buffer(kChunkBytes);
  while (true) {
    const ssize_t n = sftp_read(file.get(), buffer.data(), buffer.size());
    if (n < 0) fail("SFTP read failed for");
    if (n == 0) break;
    out.write(buffer.data(), n);
  }
  if (!file.Close()) fail("SFTP close failed for");
  if (!out.flush()) throw SshError(target_.name, label_ + ": cannot write local file " + local_path);
}

}  // namespace dmlbench
