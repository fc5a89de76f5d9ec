// Tests of orchestrator/launch/ssh/session against a real sshd (SshdFixture).
#include "orchestrator/launch/ssh/session.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/orchestrator/support/sshd_fixture.h"

namespace dmlbench {
namespace {

using testing::SshdFixture;

std::string UserName() { return getpwuid(getuid())->pw_name; }

SshTarget TargetFor(const SshdFixture& sshd, size_t index = 0) {
  SshTarget target;
  target.name = std::string(1, static_cast<char>('a' + index));
  target.address = sshd.addresses()[index];
  target.port = sshd.port();
  target.user = UserName();
  target.identity_file = sshd.user_key();
  target.known_hosts = sshd.known_hosts();
  target.connect_timeout_s = 5;
  return target;
}

std::string Label(const SshdFixture& sshd, size_t index = 0) {
  return "host '" + std::string(1, static_cast<char>('a' + index)) + "' (" + UserName() + "@" +
         sshd.addresses()[index] + ":" + std::to_string(sshd.port()) + ")";
}

// The fingerprint as OpenSSH's own ssh-keygen prints it.
std::string KeygenFingerprint(const std::string& public_key_path) {
  const std::string command = "ssh-keygen -l -E sha256 -f '" + public_key_path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[512] = {};
  const bool read = fgets(buffer, sizeof buffer, pipe) != nullptr;
  pclose(pipe);
  if (!read) return "";
  std::string line = buffer;  // "256 SHA256:... comment (ED25519)"
  const size_t start = line.find(' ') + 1;
  return line.substr(start, line.find(' ', start) - start);
}

std::string ErrorOf(const SshTarget& target) {
  try {
    SshSession session(target);
  } catch (const SshError& error) {
    return error.what();
  }
  return "connected";
}

TEST(SshSessionTest, RunsACommandAndCapturesBothStreamsAndTheExitStatus) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  const ExecResult result = session.Exec("echo out; echo err >&2; exit 3", 10);
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_FALSE(result.timed_out);
}

TEST(SshSessionTest, BothLoopbackAddressesAreSeparateHosts) {
  SshdFixture sshd;
  SshSession a(TargetFor(sshd, 0));
  SshSession b(TargetFor(sshd, 1));
  EXPECT_EQ(a.Exec("echo $SSH_CONNECTION", 10).out.find(sshd.addresses()[0] + " " +
                                                         std::to_string(sshd.port())) != std::string::npos,
            true);
  EXPECT_NE(b.Exec("echo $SSH_CONNECTION", 10).out.find(sshd.addresses()[1]), std::string::npos);
}

TEST(SshSessionTest, ExecStopsAtItsTimeout) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  // Without the timeout the command would end by itself, with status 0.
  const ExecResult result = session.Exec("sleep 30", 0.3);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_status, -1);
}

TEST(SshSessionTest, StreamsLinesAsTheyArriveAndRunsTheStopCommandOnCancel) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  const std::string marker = sshd.dir() + "/stopped";
  std::atomic<bool> cancel{false};
  std::vector<std::string> lines;
  StreamOptions options;
  options.timeout_s = 30;
  options.cancel = &cancel;
  options.on_stdout_line = [&](std::string_view line) {
    lines.emplace_back(line);
    if (lines.size() == 2) cancel = true;
  };
  options.stop_command = [&] { return "touch '" + marker + "'; pkill -P $PPID sleep; true"; };
  const StreamResult result =
      session.ExecStreaming("echo one; echo two; exec sleep 20", options);
  EXPECT_TRUE(result.cancelled);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST(SshSessionTest, UploadsAFileAndWritesBytes) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  const std::string local = sshd.dir() + "/payload";
  std::string bytes(200 * 1024 + 7, 'x');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 % 251);
  std::ofstream(local, std::ios::binary) << bytes;
  session.Upload(local, sshd.dir() + "/uploaded");
  session.WriteFile(sshd.dir() + "/written", "hello\n");
  EXPECT_EQ(SshdFixture::ReadFile(sshd.dir() + "/uploaded"), bytes);
  EXPECT_EQ(SshdFixture::ReadFile(sshd.dir() + "/written"), "hello\n");
  EXPECT_EQ(std::filesystem::status(sshd.dir() + "/uploaded").permissions() &
                std::filesystem::perms::owner_exec,
            std::filesystem::perms::owner_exec);
}

TEST(SshSessionTest, DownloadsAFileByteForByte) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  std::string bytes(100 * 1024 + 3, 'x');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 17 % 253);
  bytes += "last line without a newline";
  session.WriteFile(sshd.dir() + "/remote", bytes);
  session.Download(sshd.dir() + "/remote", sshd.dir() + "/downloaded");
  EXPECT_EQ(SshdFixture::ReadFile(sshd.dir() + "/downloaded"), bytes);
  session.WriteFile(sshd.dir() + "/empty", "");
  session.Download(sshd.dir() + "/empty", sshd.dir() + "/downloaded");
  EXPECT_EQ(SshdFixture::ReadFile(sshd.dir() + "/downloaded"), "");
}

TEST(SshSessionTest, AcceptNewAddsAnUnknownKeyToKnownHosts) {
  SshdFixture sshd;
  SshTarget target = TargetFor(sshd);
  target.known_hosts = sshd.dir() + "/empty_known_hosts";
  target.host_key_policy = HostKeyPolicy::kAcceptNew;
  { SshSession session(target); }
  EXPECT_NE(SshdFixture::ReadFile(target.known_hosts).find(sshd.host_key_line().substr(0, 40)),
            std::string::npos);
  target.host_key_policy = HostKeyPolicy::kStrict;
  EXPECT_EQ(ErrorOf(target), "connected");
}

// An ssh-agent in the foreground, stopped and reaped at destruction (also
// when an ASSERT leaves the test early).
class Agent {
 public:
  explicit Agent(const std::string& socket_path) {
    pid_ = fork();
    if (pid_ == 0) {
      execlp("ssh-agent", "ssh-agent", "-D", "-a", socket_path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Agent() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

 private:
  pid_t pid_ = -1;
};

TEST(SshSessionTest, AuthenticatesThroughTheSshAgent) {
  SshdFixture sshd;
  const std::string socket_path = sshd.dir() + "/agent.sock";
  Agent agent(socket_path);
  for (int i = 0; i < 3000 && !std::filesystem::exists(socket_path); ++i) usleep(10000);
  ASSERT_TRUE(std::filesystem::exists(socket_path)) << "ssh-agent did not create its socket in 30 s";
  const std::string add = "SSH_AUTH_SOCK='" + socket_path + "' ssh-add -q '" + sshd.user_key() + "' 2>/dev/null";
  ASSERT_EQ(std::system(add.c_str()), 0);
  const char* saved = std::getenv("SSH_AUTH_SOCK");
  const std::string saved_value = saved != nullptr ? saved : "";
  setenv("SSH_AUTH_SOCK", socket_path.c_str(), 1);
  SshTarget target = TargetFor(sshd);
  target.identity_file = "";
  const std::string outcome = ErrorOf(target);
  if (saved != nullptr) {
    setenv("SSH_AUTH_SOCK", saved_value.c_str(), 1);
  } else {
    unsetenv("SSH_AUTH_SOCK");
  }
  EXPECT_EQ(outcome, "connected");
}

TEST(SshSessionTest, HonoursTheSshConfigHostAlias) {
  SshdFixture sshd;
  const std::string config = sshd.dir() + "/ssh_config";
  std::ofstream(config) << "Host fixture-alias\n  HostName " << sshd.addresses()[0]
                        << "\n  Port " << sshd.port() << "\n  User " << UserName()
                        << "\n  IdentityFile " << sshd.user_key() << "\n";
  SshTarget target = TargetFor(sshd);
  target.address = "fixture-alias";
  target.port = 0;
  target.user = "";
  target.identity_file = "";
  target.ssh_config = config;
  SshSession session(target);
  EXPECT_EQ(session.Exec("echo ok", 10).out, "ok\n");
}

// Error paths of session.cc follow.

TEST(SshSessionTest, UnknownHostKeyIsRefusedWhenStrict) {
  SshdFixture sshd;
  SshTarget target = TargetFor(sshd);
  target.known_hosts = sshd.dir() + "/empty_known_hosts";
  std::ofstream(target.known_hosts) << "";
  EXPECT_EQ(ErrorOf(target),
            Label(sshd) + ": unknown host key " + KeygenFingerprint(sshd.dir() + "/host_ed25519.pub") +
                " (not in " + target.known_hosts +
                "); add it there or set host_key_policy = \"accept-new\"");
}

TEST(SshSessionTest, ChangedHostKeyIsRefusedWithBothFingerprintsEvenWithAcceptNew) {
  SshdFixture sshd;
  const std::string other = sshd.dir() + "/other_ed25519";
  SshdFixture::GenerateKey(other);
  SshTarget target = TargetFor(sshd);
  target.known_hosts = sshd.dir() + "/changed_known_hosts";
  std::ofstream(target.known_hosts) << "[" << sshd.addresses()[0] << "]:" << sshd.port() << " "
                                    << SshdFixture::ReadFile(other + ".pub");
  target.host_key_policy = HostKeyPolicy::kAcceptNew;
  const std::string expected =
      Label(sshd) + ": host key CHANGED: " + target.known_hosts + " has " +
      KeygenFingerprint(other + ".pub") + ", the server offered " +
      KeygenFingerprint(sshd.dir() + "/host_ed25519.pub") +
      "; refusing to connect (remove the old entry if the change is expected)";
  EXPECT_EQ(ErrorOf(target), expected);
  // The same with OpenSSH's hashed host names (Debian's default).
  ASSERT_EQ(std::system(("ssh-keygen -q -H -f '" + target.known_hosts + "' >/dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(SshdFixture::ReadFile(target.known_hosts).rfind("|1|", 0), 0u);
  EXPECT_EQ(ErrorOf(target), expected);
}

TEST(SshSessionTest, AuthenticationFailureNamesTheHostAndTheKey) {
  SshdFixture sshd;
  const std::string stranger = sshd.dir() + "/stranger_ed25519";
  SshdFixture::GenerateKey(stranger);
  SshTarget target = TargetFor(sshd);
  target.identity_file = stranger;
  EXPECT_EQ(ErrorOf(target), Label(sshd) + ": authentication failed with identity file " + stranger +
                                 ": Access denied for 'publickey'. Authentication that can "
                                 "continue: publickey");
}

TEST(SshSessionTest, UnreadableIdentityFileIsReported) {
  SshdFixture sshd;
  SshTarget target = TargetFor(sshd);
  target.identity_file = sshd.dir() + "/missing_key";
  EXPECT_EQ(ErrorOf(target), Label(sshd) + ": cannot read identity file " + target.identity_file +
                                 " (a key without passphrase, or leave identity_file out to use "
                                 "the ssh-agent)");
}

// A TCP socket bound to a free port of 127.0.0.2 (-1 if that failed), and a
// target named `name` aimed at it.
int BindOn127002(const std::string& name, SshTarget* target) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.2", &address.sin_addr);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return -1;
  }
  target->name = name;
  target->address = "127.0.0.2";
  target->port = ntohs(address.sin_port);
  target->user = UserName();
  target->known_hosts = "/dev/null";
  return fd;
}

TEST(SshSessionTest, DownloadOfAMissingFileNamesIt) {
  SshdFixture sshd;
  SshSession session(TargetFor(sshd));
  try {
    session.Download(sshd.dir() + "/absent", sshd.dir() + "/downloaded");
    FAIL() << "downloaded a file that does not exist";
  } catch (const SshError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(Label(sshd) + ": SFTP cannot open " + sshd.dir() + "/absent: ", 0), 0u)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(sshd.dir() + "/downloaded"));
}

TEST(SshSessionTest, NothingListeningFailsAtOnce) {
  // A port held by this test but not listening: nobody else can take it.
  SshTarget target;
  const int held = BindOn127002("a", &target);
  ASSERT_GE(held, 0);
  // "At once": a refusal must not wait for the (long) connect timeout.
  target.connect_timeout_s = 120;
  const auto start = std::chrono::steady_clock::now();
  const std::string error = ErrorOf(target);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(held);
  EXPECT_EQ(error, "host 'a' (" + UserName() + "@127.0.0.2:" + std::to_string(target.port) +
                       "): connect failed: Connection refused");
  EXPECT_LT(elapsed, target.connect_timeout_s / 2);
}

TEST(SshSessionTest, SilentServerFailsWithinTheConnectTimeout) {
  // A TCP listener that never sends an SSH banner.
  SshTarget target;
  const int listener = BindOn127002("silent", &target);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(listen(listener, 4), 0);
  target.connect_timeout_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const std::string error = ErrorOf(target);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(listener);
  EXPECT_EQ(error, "host 'silent' (" + UserName() + "@127.0.0.2:" + std::to_string(target.port) +
                       "): connect failed: Timeout connecting to 127.0.0.2");
  // The listener never answers: only the connect timeout can have ended it.
  EXPECT_GE(elapsed, target.connect_timeout_s * 0.9);
}

}  // namespace
}  // namespace dmlbench
