#include "orchestrator/launch/cluster/links.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dmlbench {
namespace {

// Queue in front of the bucket: deep enough to hold what every TCP flow into
// a host can have in flight at once, so that incast (p2p's all-to-all, a
// parameter server's w pushes) queues and shares the link instead of losing
// packets. With 20 ms of queue, 7 p2p workers at 100 Mbit/s dropped about
// 4,000 packets per receiver in three runs, and each loss cost a 200 ms
// retransmission timeout: epochs took 2.2x longer and varied by 5%; with this
// queue nothing was dropped and three runs agreed within 1% (DESIGN.md
// section 4). At least kQueueSeconds at the rate, at least kMinQueueBytes
// (a few sockets' full send buffers).
constexpr double kQueueSeconds = 0.2;
constexpr double kMinQueueBytes = 16 * 1024 * 1024;

// Splits "12.5mbit" into 12.5 and "mbit"; false if there is no number.
bool SplitNumber(const std::string& text, double& value, std::string& unit) {
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || std::isnan(value) || std::isinf(value)) {
    return false;
  }
  unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return true;
}

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

bool ParseIpv4(const std::string& text, std::uint32_t& address) {
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(text.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4) return false;
  if (a > 255 || b > 255 || c > 255 || d > 255) return false;
  address = (a << 24) | (b << 16) | (c << 8) | d;
  return true;
}

struct Prefix {
  std::uint32_t address;
  int length;
};

// "10.0.0.0/8" or "10.1.2.3" (a /32); false for anything else ("default").
bool ParsePrefix(const std::string& text, Prefix& prefix) {
  const std::size_t slash = text.find('/');
  prefix.length = 32;
  if (slash != std::string::npos) {
    try {
      prefix.length = std::stoi(text.substr(slash + 1));
    } catch (const std::exception&) {
      return false;
    }
    if (prefix.length < 0 || prefix.length > 32) return false;
  }
  return ParseIpv4(text.substr(0, slash), prefix.address);
}

bool Overlaps(const Prefix& a, const Prefix& b) {
  const int length = std::min(a.length, b.length);
  const std::uint32_t mask = length == 0 ? 0 : ~std::uint32_t{0} << (32 - length);
  return (a.address & mask) == (b.address & mask);
}

std::vector<Prefix> PrefixesInUse(const std::string& ip_addr_output, const std::string& ip_route_output) {
  std::vector<Prefix> used;
  std::istringstream addr_lines(ip_addr_output);
  std::string line;
  while (std::getline(addr_lines, line)) {
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      Prefix prefix;
      if (word == "inet" && words >> word && ParsePrefix(word, prefix)) used.push_back(prefix);
    }
  }
  static const std::array<const char*, 10> kRouteTypes = {
      "unicast", "local", "broadcast", "multicast", "throw", "unreachable",
      "prohibit", "blackhole", "nat", "anycast"};
  std::istringstream route_lines(ip_route_output);
  while (std::getline(route_lines, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (std::find(kRouteTypes.begin(), kRouteTypes.end(), word) != kRouteTypes.end()) words >> word;
    // "default" is a /0 route through a gateway, not a network in use here.
    Prefix prefix;
    if (ParsePrefix(word, prefix)) used.push_back(prefix);
  }
  return used;
}

}  // namespace

double ParseBandwidth(const std::string& text) {
  double value = 0;
  std::string unit;
  const bool parsed = SplitNumber(text, value, unit);
  double scale = 0;
  if (unit == "bit") scale = 1;
  if (unit == "kbit") scale = 1e3;
  if (unit == "mbit") scale = 1e6;
  if (unit == "gbit") scale = 1e9;
  if (!parsed || scale == 0 || value * scale < 8000 || value * scale > 400e9) {
    throw ClusterError("bandwidth must be a number with unit bit, kbit, mbit or gbit "
                       "between 8kbit and 400gbit (e.g. 1gbit), got \"" + text + "\"");
  }
  return value * scale;
}

double ParseLatency(const std::string& text) {
  double value = 0;
  std::string unit;
  const bool parsed = SplitNumber(text, value, unit);
  double scale = -1;
  if (unit == "s") scale = 1;
  if (unit == "ms") scale = 1e-3;
  if (unit == "us") scale = 1e-6;
  if (unit.empty() && parsed && value == 0) scale = 0;
  if (!parsed || scale < 0 || value * scale > 10) {
    throw ClusterError("latency must be a number with unit s, ms or us of at most 10s "
                       "(e.g. 0.1ms), got \"" + text + "\"");
  }
  return value * scale;
}

std::string FormatBandwidth(double bits_per_s) {
  if (bits_per_s >= 1e9) return Number(bits_per_s / 1e9) + "gbit";
  if (bits_per_s >= 1e6) return Number(bits_per_s / 1e6) + "mbit";
  if (bits_per_s >= 1e3) return Number(bits_per_s / 1e3) + "kbit";
  return Number(bits_per_s) + "bit";
}

std::string FormatLatency(double seconds) {
  if (seconds == 0) return "0ms";
  if (seconds < 1e-3) return Number(seconds * 1e6) + "us";
  if (seconds < 1) return Number(seconds * 1e3) + "ms";
  return Number(seconds) + "s";
}

std::string ProfileLabel(const NetworkProfile& profile) {
  if (!profile.name.empty()) return profile.name;
  if (profile.bandwidth_bits_per_s == 0 && profile.latency_s == 0) return "unshaped";
  const std::string bandwidth =
      profile.bandwidth_bits_per_s == 0 ? "unlimited" : FormatBandwidth(profile.bandwidth_bits_per_s);
  return bandwidth + "-" + FormatLatency(profile.latency_s);
}

std::string Subnet::Cidr() const { return Address(0) + "/24"; }

std::string Subnet::Address(int last_octet) const {
  const std::uint32_t a = network | static_cast<std::uint32_t>(last_octet);
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

Subnet ChooseSubnet(const std::string& ip_addr_output, const std::string& ip_route_output, int first) {
  const std::vector<Prefix> used = PrefixesInUse(ip_addr_output, ip_route_output);
  for (int i = 0; i < 256; ++i) {
    const std::uint32_t third = static_cast<std::uint32_t>((first + i) % 256);
    const Prefix candidate{(10u << 24) | (199u << 16) | (third << 8), 24};
    const bool clash = std::any_of(used.begin(), used.end(),
                                   [&](const Prefix& p) { return Overlaps(p, candidate); });
    if (!clash) return Subnet{candidate.address};
  }
  throw ClusterError("no free /24 in 10.199.0.0/16: every one overlaps an address or route of this machine");
}

namespace {
// A token bucket alone at the root: a rate and no delay.
bool BucketAlone(const NetworkProfile& profile) {
  return profile.bandwidth_bits_per_s > 0 && profile.latency_s == 0;
}
}  // namespace

std::vector<std::vector<std::string>> ShapeCommands(const std::string& device, const std::string& netns,
                                                    const NetworkProfile& profile,
                                                    const std::optional<NetworkProfile>& now) {
  std::vector<std::string> tc = {"tc"};
  if (!netns.empty()) tc = {"tc", "-n", netns};
  auto command = [&](std::initializer_list<std::string> words) {
    std::vector<std::string> argv = tc;
    argv.insert(argv.end(), words);
    return argv;
  };
  const bool in_place = now && BucketAlone(*now) && BucketAlone(profile);
  std::vector<std::vector<std::string>> commands;
  if (!in_place) commands.push_back(command({"qdisc", "del", "dev", device, "root"}));
  std::string tbf_parent = "root";
  if (profile.latency_s > 0) {
    const std::string delay = Number(profile.latency_s * 1e6) + "us";
    commands.push_back(command({"qdisc", "add", "dev", device, "root", "handle", "1:", "netem",
                                "delay", delay, "limit", "100000"}));
    tbf_parent = "parent";
  }
  if (profile.bandwidth_bits_per_s > 0) {
    const double rate_bytes = profile.bandwidth_bits_per_s / 8;
    // tbf's bucket (LinkBurstBytes): at least one millisecond at the rate,
    // never below a few full-size frames (tbf splits larger GSO packets itself).
    const double burst = LinkBurstBytes(profile.bandwidth_bits_per_s);
    const double limit = std::max(rate_bytes * kQueueSeconds, kMinQueueBytes) + burst;
    std::vector<std::string> tbf = command({"qdisc", in_place ? "replace" : "add", "dev", device});
    if (tbf_parent == "root") {
      tbf.insert(tbf.end(), {"root", "handle", "10:"});
    } else {
      tbf.insert(tbf.end(), {"parent", "1:1", "handle", "10:"});
    }
    tbf.insert(tbf.end(), {"tbf", "rate", std::to_string(std::llround(profile.bandwidth_bits_per_s)) + "bit",
                           "burst", std::to_string(static_cast<long long>(burst)),
                           "limit", std::to_string(static_cast<long long>(limit))});
    commands.push_back(tbf);
  }
  return commands;
}

void AddBridge(CommandRunner& runner, const std::string& name, const Subnet& subnet) {
  RunChecked(runner, {"ip", "link", "add", name, "type", "bridge"});
  RunChecked(runner, {"ip", "addr", "add", subnet.Address(1) + "/24", "dev", name});
  RunChecked(runner, {"ip", "link", "set", name, "up"});
}

void AddHostLink(CommandRunner& runner, const std::string& bridge, const std::string& veth,
                 const std::string& netns, const std::string& address) {
  RunChecked(runner, {"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns});
  RunChecked(runner, {"ip", "link", "set", veth, "master", bridge, "up"});
  RunChecked(runner, {"ip", "-n", netns, "addr", "add", address + "/24", "dev", "eth0"});
  RunChecked(runner, {"ip", "-n", netns, "link", "set", "eth0", "up"});
}

// Why the hosts' TCP does not take this machine's default: with BBR (a
// common default) and no fq qdisc, TCP paces every packet itself at its
// estimate of the path's bandwidth, and between these hosts, which a CPU
// quota stops for most of every CFS period, that estimate fell to 16-50
// Mbit/s on 1 Gbit/s links. A message a little larger than one 64 KiB GSO
// packet (p2p and ring chunks of about 70 KB: 6 workers, hidden 128,32) then
// left in two packets, the second held back by the pacing of the first for up
// to 26 ms; every peer waited for it, and iterations stalled for 30-60 ms
// several times an epoch. With cubic TCP does not pace here: p2p at 6
// workers went from 3 stalls over 30 ms per run to 0 (medians of 6 runs) and
// from 14.0 to 11.6 ms per iteration. A route's congctl sets the algorithm for every socket that
// uses the route, without the sysctl a namespace may not be allowed to set.
std::vector<std::string> CongestionControlCommand(const std::string& netns, const std::string& subnet,
                                                  const std::string& address) {
  return {"ip", "-n", netns, "route", "replace", subnet, "dev", "eth0", "proto", "kernel",
          "scope", "link", "src", address, "congctl", kHostCongestionControl};
}

void PinCongestionControl(CommandRunner& runner, const std::string& netns, const std::string& subnet,
                          const std::string& address) {
  try {
    RunChecked(runner, CongestionControlCommand(netns, subnet, address));
  } catch (const ClusterError& e) {
    throw ClusterError(std::string("cannot make the hosts' TCP use congestion control ") +
                       kHostCongestionControl + " (this kernel needs tcp_" + kHostCongestionControl +
                       "): " + e.what());
  }
}

void ShapeHostLink(CommandRunner& runner, const std::string& veth, const std::string& netns,
                   const NetworkProfile& profile, const std::optional<NetworkProfile>& now) {
  for (const auto& [device, place] : {std::pair{veth, std::string()}, std::pair{std::string("eth0"), netns}}) {
    const auto commands = ShapeCommands(device, place, profile, now);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const CommandResult result = runner.Run(commands[i]);
      const bool del = std::find(commands[i].begin(), commands[i].end(), "del") != commands[i].end();
      if (del) continue;  // deleting a qdisc that is not there fails harmlessly
      if (result.exit_code == 0) continue;
      const bool netem = std::find(commands[i].begin(), commands[i].end(), "netem") != commands[i].end();
      if (netem && result.output.find("Specified qdisc kind is unknown") != std::string::npos) {
        throw ClusterError("cannot delay " + device + " by " + FormatLatency(profile.latency_s) +
                           ": this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM); use latency 0");
      }
      RunChecked(runner, commands[i]);  // fails again, with the command in the message
    }
  }
}

std::vector<std::string> ListLinks(CommandRunner& runner, const std::string& prefix) {
  std::istringstream lines(RunChecked(runner, {"ip", "-o", "link", "show"}));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(lines, line)) {
    // "6: dmlb-x-1@if2: <BROADCAST,..." -> "dmlb-x-1"
    const std::size_t start = line.find(": ");
    if (start == std::string::npos) continue;
    std::string name = line.substr(start + 2, line.find(':', start + 2) - start - 2);
    name = name.substr(0, name.find('@'));
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

void DeleteLink(CommandRunner& runner, const std::string& name) {
  auto present = [&] {
    const std::vector<std::string> links = ListLinks(runner, name);
    return std::find(links.begin(), links.end(), name) != links.end();
  };
  if (!present()) return;
  try {
    RunChecked(runner, {"ip", "link", "delete", name});
  } catch (const ClusterError&) {
    // A host end of a veth whose namespace was just deleted goes by itself,
    // in the kernel's own time: listed a moment ago, gone when deleted
    // ("Cannot find device"; a cluster test failed on it once). Gone is
    // what was asked.
    if (present()) throw;
  }
}

}  // namespace dmlbench
