#include "orchestrator/model/corrected_terms.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "orchestrator/core/run_spec.h"

namespace dmlbench {
namespace {

// Bytes of the busiest link in sequence: where a transfer's two links are
// both shared by several flows, the r-norm of the two
// (link_balance_exponent).
double LinkBytes(const IterationTraffic& t, double balance_exponent) {
  if (!t.ends_shared) return t.link_bytes;
  const double r = balance_exponent;
  return std::pow(std::pow(t.sender_link_bytes, r) + std::pow(t.receiver_link_bytes, r), 1 / r);
}

// Of those, the bytes that wait for the link's rate: on a shaped link the
// token bucket passes a burst at once to each transfer that starts on an
// idle direction.
double PacedLinkBytes(const ModelConfig& config, const IterationTraffic& t, double balance_exponent) {
  const double bytes = LinkBytes(t, balance_exponent);
  if (config.network.bandwidth_bits_per_s <= 0) return bytes;
  return PacedBytes(bytes, t.link_bursts, config.network.bandwidth_bits_per_s);
}

// The wire's alpha-B time of one iteration on the busiest link (s).
double WireS(const ModelConfig& config, const IterationTraffic& t, const LinkParameters& link,
             double balance_exponent) {
  return t.latency_steps * link.alpha_s + PacedLinkBytes(config, t, balance_exponent) / link.bytes_per_s;
}

// The exchange with overlap: buckets go out as their layers' gradients are
// ready, one after another; exchange j starts at max(ready_j, end of j-1).
// What ends after backward is exposed; the rest was hidden. Returns
// {exposed, hidden} wire time.
std::pair<double, double> OverlappedExchange(const ModelConfig& config, double gradient_bytes,
                                             const LinkParameters& link, double wire_factor,
                                             double balance_exponent, double backward_s) {
  const IterationTraffic t = Traffic(config, gradient_bytes);
  const double fixed = t.latency_steps * link.alpha_s;
  const double proportional = wire_factor * PacedLinkBytes(config, t, balance_exponent) / link.bytes_per_s;
  double end = 0, total = 0;
  for (const GradientBucket& bucket : Buckets(config)) {
    const double comm = fixed + proportional * bucket.bytes / gradient_bytes;
    end = std::max(end, bucket.ready_fraction * backward_s) + comm;
    total += comm;
  }
  const double exposed = std::max(0.0, end - backward_s);
  return {exposed, total - exposed};
}

}  // namespace

double CorrectedCoefficients::WireFactor(const ModelConfig& config) const {
  const auto it = wire_factor.find(SchemeLabel(config));
  return it == wire_factor.end() ? 1.0 : it->second;
}

double CorrectedCoefficients::ByProfile(const std::map<std::string, std::pair<double, double>>& values,
                                        const ModelConfig& config) {
  const auto own = values.find(ProfileScope(config.network.bandwidth_bits_per_s, config.network.latency_s));
  if (own != values.end()) return own->second.second;
  auto order = [](double bits) { return std::log(bits > 0 ? bits : 1e15); };
  const double want = order(config.network.bandwidth_bits_per_s);
  double best = 0, best_order = 0, distance = std::numeric_limits<double>::infinity();
  for (const auto& [scope, profile] : values) {
    const double have = order(profile.first), d = std::abs(have - want);
    if (d < distance || (d == distance && have > best_order)) best = profile.second, best_order = have, distance = d;
  }
  return best;
}

CorrectedTerms Evaluate(const CorrectedCoefficients& k, const ModelConfig& config, double gradient_bytes,
                        const LinkParameters& link, bool overlap_model) {
  const IterationTraffic t = Traffic(config, gradient_bytes);
  const double share = CpuShare(config) < 1 ? k.quota * CpuShare(config) : 1.0;
  const double factor = k.WireFactor(config);
  CorrectedTerms terms;
  terms.compute = k.overhead + k.per_sample * config.batch_size;
  double wire = factor * WireS(config, t, link, k.balance_exponent);
  if (t.early_reply_bytes > 0) {
    const double window = std::max(0.0, t.early_window_bytes / link.bytes_per_s - terms.compute);
    wire -= factor * k.FirstPeerShare(config) * std::min(t.early_reply_bytes / link.bytes_per_s, window);
  }
  if (overlap_model && config.overlap) {
    const auto [exposed, hidden] = OverlappedExchange(config, gradient_bytes, link, factor, k.balance_exponent,
                                                      (1 - k.forward_share) * terms.compute);
    wire = exposed;
    terms.hidden = hidden;
  }
  terms.path = terms.compute + wire;
  // The counts are per iteration over every bucket and part (physics.h
  // Traffic). A worker polls every bucket in flight at once, between its
  // layers and after backward, so buckets share its wake-ups: a wait is
  // counted once per dependent step, not once per step of each bucket.
  // Each rank also pays its share of the kernel's work on the job's traffic.
  const double network = k.PerNetworkByte(config) * t.network_bytes / t.ranks;
  const double worker = terms.compute + k.per_byte * t.worker_cpu_bytes + k.per_message * t.worker_cpu_messages +
                        k.per_wait * t.worker_cpu_waits + network + k.while_waiting * (terms.path - terms.compute);
  const double server = k.per_byte * t.server_cpu_bytes + k.per_message * t.server_cpu_messages +
                        k.per_wait * t.server_cpu_waits + network + k.while_waiting * terms.path;
  // The p-norm, scaled by its largest term: a large p on terms of a
  // millisecond would otherwise underflow every power to 0 and make the
  // iteration 0 s.
  const double p = k.exponent;
  const bool ps = config.architecture == Architecture::kPs;
  const double largest = std::max({terms.path, worker / share, ps ? server / share : 0.0});
  double sum = std::pow(terms.path / largest, p) + std::pow(worker / share / largest, p);
  if (ps) sum += std::pow(server / share / largest, p);
  terms.capped = std::max(worker, server) / share;
  terms.iteration = largest * std::pow(sum, 1 / p);
  terms.worker_cpu = worker;
  terms.server_cpu = ps ? server : 0;
  const double longest = std::max({terms.path, worker / share, terms.server_cpu / share});
  terms.limited_by = longest == terms.path ? "path" : longest == worker / share ? "worker CPU" : "server CPU";
  return terms;
}

}  // namespace dmlbench
