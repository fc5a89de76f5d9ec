// Links: the emulated cluster's network. One bridge in this namespace holds
// the head node's address; every host is a veth pair (bridge side here, eth0
// inside the host's namespace) shaped by tc on BOTH ends: eth0 shapes the
// host's upload, the bridge side its download, so that incast into one host
// queues as it would at a real NIC. Also the private /24 the links use and the
// profile units (tc's). Does not create namespaces (netns.h). Stateless.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINKS_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/launch/cluster/netns.h"
#include "orchestrator/core/run_spec.h"

namespace dmlbench {

// "1gbit", "100mbit", "500kbit", "2000000bit" (tc's units, powers of 1000)
// -> bits per second. Throws ClusterError naming the expected form.
double ParseBandwidth(const std::string& text);
// "0.1ms", "100us", "1s", "0" -> seconds. Throws ClusterError.
double ParseLatency(const std::string& text);
// Inverse forms for names and messages: "1gbit", "100mbit", "0.1ms", "0s".
std::string FormatBandwidth(double bits_per_s);
std::string FormatLatency(double seconds);
// A profile's name, or "<bandwidth>-<latency>" ("unshaped" for no shaping)
// when it has none.
std::string ProfileLabel(const NetworkProfile& profile);

// An IPv4 /24: 10.199.N.0/24 and friends.
struct Subnet {
  std::uint32_t network = 0;   // host byte order, last octet 0

  std::string Cidr() const;                          // "10.199.7.0/24"
  std::string Address(int last_octet) const;         // "10.199.7.11"
};

// The first candidate /24 (10.199.0.0/24 .. 10.199.255.0/24, starting at
// index `first` and wrapping) that overlaps no address of `ip -o addr` output
// and no destination of `ip route` output. Throws ClusterError when all do.
Subnet ChooseSubnet(const std::string& ip_addr_output, const std::string& ip_route_output,
                    int first);

// The tc commands that make `device` (inside `netns`, or here when empty)
// send at the profile's rate with its delay: the old root qdisc is replaced;
// an unshaped profile leaves the default qdisc. The first command is the
// delete, whose failure (nothing to delete) is expected.
//
// When `now` is the shaping the device has and both it and `profile` are a
// token bucket alone (a rate, no delay), the one command is a `qdisc replace`
// of the bucket in place: no delete, no moment unshaped, and one process
// instead of two (a cluster-wide reshape of 11 hosts 0.43 -> 0.27 s;
// bench/README.md, bench_link_reshape).
std::vector<std::vector<std::string>> ShapeCommands(const std::string& device,
                                                    const std::string& netns,
                                                    const NetworkProfile& profile,
                                                    const std::optional<NetworkProfile>& now = std::nullopt);

// Creates bridge `name` holding `subnet`'s .1 address, up.
void AddBridge(CommandRunner& runner, const std::string& name, const Subnet& subnet);
// Creates the veth pair `veth` (here, enslaved to `bridge`) / eth0 (inside
// `netns`, holding `address`/24), both up.
void AddHostLink(CommandRunner& runner, const std::string& bridge, const std::string& veth,
                 const std::string& netns, const std::string& address);
// The TCP congestion control of every connection a host opens on its link,
// whatever this machine's default (net.ipv4.tcp_congestion_control) is.
inline constexpr const char kHostCongestionControl[] = "cubic";
// The command that replaces the route of `subnet` ("10.199.7.0/24") inside
// `netns`, which `address` added on eth0, by the same route with congctl
// kHostCongestionControl.
std::vector<std::string> CongestionControlCommand(const std::string& netns, const std::string& subnet,
                                                  const std::string& address);
// Runs CongestionControlCommand; throws ClusterError naming the algorithm when
// the kernel refuses it.
void PinCongestionControl(CommandRunner& runner, const std::string& netns, const std::string& subnet,
                          const std::string& address);
// Shapes both ends of a host's link to `profile`; `now`, when known, is the
// shaping they have (ShapeCommands).
void ShapeHostLink(CommandRunner& runner, const std::string& veth, const std::string& netns,
                   const NetworkProfile& profile, const std::optional<NetworkProfile>& now = std::nullopt);
// Links of this namespace whose name starts with `prefix`.
std::vector<std::string> ListLinks(CommandRunner& runner, const std::string& prefix);
// Deletes a link of this namespace (a veth pair goes with both ends); a link
// that does not exist is not an error.
void DeleteLink(CommandRunner& runner, const std::string& name);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_CLUSTER_LINKS_H_
