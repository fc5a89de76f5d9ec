// CorrectedTerms: the corrected model's equation (DESIGN.md section 1) —
// from its coefficients, a configuration and its link, one iteration's time
// and its parts. The counts the coefficients multiply come from the
// protocols (physics.h); the coefficients are fitted by corrected.h.
// Pure; thread-safe.
//
// Per iteration, every term in seconds:
//
//   iteration = ( path^p + (worker_cpu / (q s))^p + (server_cpu / (q s))^p )^(1/p)
//
// s is a host's CPU share in cores (1 when uncapped, at most 1: a rank runs
// on one core) and q the part of it a capped rank gets. The critical path
// at full CPU speed and each rank's CPU work stretched by its quota each
// bound the iteration; the p-norm combines them: p -> infinity is the
// larger (one hides the other completely), p = 1 their sum (nothing
// overlaps). Under a quota of 0.15 core a rank works in bursts of 1.5 ms per
// 10 ms period while the wire runs on, so the two overlap in part; p says
// how much, fitted.
//
//   path       = compute + wire_factor[a] (wire - early)
//   wire       = latency_steps alpha + paced_bytes / B       (busiest link; physics.h)
//   early      = first_peer_share[profile] min(early_reply_bytes / B,
//                    max(0, early_window_bytes / B - compute))
//   link_bytes = where both links of a transfer are shared (ps with w > 1
//                and k > 1, p2p with w > 2): (sender_link^r + receiver_link^r)^(1/r);
//                otherwise the busiest link's bytes (physics.h)
//   paced_bytes = link_bytes - link_bursts LinkBurstBytes     (shaped links: the token
//                 bucket passes a burst at once to each transfer that starts on
//                 an idle direction; core/run_spec.h)
//   compute    = cpu_overhead_s + cpu_per_sample_s b
//   worker_cpu = compute + cpu_per_byte_s worker_cpu_bytes + cpu_per_message_s worker_cpu_messages
//                + cpu_per_wait_s worker_cpu_waits + network + cpu_while_waiting (path - compute)
//   server_cpu = cpu_per_byte_s server_cpu_bytes + cpu_per_message_s server_cpu_messages
//                + cpu_per_wait_s server_cpu_waits + network + cpu_while_waiting path   (ps)
//   network    = cpu_per_network_byte_s[profile] network_bytes / ranks  (every rank the same)
//
// The counts are per iteration over every bucket (overlap) and part
// (partition_bytes), each an exchange with its own messages (physics.h
// Buckets and Traffic); a ps bucket goes only to the servers whose shard it
// touches.
//
// With overlap, `path` keeps only the exposed part of the wire (buckets
// sent while backward runs). Coefficients:
//   cpu_overhead_s     CPU s per iteration whatever the batch (update, bookkeeping)
//   cpu_per_sample_s   CPU s for forward + backward of one sample
//   cpu_per_byte_s     CPU s per byte through a rank's network stack (sent,
//                      received or summed)
//   cpu_per_network_byte_s  CPU s per byte the job's links carry (physics.h
//                      network_bytes), shared by its ranks alike: on the
//                      emulated cluster the kernel's deferred network work
//                      (the links' token buckets, bridge and veths, each
//                      host's TCP receive) runs on whichever rank happens to
//                      be on a CPU, and this kernel charges it to that rank
//                      (no IRQ time accounting; DESIGN.md section 4).
//                      Profiled, it was 32-41 % of a waiting ring rank's CPU
//                      (bench/cluster/profile_cluster_rank.sh; docs/findings.md,
//                      "Where a waiting rank's CPU goes").
//                      cpu_per_byte_s stays for a rank's own work on its
//                      bytes (copies, sums); where every rank's own bytes
//                      are in proportion to the job's (ring, p2p, mpi) the
//                      two trade off, and ps, whose worker sends 2 W
//                      whatever w, tells them apart.
//                      One per link profile: where the link is slow every
//                      packet waits in its token bucket and leaves on a
//                      timer interrupt of its own, so a byte costs more CPU
//                      (profiled: 7.9 ns per byte at 100 Mbit/s, a ring
//                      rank, against 0.33 at 1 Gbit/s, a ps(4) worker). A
//                      profile never calibrated takes the one of the
//                      nearest rate (an unshaped link counts as the fastest).
//   cpu_per_message_s  CPU s per message sent or received
//   cpu_while_waiting  CPU s per s a rank waits on the wire: a waiting
//                      rank's poll wakes at least every 100 us
//                      (trainer/poll.h), and each wake-up costs its switch
//                      back onto the CPU and a pass of the progress engine
//                      (profiled: the sleep and the switch back were 29-40 %
//                      of a waiting ring rank's CPU, docs/findings.md,
//                      "Where a waiting rank's CPU goes").
//                      The time is the wire's on the path (path - compute;
//                      a server waits all of it), not the iteration's: a
//                      rank its quota has stopped does not poll.
//   cpu_per_wait_s     CPU s per wait a rank sleeps through (physics.h: a
//                      worker's dependent steps, a server's exchanges): each
//                      costs its wake-ups and polls of the progress engine,
//                      whatever the messages and bytes. Ring and p2p at
//                      1 Gbit/s move the same bytes in the same number of
//                      messages, yet ring's busiest rank used 0.13 ms more
//                      CPU per iteration at 4 workers (6 steps against 2)
//                      and 0.38 ms more at 7 (12 against 2).
//   quota_efficiency   q: CPU s a capped, CPU-bound rank gets per wall s, over s
//   combine_exponent   p, above
//   link_balance_exponent  r: every transfer crosses two links in
//                      series, its sender's and its receiver's. When one
//                      carries clearly more, it paces the exchange and the
//                      other keeps up; when both carry about the same and
//                      each is shared by several flows, neither stays busy
//                      throughout (the flows' rates swing at both ends, or
//                      a server's answer overlaps the worker's next push
//                      less as more workers must arrive first), so the
//                      exchange takes longer than either link's bytes; on
//                      uncapped hosts too (docs/history/committed-study.md,
//                      "What the study says"). ps with 4 servers at 100 Mbit/s is slowest
//                      where a worker's link (W out to k servers, then in)
//                      and a server's (w W / k in, then out) carry the same
//                      (w = k).
//                      p2p, whose every worker sends w - 1 shards and
//                      receives w - 1, took 0.36 s per epoch and 2(w-1)/w W
//                      per iteration at 2 workers (one flow each way) and
//                      0.40-0.46 s per the same bytes at 3-7. Ring (one
//                      neighbour each way) and MPI's pairwise steps have
//                      one flow at an end; a single flow is paced by the
//                      other end and pays nothing. r -> infinity: the
//                      larger link alone.
//   wire_factor[a]     per scheme a (SchemeLabel: "ps k=2", and a single
//                      server's pulls in turn apart from those at once),
//                      the wire's wall time over the probe's alpha-B time
//                      of the busiest link: how well the pattern uses the
//                      link (a ps server's pulls overlap the next pushes in
//                      part; p2p receivers are shared by w - 1 senders); 1
//                      for a scheme never calibrated. Pulls at once share
//                      the server's link unequally (one worker has its
//                      model after 2.8-5.9 ms, the others after 12.5-14.2 ms
//                      at 4 W/B = 13.9 ms, and pushes while they still
//                      pull), so ps k=1's factor is that schedule's, and
//                      pulls in turn, one flow at a time, do not inherit it.
//   first_peer_share   per link profile, of one message's time, 0 to 1:
//                      where one host sends the whole gradient to several
//                      at once and each answers it (a single server's pulls
//                      at once, the binomial tree's root at 3 workers;
//                      physics.h early_reply_bytes), TCP does not share the
//                      sender's link equally. The peer served first has its
//                      message early (3 workers at 1 Gbit/s: 1.9 ms before
//                      the other peer at MPI's root, 3.7 ms before the next
//                      worker at a server; W/B = 3.5 ms;
//                      bench/analysis/timeline_arrivals.py), computes and sends its
//                      answer while the others are still served, so that
//                      much of its answer leaves the path: at most one
//                      message, and no more than the others' sends leave
//                      after its compute.
// alpha and B come from the link probe, never from the runs.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_TERMS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_TERMS_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "orchestrator/model/fitting.h"
#include "orchestrator/model/physics.h"

namespace dmlbench {

// The coefficients above, by value.
struct CorrectedCoefficients {
  double overhead = 0, per_sample = 0, per_byte = 0, per_message = 0, per_wait = 0;
  double while_waiting = 0;
  double quota = 1, exponent = 2, balance_exponent = 2, forward_share = 0.5;
  std::map<std::string, double> wire_factor;  // by SchemeLabel; missing: 1
  // cpu_per_network_byte_s by ProfileScope: {link rate in bits/s (0 =
  // unshaped), value}; see PerNetworkByte.
  std::map<std::string, std::pair<double, double>> per_network_byte;
  std::map<std::string, std::pair<double, double>> first_peer_share;  // the same way, per profile
  double WireFactor(const ModelConfig& config) const;
  // The profile's own; for a rate never calibrated, that of the nearest
  // calibrated rate in ratio (an unshaped link counts as 1 Pbit/s, faster
  // than any; ties go to the faster).
  double PerNetworkByte(const ModelConfig& config) const { return ByProfile(per_network_byte, config); }
  double FirstPeerShare(const ModelConfig& config) const { return ByProfile(first_peer_share, config); }
  static double ByProfile(const std::map<std::string, std::pair<double, double>>& values, const ModelConfig& config);
};

// One configuration's iteration and its parts.
struct CorrectedTerms {
  double iteration = 0, compute = 0, path = 0, capped = 0, hidden = 0;
  double worker_cpu = 0, server_cpu = 0;  // CPU s per iteration, before the quota stretches them
  std::string_view limited_by;            // the largest of path, worker_cpu / share, server_cpu / share
};

// The equation above for `config`, whose gradient is `gradient_bytes`, on
// `link`. `overlap_model`: the exchange of a configuration with overlap runs
// behind backward (corrected+overlap); otherwise it is all on the path.
CorrectedTerms Evaluate(const CorrectedCoefficients& k, const ModelConfig& config, double gradient_bytes,
                        const LinkParameters& link, bool overlap_model);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_CORRECTED_TERMS_H_
