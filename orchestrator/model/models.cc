#include "orchestrator/model/models.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "orchestrator/core/clock.h"
#include "orchestrator/core/link_text.h"
#include "orchestrator/core/run_spec.h"
#include "orchestrator/model/least_squares.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {

const ModelParameterRow* FindParameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope) {
  for (const ModelParameterRow& p : fit.parameters) {
    if (p.name == name && p.scope == scope) return &p;
  }
  return nullptr;
}

namespace {

constexpr char kAlpha[] = "alpha_s";
constexpr char kBandwidth[] = "bandwidth_bytes_per_s";
constexpr char kLinkEfficiency[] = "link_efficiency";

// ---- what every model shares ----------------------------------------------

ModelFitRecord NewFit(const PerformanceModel& model) {
  ModelFitRecord fit;
  fit.model = std::string(model.name());
  fit.model_version = model.version();
  fit.created_unix_s = UnixNow();
  return fit;
}

double Parameter(const ModelFitRecord& fit, std::string_view name, std::string_view scope = "") {
  const ModelParameterRow* p = FindParameter(fit, name, scope);
  if (p == nullptr) {
    throw ModelError("fit " + std::to_string(fit.fit_id) + " of " + fit.model + " has no parameter " +
                     std::string(name) + (scope.empty() ? "" : " for " + std::string(scope)));
  }
  return p->value;
}

ModelParameterRow Fitted(const Coefficient& c, std::string unit, std::string scope = "") {
  return ModelParameterRow{c.name, c.value, c.ci_low, c.ci_high, std::move(unit), "fitted", std::move(scope)};
}

// A parameter held at a value (FixedParameters): no interval.
ModelParameterRow Held(std::string name, double value, std::string unit, std::string scope = "") {
  return ModelParameterRow{std::move(name), value, std::nullopt, std::nullopt, std::move(unit), "fixed",
                           std::move(scope)};
}

// The key of a parameter in FixedParameters: "name" or "name scope".
std::string HeldKey(std::string_view name, std::string_view scope) {
  return scope.empty() ? std::string(name) : std::string(name) + " " + std::string(scope);
}

// Models fitted in closed form per group hold nothing at a value.
void RefuseFixed(const PerformanceModel& model, const FixedParameters& fixed) {
  if (fixed.empty()) return;
  throw ModelError(std::string(model.name()) + " holds no parameter at a value (--fix " + fixed.begin()->first +
                   "): only corrected and corrected+overlap do");
}

// Every probed link, as parameters of the fit (probe values, no CI), and the
// shaped links' measured/configured ratio for profiles never probed.
void AddLinks(const ModelData& data, ModelFitRecord& fit) {
  std::vector<double> efficiencies;
  for (const LinkObservation& link : data.links) {
    const std::string scope = ProfileScope(link.bandwidth_bits_per_s, link.latency_s);
    fit.parameters.push_back({kAlpha, link.alpha_s, std::nullopt, std::nullopt, "s", "probe", scope});
    fit.parameters.push_back({kBandwidth, link.bytes_per_s, std::nullopt, std::nullopt, "bytes/s", "probe", scope});
    fit.probe_ids.insert(fit.probe_ids.end(), link.probe_ids.begin(), link.probe_ids.end());
    if (link.bandwidth_bits_per_s > 0) efficiencies.push_back(link.bytes_per_s * 8 / link.bandwidth_bits_per_s);
  }
  if (!efficiencies.empty()) {
    fit.parameters.push_back(
        {kLinkEfficiency, Median(efficiencies), std::nullopt, std::nullopt, "1", "probe", ""});
  }
}

// Calibration runs whose link was probed; the others cannot be used.
std::vector<const RunObservation*> UsableRuns(const ModelData& data) {
  std::vector<const RunObservation*> runs;
  for (const RunObservation& run : data.runs) {
    if (run.split != "calibration") {
      throw ModelError("run " + run.run_key.substr(0, 12) + " is a " + run.split +
                       " run: a model is fitted on calibration runs only");
    }
    if (FindLink(data.links, run.config)) runs.push_back(&run);
  }
  if (runs.empty()) {
    throw ModelError("no calibration run with a probed link: fit needs complete calibration runs and "
                     "`dmlbench cluster probe` (or `inventory probe`) of their network profiles");
  }
  return runs;
}

// The configuration of a run with its measured model size.
double GradientBytes(const ModelConfig& config) { return 4.0 * static_cast<double>(ParameterCount(config)); }

Prediction Finish(const ModelConfig& config, double iteration_s, Prediction p) {
  p.iterations = IterationsPerEpoch(config);
  if (p.iterations < 1) throw ModelError(ConfigLabel(config) + ": less than one iteration per epoch");
  p.iteration_s = iteration_s;
  p.epoch_s = iteration_s * static_cast<double>(p.iterations);
  p.throughput_samples_per_s = static_cast<double>(p.iterations) * config.batch_size * config.workers / p.epoch_s;
  return p;
}

// ---- paper2019 -------------------------------------------------------------

// The paper's communication time of one epoch, counted once (its Eqs. 8-10,
// 16-17, 20), with B the probed link rate, bytes/s:
//   ps   availableB = (B / w) k; pull W / availableB + push (W / w) / availableB
//   p2p  availableB = B / (2 (w - 1)); (W / w) / availableB
//   ring 2 (w - 1) (W / w) / B     (mpi: the same; it is not in the paper)
double PaperCommunicationS(const ModelConfig& config, double gradient_bytes, double bytes_per_s) {
  const double w = config.workers, W = gradient_bytes;
  switch (config.architecture) {
    case Architecture::kPs: {
      const double available = bytes_per_s / w * config.servers;
      return W / available + (W / w) / available;
    }
    case Architecture::kP2p:
      if (config.workers == 1) return 0;
      return (W / w) / (bytes_per_s / (2 * (w - 1)));
    case Architecture::kRing:
    case Architecture::kMpi:
      return 2 * (w - 1) * (W / w) / bytes_per_s;
  }
  return 0;
}

class Paper2019 : public PerformanceModel {
 public:
  std::string_view name() const override { return "paper2019"; }
  int version() const override { return 1; }

  // T_processing per architecture: least squares of (epoch - comm) on the
  // iterations per epoch, over the calibration runs of that architecture.
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override {
    RefuseFixed(*this, fixed);
    ModelFitRecord fit = NewFit(*this);
    AddLinks(data, fit);
    std::map<std::string, std::vector<const RunObservation*>> groups;
    for (const RunObservation* run : UsableRuns(data)) groups[ArchitectureLabel(run->config)].push_back(run);
    double squares = 0;
    for (const auto& [scope, runs] : groups) {
      std::vector<std::vector<double>> rows;
      std::vector<double> y, comm;
      for (const RunObservation* run : runs) {
        const double b = LinkFor(fit, run->config).bytes_per_s;
        comm.push_back(PaperCommunicationS(run->config, 4.0 * run->parameters, b));
        rows.push_back({static_cast<double>(run->iterations_per_epoch)});
        y.push_back(run->epoch_s - comm.back());
      }
      const LeastSquaresFit processing = FitLeastSquares({"processing_s"}, rows, y);
      fit.parameters.push_back(Fitted(processing.coefficients[0], "s/iteration", scope));
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const double iterations = static_cast<double>(runs[i]->iterations_per_epoch);
        const double fitted = (processing.coefficients[0].value * iterations + comm[i]) / iterations;
        fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, fitted});
        squares += (fitted - runs[i]->iteration_s) * (fitted - runs[i]->iteration_s);
      }
      fit.points += static_cast<int>(runs.size());
    }
    fit.residual_rms_s = std::sqrt(squares / static_cast<double>(fit.runs.size()));
    return fit;
  }

  Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const override {
    const std::string scope = ArchitectureLabel(config);
    if (FindParameter(fit, "processing_s", scope) == nullptr) {
      throw ModelError("paper2019 has no processing time for " + scope + ": no calibration run of it");
    }
    const double processing = Parameter(fit, "processing_s", scope);
    const double comm_epoch = PaperCommunicationS(config, GradientBytes(config), LinkFor(fit, config).bytes_per_s);
    const double iterations = static_cast<double>(IterationsPerEpoch(config));
    Prediction p;
    p.compute_s = processing;
    p.comm_s = comm_epoch / iterations;
    return Finish(config, processing + p.comm_s, p);
  }
};

// ---- corrected and corrected+overlap ------------------------------------------

// The corrected model (DESIGN.md section 1), per iteration, every term in
// seconds:
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
//                    max(0, early_window_bytes / B - compute))   (version 19)
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
// touches (version 7; before, every bucket counted messages to all k).
//
// With overlap, `path` keeps only the exposed part of the wire
// (buckets sent while backward runs, OverlappedExchange). Coefficients:
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
//                      (no IRQ time accounting). Profiled, it was 32-41 % of
//                      a waiting ring rank's CPU (bench/profile_cluster_rank.sh,
//                      DESIGN.md section 4). cpu_per_byte_s stays for a
//                      rank's own work on its bytes (copies, sums); where
//                      every rank's own bytes are in proportion to the
//                      job's (ring, p2p, mpi) the two trade off, and ps,
//                      whose worker sends 2 W whatever w, tells them apart.
//                      One per link profile (version 13): where the link
//                      is slow every packet waits in its token bucket and
//                      leaves on a timer interrupt of its own, so a byte
//                      costs more CPU. Profiled: 7.9 ns per byte at
//                      100 Mbit/s (a ring rank) against 0.33 at 1 Gbit/s (a
//                      ps(4) worker); fitted on the study, 8.5 and 0.68 ns.
//                      A profile never calibrated takes the one of the
//                      nearest rate (an unshaped link counts as the fastest).
//                      Version 12: a ps(4) worker at its quota used 1.11 ms
//                      of CPU per iteration at 1 worker and 1.70 at 7 on
//                      the same own traffic.
//   cpu_per_message_s  CPU s per message sent or received
//   cpu_while_waiting  CPU s per s a rank waits on the wire (version 14):
//                      a waiting rank's poll wakes at least every 100 us
//                      (trainer/poll.h), and each wake-up costs its switch
//                      back onto the CPU and a pass of the progress engine
//                      (profiled: the sleep and the switch back were 29-40 %
//                      of a waiting ring rank's CPU, DESIGN.md section 4).
//                      The time is the wire's on the path (path - compute;
//                      a server waits all of it), not the iteration's: a
//                      rank its quota has stopped does not poll. Fitted
//                      0.025 on the committed study, 0.05 on the reruns;
//                      tried before as a fixed point over the iteration,
//                      which counts the stopped time too, the fit drove it
//                      to zero.
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
//                      uncapped hosts too (README Results).
//                      In the first study ps with 4 servers at 100 Mbit/s
//                      took 0.60 / 0.65 / 0.71 / 0.78 / 0.91 s per epoch at
//                      1-5 workers where the larger link's bytes are the
//                      same for 1-4: slowest where a worker's link (W out
//                      to k servers, then in) and a server's (w W / k in,
//                      then out) carry the same (w = k; with 2 servers, at
//                      2 workers). p2p, whose every worker sends w - 1
//                      shards and receives w - 1, took 0.36 s per epoch
//                      and 2(w-1)/w W per iteration at 2 workers (one flow
//                      each way) and 0.40-0.46 s per the same bytes at
//                      3-7. Ring (one neighbour each way) and MPI's
//                      pairwise steps have one flow at an end; a single
//                      flow is paced by the other end and pays nothing.
//                      r -> infinity: the larger link alone (version 8 and
//                      before; version 9 for ps, 10 for p2p too).
//   wire_factor[a]     per scheme a ("ps k=2": per number of servers; a
//                      single server's pulls in turn apart from those at
//                      once, version 17), the wire's wall time over the
//                      probe's alpha-B time of the busiest link: how well the
//                      pattern uses the link (a ps server's pulls overlap the
//                      next pushes in part; p2p receivers are shared by w - 1
//                      senders); 1 for a scheme never calibrated. Pulls at
//                      once share the server's link unequally: one worker
//                      has its model after 2.8-5.9 ms, the others after
//                      12.5-14.2 ms (4 W/B = 13.9 ms), and pushes while they
//                      still pull (README, Results: the timelines), so
//                      ps k=1's factor (0.96 up to version 18, 0.99 since
//                      `early` plays it) was that schedule's, and pulls
//                      in turn, one flow at a time, do not inherit it.
//   first_peer_share   per link profile (version 19), of one message's
//                      time, 0 to 1: where one host sends the whole gradient
//                      to several at once and each answers it (a single
//                      server's pulls at once, the binomial tree's root at
//                      3 workers; physics.h early_reply_bytes), TCP does
//                      not share the sender's link equally. The peer
//                      served first has its message early (3 workers at
//                      1 Gbit/s: 1.9 ms before the other peer at MPI's
//                      root, 3.7 ms before the next worker at a server;
//                      W/B = 3.5 ms; bench/timeline_arrivals.py), computes
//                      and sends its answer while the others are still
//                      served, so that much of its answer leaves the
//                      path: at most one message, and no more than the
//                      others' sends leave after its compute. Fitted as
//                      its logit: 0.55 at 1 Gbit/s on the committed study,
//                      0.03 (unresolved) at 100 Mbit/s, where the pulls
//                      show no such saving (DESIGN.md section 1).
// alpha and B come from the link probe, never from the runs.
//
// Fit, on calibration runs (corrected: those without overlap; corrected+
// overlap: every one, each with its own bucket schedule): (1) compute from the one-worker
// runs of ring, mpi and p2p, which exchange nothing: weighted least squares
// of their measured CPU time per iteration (the trainer reports each rank's,
// schema version 9) on b; (2) q, the median of measured CPU / (s x
// iteration) over the runs whose busiest rank used at least 3/4 of its
// share; (3) the rest by nonlinear least squares of the relative error of
// the iteration time over every run, each coefficient fitted as the
// logarithm of its value (p as log(p - 1)), so that none leaves its
// physical range, with a weak prior at its start (see Fit). Any of these
// can be held at a value instead (FixedParameters, `model fit --fix`): it
// is left out of its stage and the rest are fitted around it.
constexpr char kOverhead[] = "cpu_overhead_s";
constexpr char kPerSample[] = "cpu_per_sample_s";
constexpr char kQuotaEfficiency[] = "quota_efficiency";
constexpr char kForwardShare[] = "forward_share";
// Stage 3: name, unit, and the unit it is fitted in (so each is of order one).
struct StageThree {
  const char* name;
  const char* unit;
  double scale;
};
const std::vector<StageThree> kStageThree = {{"cpu_per_byte_s", "s/byte", 1e-9},
                                             {"cpu_per_message_s", "s/message", 1e-5},
                                             {"combine_exponent", "1", 1},
                                             {"cpu_per_wait_s", "s/wait", 1e-5},
                                             {"link_balance_exponent", "1", 1},
                                             {"cpu_while_waiting", "s/s", 0.05}};
constexpr std::size_t kExponentIndex = 2;  // fitted as log(p - 1)
constexpr std::size_t kPerWaitIndex = 3;
constexpr std::size_t kBalanceIndex = 4;   // fitted as log(r - 1)
constexpr std::size_t kWaitingIndex = 5;   // cpu_while_waiting
constexpr char kWireFactor[] = "wire_factor";
// Per link profile (scope: ProfileScope), fitted in ns/byte.
constexpr char kNetworkByte[] = "cpu_per_network_byte_s";
constexpr double kNetworkByteScale = 1e-9;
// Per link profile: of the first peer's reply, the share hidden under the
// sends to the others (physics.h early_reply_bytes), fitted as its logit.
constexpr char kFirstPeer[] = "first_peer_share";
// A run whose busiest rank burned at least this share of its quota is bound by it.
constexpr double kCpuBoundShare = 0.75;

double CpuShare(const ModelConfig& config) {
  return config.cpu_cores > 0 ? std::min(config.cpu_cores, 1.0) : 1.0;
}

// Bytes of the busiest link in sequence: where a transfer's two links are
// both shared by several flows, the r-norm of the two
// (link_balance_exponent above).
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
  if (config.bandwidth_bits_per_s <= 0) return bytes;
  return PacedBytes(bytes, t.link_bursts, config.bandwidth_bits_per_s);
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
  for (const Bucket& bucket : Buckets(config)) {
    const double comm = fixed + proportional * bucket.bytes / gradient_bytes;
    end = std::max(end, bucket.ready_fraction * backward_s) + comm;
    total += comm;
  }
  const double exposed = std::max(0.0, end - backward_s);
  return {exposed, total - exposed};
}

struct CorrectedCoefficients {
  double overhead = 0, per_sample = 0, per_byte = 0, per_message = 0, per_wait = 0;
  double while_waiting = 0;
  double quota = 1, exponent = 2, balance_exponent = 2, forward_share = 0.5;
  std::map<std::string, double> wire_factor;  // by SchemeLabel; missing: 1
  // cpu_per_network_byte_s by ProfileScope: {link rate in bits/s (0 =
  // unshaped), value}; see PerNetworkByte.
  std::map<std::string, std::pair<double, double>> per_network_byte;
  std::map<std::string, std::pair<double, double>> first_peer_share;  // the same way, per profile
  double WireFactor(const ModelConfig& config) const {
    const auto it = wire_factor.find(SchemeLabel(config));
    return it == wire_factor.end() ? 1.0 : it->second;
  }
  // The profile's own; for a rate never calibrated, that of the nearest
  // calibrated rate in ratio (an unshaped link counts as 1 Pbit/s, faster
  // than any; ties go to the faster).
  double PerNetworkByte(const ModelConfig& config) const { return ByProfile(per_network_byte, config); }
  double FirstPeerShare(const ModelConfig& config) const { return ByProfile(first_peer_share, config); }
  static double ByProfile(const std::map<std::string, std::pair<double, double>>& values, const ModelConfig& config) {
    const auto own = values.find(ProfileScope(config.bandwidth_bits_per_s, config.latency_s));
    if (own != values.end()) return own->second.second;
    auto order = [](double bits) { return std::log(bits > 0 ? bits : 1e15); };
    const double want = order(config.bandwidth_bits_per_s);
    double best = 0, best_order = 0, distance = std::numeric_limits<double>::infinity();
    for (const auto& [scope, profile] : values) {
      const double have = order(profile.first), d = std::abs(have - want);
      if (d < distance || (d == distance && have > best_order)) best = profile.second, best_order = have, distance = d;
    }
    return best;
  }
};

// One configuration's iteration and its parts.
struct CorrectedTerms {
  double iteration = 0, compute = 0, path = 0, capped = 0, hidden = 0;
  double worker_cpu = 0, server_cpu = 0;  // CPU s per iteration, before the quota stretches them
  std::string_view limited_by;            // the largest of path, worker_cpu / share, server_cpu / share
};

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
  // layers and after backward, so buckets share its wake-ups (counting a
  // wait per step of each bucket predicted ring with overlap, 4 workers,
  // 5 buckets, 45 % too slow; once, 1 % too slow).
  // Each rank also pays its share of the kernel's work on the job's traffic.
  const double network = k.PerNetworkByte(config) * t.network_bytes / t.ranks;
  const double worker = terms.compute + k.per_byte * t.worker_cpu_bytes + k.per_message * t.worker_cpu_messages +
                        k.per_wait * t.worker_cpu_waits + network + k.while_waiting * (terms.path - terms.compute);
  const double server = k.per_byte * t.server_cpu_bytes + k.per_message * t.server_cpu_messages +
                        k.per_wait * t.server_cpu_waits + network + k.while_waiting * terms.path;
  // The p-norm, scaled by its largest term: a large p on terms of a
  // millisecond would underflow every power to 0 (p = 118, fitted on a
  // sweep with one compute configuration left out, made an iteration 0 s).
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

class CorrectedModel : public PerformanceModel {
 public:
  explicit CorrectedModel(bool overlap) : overlap_(overlap) {}
  std::string_view name() const override { return overlap_ ? "corrected+overlap" : "corrected"; }
  // 3: the p-norm of path and quota-stretched CPU; 4: overlap buckets
  // follow the trainer's row blocks, and a parameter server's push and
  // pull pipeline over them; 5: a CPU cost per wait; 6: the shaped links'
  // token-bucket burst, and a server wakes once per exchange; 7: a ps
  // bucket goes only to the servers whose shard it touches; 8: a ps
  // server's pushes and pulls pipeline over the buckets it takes part in;
  // 9: a parameter server's two links in series, as an r-norm where both
  // are shared; 10: p2p's too; 11: a ps pipeline over buckets of unequal
  // size holds up the largest, not 1/n of the bytes; 12: every rank pays a
  // share of the kernel's work on the whole job's traffic; 13: that work's
  // cost per byte is the link profile's own; 14: a rank's polls cost CPU
  // for as long as it waits on the wire; 15: MPI's folded allreduce (5-7
  // ranks) keeps its schedule's bytes played over the links, not its
  // phases one after another (physics.h, link_simulation.h); 16: its fold's
  // messages and bytes as libnbc sends them (halves swapped first); 17: a
  // single server's pulls in turn take one token-bucket burst, not two,
  // and a wire factor of their own; 18 (corrected+overlap only: corrected's
  // fit is unchanged, so it stays 17): corrected+overlap is fitted on the
  // calibration runs with overlap too, where there are any; 19 (both): the
  // peer a host serves first answers while the others are still served
  // (first_peer_share).
  int version() const override { return 19; }

  ModelFitRecord Fit(const ModelData& data, const FixedParameters& asked) const override {
    const FixedParameters fixed = CheckHeld(asked);
    auto held = [&](std::string_view parameter, std::string_view scope = "") -> std::optional<double> {
      const auto it = fixed.find(HeldKey(parameter, scope));
      return it == fixed.end() ? std::nullopt : std::optional<double>(it->second);
    };
    ModelFitRecord fit = NewFit(*this);
    AddLinks(data, fit);
    std::vector<const RunObservation*> runs;
    for (const RunObservation* run : UsableRuns(data)) {
      // corrected never hides its exchange, so a run with overlap would
      // only mislead its fit; corrected+overlap, whose bucket schedule is
      // the one such a run follows, is fitted on them too (version 18;
      // experiments/overlap-calibration.toml): they are the only runs with
      // more than one exchange per iteration, so the only ones to tell what
      // a rank pays per bucket.
      if (!run->config.overlap || overlap_) runs.push_back(run);
    }
    if (std::none_of(runs.begin(), runs.end(), [](const RunObservation* run) { return !run->config.overlap; })) {
      throw ModelError(std::string(name()) + ": no calibration run without overlap");
    }
    std::vector<double> shares;
    std::set<std::string> points;
    std::vector<LinkParameters> links;
    std::set<std::string> calibrated;
    std::map<std::string, double> profiles;  // whose job's traffic costs were calibrated: scope -> rate
    for (const RunObservation* run : runs) {
      if (!run->worker_cpu_s || (run->config.architecture == Architecture::kPs && !run->server_cpu_s)) {
        throw ModelError(std::string(name()) + ": calibration run " + run->run_key.substr(0, 12) +
                         " has no CPU time per rank: its trainer predates the epoch event's cpu_s "
                         "(schemas/trainer-events.md); run the calibration runs again with the current trainer");
      }
      links.push_back(LinkFor(fit, run->config));
      // With overlap, backward also polls the buckets in flight: not compute alone.
      if (!run->config.overlap && run->forward_s + run->backward_s > 0) {
        shares.push_back(run->forward_s / (run->forward_s + run->backward_s));
      }
      points.insert(ConfigLabel(run->config) + ProfileScope(run->config.bandwidth_bits_per_s, run->config.latency_s));
      // A wire factor needs runs that exchange.
      if (run->config.workers > 1 || run->config.architecture == Architecture::kPs) {
        calibrated.insert(SchemeLabel(run->config));
        profiles[ProfileScope(run->config.bandwidth_bits_per_s, run->config.latency_s)] =
            run->config.bandwidth_bits_per_s;
      }
    }
    // A held wire factor or traffic cost of a scheme or profile no run
    // calibrated is the fit's all the same.
    for (const auto& [key, value] : fixed) {
      const std::size_t space = key.find(' ');
      if (space == std::string::npos) continue;
      const std::string scope = key.substr(space + 1);
      if (key.substr(0, space) == kWireFactor) calibrated.insert(scope);
      if (key.substr(0, space) == kNetworkByte || key.substr(0, space) == kFirstPeer) {
        profiles.emplace(scope, std::stod(scope));
      }
    }
    CorrectedCoefficients k;
    const MedianInterval forward = MedianConfidenceInterval(shares.empty() ? std::vector<double>{0.5} : shares);
    k.forward_share = held(kForwardShare).value_or(forward.median);

    // (1) Compute: the CPU time of runs that exchange nothing (less what is held).
    std::vector<std::string> compute_names;
    if (!held(kOverhead)) compute_names.push_back(kOverhead);
    if (!held(kPerSample)) compute_names.push_back(kPerSample);
    std::vector<std::vector<double>> rows;
    std::vector<double> y, weights;
    for (const RunObservation* run : runs) {
      if (run->config.workers != 1 || run->config.architecture == Architecture::kPs) continue;
      const double b = run->config.batch_size;
      rows.emplace_back();
      if (!held(kOverhead)) rows.back().push_back(1);
      if (!held(kPerSample)) rows.back().push_back(b);
      y.push_back(*run->worker_cpu_s - held(kOverhead).value_or(0) - held(kPerSample).value_or(0) * b);
      weights.push_back(1 / (*run->worker_cpu_s * *run->worker_cpu_s));
    }
    LeastSquaresFit compute;
    if (!compute_names.empty()) {
      try {
        compute = FitLeastSquares(compute_names, rows, y, weights);
      } catch (const FitError& e) {
        throw ModelError(std::string(name()) + ": compute needs one-worker runs of ring, mpi or p2p at two "
                         "batch sizes or more (experiments/compute.toml): " + e.what());
      }
    }
    auto compute_value = [&](const char* parameter) {
      if (held(parameter)) return *held(parameter);
      const auto at = std::find(compute_names.begin(), compute_names.end(), parameter);
      return compute.coefficients[static_cast<std::size_t>(at - compute_names.begin())].value;
    };
    k.overhead = compute_value(kOverhead);
    k.per_sample = compute_value(kPerSample);

    // (2) What a capped rank that its CPU binds gets of its share.
    std::vector<double> efficiencies;
    for (const RunObservation* run : runs) {
      const double s = CpuShare(run->config);
      const double used = std::max(*run->worker_cpu_s, run->server_cpu_s.value_or(0)) / run->iteration_s;
      if (s < 1 && used >= kCpuBoundShare * s) efficiencies.push_back(used / s);
    }
    const MedianInterval quota =
        MedianConfidenceInterval(efficiencies.empty() ? std::vector<double>{1.0} : efficiencies);
    k.quota = held(kQuotaEfficiency).value_or(quota.median);

    // (3) The rest, on every run, as logarithms (value = scale e^x; p = 1 + e^x).
    std::vector<std::string> names;
    for (const StageThree& c : kStageThree) names.push_back(c.name);
    const std::vector<std::string> factors(calibrated.begin(), calibrated.end());
    for (const std::string& scope : factors) names.push_back(std::string(kWireFactor) + " " + scope);
    const std::size_t first_network = names.size();
    for (const auto& [scope, bits] : profiles) names.push_back(std::string(kNetworkByte) + " " + scope);
    const std::size_t first_share = names.size();
    for (const auto& [scope, bits] : profiles) names.push_back(std::string(kFirstPeer) + " " + scope);
    auto value = [&](std::size_t j, double x) {
      if (j >= first_share) return 1 / (1 + std::exp(-x));
      if (j == kExponentIndex || j == kBalanceIndex) return 1 + std::exp(x);
      if (j >= first_network) return kNetworkByteScale * std::exp(x);
      return (j < kStageThree.size() ? kStageThree[j].scale : 1.0) * std::exp(x);
    };
    // The logarithm a held value is in (value's inverse), or none: fitted.
    std::vector<std::optional<double>> held_x(names.size());
    for (std::size_t j = 0; j < names.size(); ++j) {
      const std::size_t space = names[j].find(' ');
      const std::optional<double> v = space == std::string::npos
                                          ? held(names[j])
                                          : held(names[j].substr(0, space), names[j].substr(space + 1));
      if (!v) continue;
      if (j >= first_share) held_x[j] = std::log(*v / (1 - *v));
      else if (j == kExponentIndex || j == kBalanceIndex) held_x[j] = std::log(*v - 1);
      else if (j >= first_network) held_x[j] = std::log(*v / kNetworkByteScale);
      else held_x[j] = std::log(*v / (j < kStageThree.size() ? kStageThree[j].scale : 1.0));
    }
    std::vector<std::size_t> free;  // indices into names of what is fitted
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (!held_x[j]) free.push_back(j);
    }
    auto full = [&](const std::vector<double>& x_free) {
      std::vector<double> x(names.size());
      for (std::size_t j = 0; j < names.size(); ++j) x[j] = held_x[j].value_or(0);
      for (std::size_t i = 0; i < free.size(); ++i) x[free[i]] = x_free[i];
      return x;
    };
    auto with = [&](const std::vector<double>& x) {
      CorrectedCoefficients c = k;
      c.per_byte = value(0, x[0]);
      c.per_message = value(1, x[1]);
      c.exponent = value(kExponentIndex, x[kExponentIndex]);
      c.per_wait = value(kPerWaitIndex, x[kPerWaitIndex]);
      c.balance_exponent = value(kBalanceIndex, x[kBalanceIndex]);
      c.while_waiting = value(kWaitingIndex, x[kWaitingIndex]);
      for (std::size_t a = 0; a < factors.size(); ++a) {
        c.wire_factor[factors[a]] = value(kStageThree.size() + a, x[kStageThree.size() + a]);
      }
      std::size_t j = first_network;
      for (const auto& [scope, bits] : profiles) c.per_network_byte[scope] = {bits, value(j, x[j])}, ++j;
      for (const auto& [scope, bits] : profiles) c.first_peer_share[scope] = {bits, value(j, x[j])}, ++j;
      return c;
    };
    // Each starts at x = 0 (the scale itself; p and r 2; wire factors 1) and has
    // a weak prior there: moving a coefficient by a factor e costs as much
    // as a 0.3% error on one run, so that one the runs cannot determine (the
    // wire of an architecture a CPU always binds) stays put instead of
    // wandering, and every interval is finite.
    constexpr double kPriorWeight = 0.003;
    std::vector<std::string> free_names;
    for (std::size_t j : free) free_names.push_back(names[j]);
    LeastSquaresFit rest;
    if (!free.empty()) {
      try {
        rest = FitNonlinearLeastSquares(
            free_names, std::vector<double>(free.size(), 0.0), runs.size() + free.size(),
            [&](const std::vector<double>& x, std::vector<double>& r) {
              const CorrectedCoefficients c = with(full(x));
              for (std::size_t i = 0; i < runs.size(); ++i) {
                const RunObservation& run = *runs[i];
                r[i] = Evaluate(c, run.config, 4.0 * run.parameters, links[i], overlap_).iteration / run.iteration_s - 1;
              }
              for (std::size_t j = 0; j < x.size(); ++j) r[runs.size() + j] = kPriorWeight * x[j];
            });
      } catch (const FitError& e) {
        throw ModelError(std::string(name()) + ": the exchange's costs need calibration runs of several workers "
                         "and both link profiles: " + e.what());
      }
    }
    std::vector<double> solved;
    for (const Coefficient& c : rest.coefficients) solved.push_back(c.value);
    k = with(full(solved));

    auto compute_row = [&](const char* parameter, const char* unit) {
      if (held(parameter)) return Held(parameter, *held(parameter), unit);
      const auto at = std::find(compute_names.begin(), compute_names.end(), parameter);
      return Fitted(compute.coefficients[static_cast<std::size_t>(at - compute_names.begin())], unit);
    };
    fit.parameters.push_back(compute_row(kOverhead, "s"));
    fit.parameters.push_back(compute_row(kPerSample, "s/sample"));
    fit.parameters.push_back(held(kQuotaEfficiency)
                                 ? Held(kQuotaEfficiency, k.quota, "1")
                                 : ModelParameterRow{kQuotaEfficiency, quota.median, quota.low, quota.high, "1",
                                                     "fitted", ""});
    for (std::size_t j = 0; j < names.size(); ++j) {
      const bool stage_three = j < kStageThree.size(), share = j >= first_share;
      const bool network = !share && j >= first_network;
      const char* parameter = stage_three ? kStageThree[j].name : share ? kFirstPeer : network ? kNetworkByte : kWireFactor;
      const char* unit = stage_three ? kStageThree[j].unit : network ? "s/byte" : "1";
      const std::string scope = stage_three ? ""
                                : share     ? std::next(profiles.begin(), j - first_share)->first
                                : network   ? std::next(profiles.begin(), j - first_network)->first
                                            : factors[j - kStageThree.size()];
      if (held_x[j]) {
        fit.parameters.push_back(Held(parameter, value(j, *held_x[j]), unit, scope));
        continue;
      }
      // The interval of the logarithm, mapped to values.
      const Coefficient& x =
          rest.coefficients[static_cast<std::size_t>(std::find(free.begin(), free.end(), j) - free.begin())];
      fit.parameters.push_back(
          Fitted(Coefficient{parameter, value(j, x.value), 0, value(j, x.ci_low), value(j, x.ci_high)}, unit, scope));
    }
    fit.parameters.push_back(held(kForwardShare) ? Held(kForwardShare, k.forward_share, "1")
                                                 : ModelParameterRow{kForwardShare, forward.median, forward.low,
                                                                     forward.high, "1", "fitted", ""});
    double squares = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double fitted = Evaluate(k, runs[i]->config, 4.0 * runs[i]->parameters, links[i], overlap_).iteration;
      fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, fitted});
      squares += (fitted - runs[i]->iteration_s) * (fitted - runs[i]->iteration_s);
    }
    fit.points = static_cast<int>(points.size());
    fit.residual_rms_s = std::sqrt(squares / static_cast<double>(runs.size()));
    return fit;
  }

  // Per term: compute (stretched by the quota when a CPU binds), the
  // exchange left on the path, and with overlap what ran behind backward.
  Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const override {
    CorrectedCoefficients k;
    k.overhead = Parameter(fit, kOverhead);
    k.per_sample = Parameter(fit, kPerSample);
    k.quota = Parameter(fit, kQuotaEfficiency);
    k.per_byte = Parameter(fit, kStageThree[0].name);
    k.per_message = Parameter(fit, kStageThree[1].name);
    k.exponent = Parameter(fit, kStageThree[kExponentIndex].name);
    k.per_wait = Parameter(fit, kStageThree[kPerWaitIndex].name);
    k.balance_exponent = Parameter(fit, kStageThree[kBalanceIndex].name);
    k.while_waiting = Parameter(fit, kStageThree[kWaitingIndex].name);
    for (const ModelParameterRow& f : fit.parameters) {
      if (f.name == kWireFactor) k.wire_factor[f.scope] = f.value;
      // The scope is ProfileScope's text, which starts with the rate.
      if (f.name == kNetworkByte && !f.scope.empty()) k.per_network_byte[f.scope] = {std::stod(f.scope), f.value};
      if (f.name == kFirstPeer && !f.scope.empty()) k.first_peer_share[f.scope] = {std::stod(f.scope), f.value};
    }
    k.forward_share = Parameter(fit, kForwardShare);
    const CorrectedTerms terms = Evaluate(k, config, GradientBytes(config), LinkFor(fit, config), overlap_);
    Prediction p;
    const double share = CpuShare(config) < 1 ? k.quota * CpuShare(config) : 1.0;
    p.compute_s = std::min(terms.capped > terms.path ? terms.compute / share : terms.compute, terms.iteration);
    p.comm_s = terms.iteration - p.compute_s;
    p.hidden_comm_s = terms.hidden;
    p.worker_cpu_s = terms.worker_cpu;
    p.server_cpu_s = terms.server_cpu;
    p.limited_by = terms.limited_by;
    return Finish(config, terms.iteration, p);
  }

 private:
  // `asked` with every key one this model fits and every value in its
  // range; a profile's scope rewritten as ProfileScope writes it. Throws
  // ModelError naming the key.
  FixedParameters CheckHeld(const FixedParameters& asked) const {
    FixedParameters fixed;
    for (const auto& [key, value] : asked) {
      const std::size_t space = key.find(' ');
      const std::string parameter = key.substr(0, space);
      std::string scope = space == std::string::npos ? "" : key.substr(space + 1);
      bool known = false, exponent = false, fraction = parameter == kForwardShare;
      for (const char* unscoped : {kOverhead, kPerSample, kQuotaEfficiency, kForwardShare}) {
        known = known || (scope.empty() && parameter == unscoped);
      }
      for (std::size_t j = 0; j < kStageThree.size(); ++j) {
        if (!scope.empty() || parameter != kStageThree[j].name) continue;
        known = true;
        exponent = j == kExponentIndex || j == kBalanceIndex;
      }
      if (parameter == kWireFactor && !scope.empty()) known = true;
      if ((parameter == kNetworkByte || parameter == kFirstPeer) && !scope.empty()) {
        // As `model fit` prints it ("1 Gbit/s, 0 µs", LinkText) or as it is
        // stored ("<rate>bit/s <latency>s"), the rate 0 for an unshaped link.
        std::istringstream text(scope);
        double rate = 0, latency = 0;
        std::string unit;
        if (const std::optional<Link> link = ParseLinkText(scope)) {
          rate = link->bandwidth_bits_per_s;
          latency = link->latency_s;
        } else if (!(text >> rate) || !(text >> unit) || unit != "bit/s" || !(text >> latency)) {
          throw ModelError(std::string(name()) + ": cannot hold " + key + ": the scope of " + parameter +
                           " is a link profile as `model fit` prints it, e.g. \"1 Gbit/s, 0 µs\"");
        }
        scope = ProfileScope(rate, latency);
        known = true;
        fraction = parameter == kFirstPeer;
      }
      if (!known) {
        std::string names = std::string(kOverhead) + ", " + kPerSample + ", " + kQuotaEfficiency + ", " + kForwardShare;
        for (const StageThree& c : kStageThree) names += std::string(", ") + c.name;
        throw ModelError(std::string(name()) + " fits no parameter \"" + key + "\" to hold; it fits " + names + ", " +
                         kWireFactor + " SCHEME (e.g. \"wire_factor ps k=1\"), " + kNetworkByte +
                         " PROFILE (e.g. \"" + kNetworkByte + " 1 Gbit/s, 0 µs\") and " + kFirstPeer + " PROFILE");
      }
      const double floor = exponent ? 1 : 0;
      if (!std::isfinite(value) || value <= floor || (fraction && value >= 1)) {
        std::ostringstream text;
        text << std::string(name()) << ": cannot hold " << key << " at " << value << ": it must be above " << floor
             << (fraction ? " and below 1" : "");
        throw ModelError(text.str());
      }
      fixed[HeldKey(parameter, scope)] = value;
    }
    return fixed;
  }

  bool overlap_;
};

// ---- linear -----------------------------------------------------------------

std::string LinearScope(const ModelConfig& config) {
  return ArchitectureLabel(config) + " b=" + std::to_string(config.batch_size) + " " +
         ProfileScope(config.bandwidth_bits_per_s, config.latency_s);
}

class LinearModel : public PerformanceModel {
 public:
  std::string_view name() const override { return "linear"; }
  int version() const override { return 1; }

  // epoch_s = intercept + slope w, per architecture, batch and profile.
  ModelFitRecord Fit(const ModelData& data, const FixedParameters& fixed) const override {
    RefuseFixed(*this, fixed);
    ModelFitRecord fit = NewFit(*this);
    AddLinks(data, fit);
    std::map<std::string, std::vector<const RunObservation*>> groups;
    for (const RunObservation* run : UsableRuns(data)) {
      if (!run->config.overlap) groups[LinearScope(run->config)].push_back(run);
    }
    double squares = 0;
    for (const auto& [scope, runs] : groups) {
      std::set<int> workers;
      for (const RunObservation* run : runs) workers.insert(run->config.workers);
      std::vector<std::vector<double>> rows;
      std::vector<double> y;
      for (const RunObservation* run : runs) {
        rows.push_back(workers.size() > 1 ? std::vector<double>{1.0, double(run->config.workers)}
                                          : std::vector<double>{1.0});
        y.push_back(run->epoch_s);
      }
      const LeastSquaresFit line = FitLeastSquares(
          workers.size() > 1 ? std::vector<std::string>{"intercept_s", "slope_s_per_worker"}
                             : std::vector<std::string>{"intercept_s"},
          rows, y);
      fit.parameters.push_back(Fitted(line.coefficients[0], "s", scope));
      if (line.coefficients.size() > 1) {
        fit.parameters.push_back(Fitted(line.coefficients[1], "s/worker", scope));
      } else {
        fit.parameters.push_back({"slope_s_per_worker", 0, std::nullopt, std::nullopt, "s/worker", "fixed", scope});
      }
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const double iterations = static_cast<double>(runs[i]->iterations_per_epoch);
        fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, (y[i] - line.residuals[i]) / iterations});
        squares += std::pow(line.residuals[i] / iterations, 2);
      }
      fit.points += static_cast<int>(workers.size());
    }
    fit.residual_rms_s = std::sqrt(squares / static_cast<double>(fit.runs.size()));
    return fit;
  }

  // The group of the configuration, else the same architecture and profile
  // at the nearest batch size (the baseline knows nothing of batches).
  Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const override {
    std::string scope = LinearScope(config);
    if (FindParameter(fit, "intercept_s", scope) == nullptr) {
      int best = -1;
      for (const ModelParameterRow& p : fit.parameters) {
        if (p.name != "intercept_s") continue;
        for (int batch : {config.batch_size}) {
          ModelConfig other = config;
          const std::size_t at = p.scope.find(" b=");
          if (at == std::string::npos) continue;
          other.batch_size = std::stoi(p.scope.substr(at + 3));
          if (LinearScope(other) != p.scope) continue;
          if (best < 0 || std::abs(other.batch_size - batch) < std::abs(best - batch)) {
            best = other.batch_size;
            scope = p.scope;
          }
        }
      }
      if (best < 0) throw ModelError("linear has no line for " + LinearScope(config) + ": no calibration run of it");
    }
    const double epoch = Parameter(fit, "intercept_s", scope) + Parameter(fit, "slope_s_per_worker", scope) * config.workers;
    const double iterations = static_cast<double>(IterationsPerEpoch(config));
    Prediction p;
    p.compute_s = epoch / iterations;
    return Finish(config, epoch / iterations, p);
  }
};

}  // namespace

std::string ProfileScope(double bandwidth_bits_per_s, double latency_s) {
  std::ostringstream text;
  text << bandwidth_bits_per_s << "bit/s " << latency_s << "s";
  return text.str();
}

LinkParameters LinkFor(const ModelFitRecord& fit, const ModelConfig& config) {
  const std::string scope = ProfileScope(config.bandwidth_bits_per_s, config.latency_s);
  if (FindParameter(fit, kAlpha, scope) != nullptr) {
    return LinkParameters{Parameter(fit, kAlpha, scope), Parameter(fit, kBandwidth, scope)};
  }
  std::vector<double> alphas;
  for (const ModelParameterRow& p : fit.parameters) {
    if (p.name == kAlpha) alphas.push_back(p.value);
  }
  if (config.bandwidth_bits_per_s <= 0 || alphas.empty() || FindParameter(fit, kLinkEfficiency, "") == nullptr) {
    throw ModelError("no link probe for the profile " + scope + " and none to extrapolate from: run "
                     "`dmlbench cluster probe --profile ...` before fitting");
  }
  return LinkParameters{Median(alphas) + config.latency_s,
                        config.bandwidth_bits_per_s / 8 * Parameter(fit, kLinkEfficiency)};
}

FixedParameters ParseFixedParameters(const std::vector<std::string>& fixes) {
  FixedParameters fixed;
  for (const std::string& fix : fixes) {
    const std::size_t at = fix.rfind('=');
    const std::string key = at == std::string::npos ? "" : fix.substr(0, at);
    const std::string text = at == std::string::npos ? "" : fix.substr(at + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (key.empty() || text.empty() || end != text.c_str() + text.size()) {
      throw ModelError("--fix \"" + fix + "\": expected NAME=VALUE or \"NAME SCOPE=VALUE\" with a number, "
                       "e.g. --fix cpu_while_waiting=0.067 or --fix \"wire_factor ps k=1=1.0\"");
    }
    if (!fixed.emplace(key, value).second) throw ModelError("--fix " + key + " given twice");
  }
  return fixed;
}

const std::vector<std::unique_ptr<PerformanceModel>>& Models() {
  static const std::vector<std::unique_ptr<PerformanceModel>> models = [] {
    std::vector<std::unique_ptr<PerformanceModel>> all;
    all.push_back(std::make_unique<Paper2019>());
    all.push_back(std::make_unique<CorrectedModel>(false));
    all.push_back(std::make_unique<CorrectedModel>(true));
    all.push_back(std::make_unique<LinearModel>());
    return all;
  }();
  return models;
}

const PerformanceModel& ModelNamed(std::string_view name) {
  std::string known;
  for (const auto& model : Models()) {
    if (model->name() == name) return *model;
    known += (known.empty() ? "" : ", ") + std::string(model->name());
  }
  throw ModelError("unknown model \"" + std::string(name) + "\", expected one of: " + known);
}

}  // namespace dmlbench
