// ClusterAlpha: the link probe's alpha is the links' latency. As root (skipped
// otherwise), on two emulated hosts, unshaped and at 1 Gbit/s and 100 Mbit/s,
// with and without a CPU quota: alpha from `ProbeLinks` against the one-way
// time of an independent TCP ping-pong between the same two namespaces. And
// the fit of a measured 10 Mbit/s link, whose small messages ride tbf's
// bucket (no root needed).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrator/launch/cluster/cluster.h"
#include "orchestrator/launch/cluster/link_probe.h"
#include "orchestrator/launch/cluster/links.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

// Round trips of the TCP ping-pong; its median is what the probe must match.
constexpr int kTcpRoundTrips = 2000;

std::string UniqueName(char tag) {
  std::string name;
  for (unsigned pid = static_cast<unsigned>(getpid()); pid > 0; pid /= 36) {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36]);
  }
  return std::string(1, tag) + name.substr(0, 5);
}

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {
    if (fd_ < 0) Fail("socket");
  }
  ~Socket() { close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Moves the calling thread (only it) into network namespace `name`.
void EnterNamespace(const std::string& name) {
  const int fd = open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("open netns " + name);
  const int entered = setns(fd, CLONE_NEWNET);
  close(fd);
  if (entered != 0) Fail("setns " + name);
}

// Blocking, unbatched and bounded: a dead link fails the test instead of
// hanging it.
void Configure(const Socket& socket) {
  const int one = 1;
  const timeval timeout{10, 0};
  if (setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      setsockopt(socket.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0) {
    Fail("setsockopt");
  }
}

void SendByte(const Socket& socket) {
  const char byte = 'x';
  if (send(socket.fd(), &byte, 1, 0) != 1) Fail("send");
}

// Polls without blocking until the byte is there (10 s at most), as Open
// MPI's TCP transport polls its sockets: a recv() that blocks times the
// kernel waking the thread too, which took 9-26 us one way on one machine
// whose probe read alpha 7-10 us.
void ReceiveByte(const Socket& socket) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char byte;
  for (;;) {
    const ssize_t received = recv(socket.fd(), &byte, 1, MSG_DONTWAIT);
    if (received == 1) return;
    if (received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || std::chrono::steady_clock::now() > deadline) {
      Fail("recv");
    }
  }
}

sockaddr_in Ipv4(const std::string& address, int port) {
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr) != 1) {
    throw std::runtime_error("not an IPv4 address: " + address);
  }
  return socket_address;
}

struct OneWay {
  double median_s = 0;
  double min_s = 0;
};

// One-way times of 1-byte TCP round trips from namespace `client_netns` to
// `server_address` in `server_netns`. Each side polls for the byte
// (ReceiveByte), so nothing sleeps. Runs outside the hosts' cgroups: this is
// the link, not the hosts' CPU.
OneWay TcpOneWay(const std::string& client_netns, const std::string& server_netns,
                 const std::string& server_address) {
  std::promise<int> port;
  std::future<int> port_known = port.get_future();
  auto server = std::async(std::launch::async, [&] {
    EnterNamespace(server_netns);
    const Socket listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    Configure(listener);
    sockaddr_in address = Ipv4(server_address, 0);
    socklen_t length = sizeof address;
    if (bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener.fd(), 1) != 0 ||
        getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      port.set_value(0);
      Fail("listen on " + server_address);
    }
    port.set_value(ntohs(address.sin_port));
    const Socket peer(accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    Configure(peer);
    for (int i = 0; i < kTcpRoundTrips + kTcpRoundTrips / 10; ++i) {
      ReceiveByte(peer);
      SendByte(peer);
    }
  });
  auto client = std::async(std::launch::async, [&] {
    EnterNamespace(client_netns);
    const Socket socket_to_server(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    Configure(socket_to_server);
    const sockaddr_in address = Ipv4(server_address, port_known.get());
    if (connect(socket_to_server.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      Fail("connect to " + server_address);
    }
    // A tenth of the round trips warm up the connection, untimed.
    std::vector<double> round_trips;
    for (int i = 0; i < kTcpRoundTrips + kTcpRoundTrips / 10; ++i) {
      const auto start = std::chrono::steady_clock::now();
      SendByte(socket_to_server);
      ReceiveByte(socket_to_server);
      if (i >= kTcpRoundTrips / 10) {
        round_trips.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    std::sort(round_trips.begin(), round_trips.end());
    return OneWay{round_trips[round_trips.size() / 2] / 2, round_trips.front() / 2};
  });
  const OneWay one_way = client.get();
  server.get();
  return one_way;
}

class ClusterAlpha : public ::testing::Test {
 protected:
  void Up(char tag, double cpu_cores) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    name_ = UniqueName(tag);
    work_ = fs::temp_directory_path() / ("dmlb-alpha-" + name_);
    fs::remove_all(work_);
    fs::create_directories(work_);
    runner_ = MakeSystemCommandRunner();
    ClusterOptions options;
    options.name = name_;
    options.state_dir = (work_ / "cluster").string();
    options.hosts = 2;
    options.cpu_cores = cpu_cores;
    options.sshd = DMLBENCH_SSHD;
    state_ = ClusterUp(options, *runner_);
  }

  void TearDown() override {
    if (!runner_) return;
    ClusterDown(name_, state_.state_dir, "/sys/fs/cgroup", *runner_);
    fs::remove_all(work_);
  }

  // Probes the links shaped to `bandwidth_bits_per_s` (0 = unshaped) and
  // measures the TCP ping-pong between the same two hosts right after.
  // Alpha must be at most 3 times the TCP median plus 50 us: loose on
  // purpose, since MPI adds its headers and matching to TCP, and on a busy
  // 2-core machine ranks that sleep between polls lose the core to others;
  // what it must catch is the probe timing the scheduler instead of the link
  // (1 ms while both ranks shared one core, a hundred times the link). And
  // at least half the fastest TCP one-way time (the median moves with the
  // machine's load, the minimum hardly): no fit may charge small messages
  // for bytes they did not pay. Both sides of the TCP ping-pong poll, as the
  // probe's ranks do (ReceiveByte): with blocking recv() the TCP minimum
  // read 9-26 us on one machine and half of it beat the probe's 7-10 us.
  //
  // Up to three probes, each judged alone, the first that passes counts (as
  // the acceptance test's rate): anything else the machine runs can only
  // make a probe slower, never faster than the link, so a probe that passes
  // once shows the fit is right, and one that never does shows it is not.
  // Once, on a CI machine, a single probe read alpha 578 us at 100 Mbit/s
  // (TCP 7.5 us at the same time) and B 0.65 of 1 Gbit/s, and the same
  // suite passed on every other run; every attempt is printed.
  void ExpectAlphaIsTheLinksLatency(double bandwidth_bits_per_s) {
    ReshapeCluster(state_, {"", bandwidth_bits_per_s, 0}, *runner_);
    LinkProbeOptions options;
    options.probe_binary = fs::path(DMLBENCH_TRAINER).parent_path() / "dmlbench-linkprobe";
    options.mpirun = DMLBENCH_MPIRUN;
    options.max_seconds_per_size = 0.25;
    std::string attempts;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const LinkProbeResult probe = ProbeLinks(state_, options);
      const OneWay tcp = TcpOneWay(state_.hosts[0].name, state_.hosts[1].name, state_.hosts[1].address);
      char context[200];
      std::snprintf(context, sizeof context,
                    "%s links, %g cores per host (0 = all): probe alpha %.1f us, B %.1f MB/s; "
                    "TCP one-way median %.1f us, minimum %.1f us",
                    ProfileLabel(state_.network).c_str(), state_.cpu_cores, probe.fit.alpha_s * 1e6,
                    probe.fit.bandwidth_bytes_per_s / 1e6, tcp.median_s * 1e6, tcp.min_s * 1e6);
      std::printf("%s\n", context);
      attempts += std::string("\n  ") + context;
      // B still comes from the large messages, also while a rank under a
      // quota sleeps between polls (the acceptance test holds uncapped
      // hosts to 10%).
      const bool rate_ok = bandwidth_bits_per_s == 0 ||
                           std::abs(probe.fit.bandwidth_bytes_per_s * 8 / bandwidth_bits_per_s - 1.0) <= 0.2;
      if (probe.fit.alpha_s <= 3 * tcp.median_s + 50e-6 && probe.fit.alpha_s >= tcp.min_s / 2 && rate_ok) return;
    }
    ADD_FAILURE() << "no probe of three measured the link: alpha within [TCP minimum / 2, 3 x TCP median + 50 us]"
                  << (bandwidth_bits_per_s > 0 ? " and B within 20 % of the configured rate" : "") << attempts;
  }

  std::string name_;
  fs::path work_;
  std::unique_ptr<CommandRunner> runner_;
  ClusterState state_;
};

TEST_F(ClusterAlpha, ProbeAlphaMatchesTcpLatencyOnUncappedHosts) {
  Up('u', 0);
  for (const double rate : {0.0, 1e9, 100e6}) ExpectAlphaIsTheLinksLatency(rate);
}

TEST_F(ClusterAlpha, ProbeAlphaMatchesTcpLatencyUnderACpuQuota) {
  Up('q', 0.4);
  for (const double rate : {0.0, 1e9, 100e6}) ExpectAlphaIsTheLinksLatency(rate);
}

TEST(ClusterAlphaFit, SmallMessagesThatRodeTheBucketAreNotChargedAtB) {
  // Probed at 10 Mbit/s (B = 1.195 MB/s): up to 256 B every size took
  // 16-18 us, far less than m/B (214 us for 256 B). Charging every size up
  // to 1 KiB at B made alpha -10 us.
  const std::vector<ProbePoint> points = {
      {1, 18.0e-6, 10},       {2, 16.7e-6, 10},       {4, 16.5e-6, 10},       {8, 17.5e-6, 10},
      {16, 17.6e-6, 10},      {32, 16.8e-6, 10},      {64, 17.0e-6, 10},      {128, 15.9e-6, 10},
      {256, 17.5e-6, 10},     {512, 29.3e-6, 10},     {1024, 445.2e-6, 10},   {2048, 951.3e-6, 10},
      {4096, 1.650e-3, 10},   {8192, 3.479e-3, 10},   {16384, 7.034e-3, 10},  {32768, 14.45e-3, 10},
      {65536, 42.02e-3, 5},   {131072, 96.77e-3, 3},  {262144, 206.5e-3, 3},  {524288, 425.8e-3, 3},
      {1048576, 866.3e-3, 3}, {2097152, 1.7443, 3},   {4194304, 3.4957, 3}};
  const LinkFit fit = FitLink(points);
  EXPECT_NEAR(fit.bandwidth_bytes_per_s / 1.195e6, 1, 0.01);
  // The smallest messages bound alpha: at most their own time, and no more
  // than a few of their m/B below it.
  EXPECT_GT(fit.alpha_s, 12e-6);
  EXPECT_LT(fit.alpha_s, 18e-6);
}

}  // namespace
}  // namespace dmlbench
