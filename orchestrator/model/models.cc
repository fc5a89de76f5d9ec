#include "orchestrator/model/models.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "orchestrator/core/clock.h"
#include "orchestrator/model/least_squares.h"
#include "orchestrator/model/statistics.h"

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

std::string ArchitectureScope(const ModelConfig& config) {
  std::string scope(Text(config.architecture));
  if (config.architecture == Architecture::kPs) scope += " k=" + std::to_string(config.servers);
  return scope;
}

class Paper2019 : public PerformanceModel {
 public:
  std::string_view name() const override { return "paper2019"; }
  int version() const override { return 1; }

  // T_processing per architecture: least squares of (epoch - comm) on the
  // iterations per epoch, over the calibration runs of that architecture.
  ModelFitRecord Fit(const ModelData& data) const override {
    ModelFitRecord fit = NewFit(*this);
    AddLinks(data, fit);
    std::map<std::string, std::vector<const RunObservation*>> groups;
    for (const RunObservation* run : UsableRuns(data)) groups[ArchitectureScope(run->config)].push_back(run);
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
    const std::string scope = ArchitectureScope(config);
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

// The corrected model (DESIGN.md section 1), per iteration:
//
//   iteration = max(path, worker_cpu / s, server_cpu / s)
//
// where s is the CPU share of a host in cores (1 when uncapped, at most 1:
// a rank runs on one core). `path` is the critical path at full CPU speed:
//   path = path_compute_factor compute + latency_steps alpha + link_bytes / B   (physics.h)
// and `*_cpu` the CPU seconds a rank spends per iteration, which a quota
// of s cores stretches to *_cpu / s whatever the wire does:
//   worker_cpu = compute + cpu_per_byte_s worker_cpu_bytes + cpu_per_message_s worker_cpu_messages
//   server_cpu = cpu_overhead_s + cpu_per_byte_s server_cpu_bytes + cpu_per_message_s server_cpu_messages
//   compute    = cpu_overhead_s + cpu_per_sample_s b
// Fitted coefficients (CPU seconds at full speed):
//   cpu_overhead_s        per iteration whatever the batch (update, bookkeeping, polling)
//   cpu_per_sample_s      forward + backward of one sample
//   cpu_per_byte_s        one byte through a rank's network stack (sent, received or summed)
//   cpu_per_message_s     one message sent or received
//   path_compute_factor   compute's wall time over its CPU time on a path the
//                         wire binds (1: never stalled, 1/s: always throttled):
//                         a rank waiting on the wire uses its quota in bursts
// and the path's compute is path_compute_factor x compute. alpha and B come
// from the link probe, never from the runs. Fit, in stages, each a weighted
// least squares (weights 1/t^2, so that relative errors count alike):
//   1. each calibration run's side, from its measurement: the wire binds
//      where alpha and B explain at least half its time, else the CPU of
//      its busiest rank;
//   2. compute from the one-worker runs of ring, mpi and p2p (no exchange:
//      their time is compute / s), one row per configuration;
//   3. the exchange's CPU costs from the other runs a CPU binds, with that
//      compute subtracted;
//   4. path_compute_factor from the runs the wire binds.
const std::vector<std::string> kCorrectedNames = {"cpu_overhead_s", "cpu_per_sample_s", "cpu_per_byte_s",
                                                  "cpu_per_message_s"};
const std::vector<std::string> kCorrectedUnits = {"s", "s/sample", "s/byte", "s/message"};

enum class Binding { kPath, kWorkerCpu, kServerCpu };

double CpuShare(const ModelConfig& config) {
  return config.cpu_cores > 0 ? std::min(config.cpu_cores, 1.0) : 1.0;
}

// One configuration's terms, each as the coefficients' multipliers plus
// what is known without them (seconds): term = known + x . coefficients.
struct LinearTerm {
  double known = 0;
  std::vector<double> x;
  double At(const std::vector<double>& c) const {
    double t = known;
    for (std::size_t i = 0; i < x.size(); ++i) t += x[i] * c[i];
    return t;
  }
};

struct CorrectedTerms {
  LinearTerm path, worker_cpu, server_cpu;  // *_cpu already divided by s
  bool has_server = false;
  double link_s = 0;                        // wire time on the path (alpha and B)
};

CorrectedTerms Terms(const ModelConfig& config, double gradient_bytes, const LinkParameters& link,
                     double path_factor) {
  const IterationTraffic t = Traffic(config, gradient_bytes);
  const double s = CpuShare(config), b = config.batch_size;
  CorrectedTerms terms;
  terms.link_s = t.latency_steps * link.alpha_s + t.link_bytes / link.bytes_per_s;
  terms.path = {terms.link_s, {path_factor, path_factor * b, 0, 0}};
  terms.worker_cpu = {0, {1 / s, b / s, t.worker_cpu_bytes / s, t.worker_cpu_messages / s}};
  terms.has_server = config.architecture == Architecture::kPs;
  terms.server_cpu = {0, {1 / s, 0, t.server_cpu_bytes / s, t.server_cpu_messages / s}};
  return terms;
}

std::pair<Binding, double> Bind(const CorrectedTerms& terms, const std::vector<double>& c) {
  std::pair<Binding, double> best{Binding::kPath, terms.path.At(c)};
  if (const double w = terms.worker_cpu.At(c); w > best.second) best = {Binding::kWorkerCpu, w};
  if (terms.has_server) {
    if (const double v = terms.server_cpu.At(c); v > best.second) best = {Binding::kServerCpu, v};
  }
  return best;
}

const LinearTerm& TermOf(const CorrectedTerms& terms, Binding binding) {
  switch (binding) {
    case Binding::kPath: return terms.path;
    case Binding::kWorkerCpu: return terms.worker_cpu;
    case Binding::kServerCpu: return terms.server_cpu;
  }
  return terms.path;
}

std::vector<double> Coefficients(const ModelFitRecord& fit) {
  std::vector<double> c;
  for (const std::string& name : kCorrectedNames) c.push_back(Parameter(fit, name));
  return c;
}

// The exchange with overlap: buckets go out as their layers' gradients are
// ready, one after another; exchange j starts at max(ready_j, end of j-1).
// What ends after backward is exposed; the rest was hidden. Returns
// {exposed, hidden} wire time.
std::pair<double, double> OverlappedExchange(const ModelConfig& config, double gradient_bytes,
                                             const LinkParameters& link, double backward_s) {
  const IterationTraffic t = Traffic(config, gradient_bytes);
  const double fixed = t.latency_steps * link.alpha_s;
  const double proportional = t.link_bytes / link.bytes_per_s;
  double end = 0, total = 0;
  for (const Bucket& bucket : Buckets(config)) {
    const double comm = fixed + proportional * bucket.bytes / gradient_bytes;
    end = std::max(end, bucket.ready_fraction * backward_s) + comm;
    total += comm;
  }
  const double exposed = std::max(0.0, end - backward_s);
  return {exposed, total - exposed};
}

class CorrectedModel : public PerformanceModel {
 public:
  explicit CorrectedModel(bool overlap) : overlap_(overlap) {}
  std::string_view name() const override { return overlap_ ? "corrected+overlap" : "corrected"; }
  int version() const override { return 2; }

  ModelFitRecord Fit(const ModelData& data) const override {
    ModelFitRecord fit = NewFit(*this);
    AddLinks(data, fit);
    std::vector<const RunObservation*> runs;
    for (const RunObservation* run : UsableRuns(data)) {
      // Overlap runs are predicted, not fitted: their bucket schedule is the model's.
      if (!run->config.overlap) runs.push_back(run);
    }
    std::vector<double> shares;
    std::set<std::string> points;
    std::vector<LinkParameters> links;
    for (const RunObservation* run : runs) {
      links.push_back(LinkFor(fit, run->config));
      if (run->forward_s + run->backward_s > 0) shares.push_back(run->forward_s / (run->forward_s + run->backward_s));
      points.insert(ConfigLabel(run->config) + ProfileScope(run->config.bandwidth_bits_per_s, run->config.latency_s));
    }
    // The wall time of compute on the path: a rank that waits on the wire
    // still loses time to its quota's stalls (its CPU use is bursty), so its
    // compute takes path_compute_factor times its CPU time (stage 4).
    double factor = 1;
    std::vector<CorrectedTerms> terms;
    auto rebuild = [&] {
      terms.clear();
      for (std::size_t i = 0; i < runs.size(); ++i) {
        terms.push_back(Terms(runs[i]->config, 4.0 * runs[i]->parameters, links[i], factor));
      }
    };
    rebuild();
    // The side each calibration run is on, from its measurement: the wire
    // binds where it explains at least half the run's time, else a CPU.
    std::vector<Binding> sides;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const bool wire = terms[i].link_s >= 0.5 * runs[i]->iteration_s;
      sides.push_back(!wire ? Binding::kWorkerCpu : Binding::kPath);
      // A ps run's CPU side is its busiest rank's.
      if (!wire && terms[i].has_server) {
        const IterationTraffic t = Traffic(runs[i]->config, 4.0 * runs[i]->parameters);
        if (t.server_cpu_bytes > t.worker_cpu_bytes) sides.back() = Binding::kServerCpu;
      }
    }
    // Stages 2-4, then each run's side again from the model itself (the
    // measurement's rule errs near the boundary), until no run changes side.
    LeastSquaresFit solved;
    std::vector<double> c;
    for (int pass = 0; pass < 5; ++pass) {
      // The CPU costs in two stages, each a weighted least squares (weights
      // 1/t^2, so that relative errors count alike): compute from the runs
      // that exchange nothing (one worker of ring, mpi or p2p: their time is
      // compute over the share), then the exchange's costs from the other
      // runs a CPU binds, with that compute subtracted.
      // Compute: one row per one-worker configuration (the median of its
      // runs), so that the batch sizes count alike however many
      // architectures ran at one of them.
      std::map<std::string, std::vector<double>> by_point;
      std::map<std::string, const RunObservation*> example;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i]->config.workers != 1 || terms[i].has_server) continue;
        const std::string point = ConfigLabel(runs[i]->config) +
                                  ProfileScope(runs[i]->config.bandwidth_bits_per_s, runs[i]->config.latency_s);
        by_point[point].push_back(runs[i]->iteration_s);
        example[point] = runs[i];
      }
      std::vector<std::vector<double>> rows;
      std::vector<double> y, weights;
      for (const auto& [point, times] : by_point) {
        const double s = CpuShare(example[point]->config), median = Median(times);
        rows.push_back({1 / s, example[point]->config.batch_size / s});
        y.push_back(median);
        weights.push_back(1 / (median * median));
      }
      LeastSquaresFit compute_fit, exchange_fit;
      try {
        compute_fit = FitLeastSquares({kCorrectedNames[0], kCorrectedNames[1]}, rows, y, weights);
      } catch (const FitError& e) {
        throw ModelError(std::string(name()) + ": compute needs one-worker runs of ring, mpi or p2p at two batch "
                         "sizes or more (experiments/compute.toml): " + e.what());
      }
      c = {compute_fit.coefficients[0].value, compute_fit.coefficients[1].value, 0, 0};
      rows.clear();
      y.clear();
      weights.clear();
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (sides[i] == Binding::kPath || (runs[i]->config.workers == 1 && !terms[i].has_server)) continue;
        const LinearTerm& term = TermOf(terms[i], sides[i]);
        rows.push_back({term.x[2], term.x[3]});
        y.push_back(runs[i]->iteration_s - term.At(c));
        weights.push_back(1 / (runs[i]->iteration_s * runs[i]->iteration_s));
      }
      try {
        exchange_fit = FitLeastSquares({kCorrectedNames[2], kCorrectedNames[3]}, rows, y, weights);
      } catch (const FitError& e) {
        throw ModelError(std::string(name()) + ": the exchange's CPU costs need runs of several workers that a "
                         "CPU binds: " + e.what());
      }
      c[2] = exchange_fit.coefficients[0].value;
      c[3] = exchange_fit.coefficients[1].value;
      solved.coefficients = {compute_fit.coefficients[0], compute_fit.coefficients[1], exchange_fit.coefficients[0],
                             exchange_fit.coefficients[1]};
      // The path's compute factor from the runs the wire binds: weighted least
      // squares of their time beyond the wire on their compute, between 1
      // (never stalled) and 1/s (always throttled).
      double numerator = 0, denominator = 0, ceiling = 1;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (sides[i] != Binding::kPath) continue;
        const double compute = c[0] + c[1] * runs[i]->config.batch_size;
        const double weight = 1 / (runs[i]->iteration_s * runs[i]->iteration_s);
        numerator += weight * compute * (runs[i]->iteration_s - terms[i].link_s);
        denominator += weight * compute * compute;
        ceiling = std::max(ceiling, 1 / CpuShare(runs[i]->config));
      }
      factor = denominator > 0 ? std::clamp(numerator / denominator, 1.0, ceiling) : 1.0;
      rebuild();
      bool changed = false;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const Binding side = Bind(terms[i], c).first;
        changed = changed || side != sides[i];
        sides[i] = side;
      }
      if (!changed) break;
    }
    fit.parameters.push_back({"path_compute_factor", factor, std::nullopt, std::nullopt, "1", "fitted", ""});
    for (std::size_t i = 0; i < solved.coefficients.size(); ++i) {
      fit.parameters.push_back(Fitted(solved.coefficients[i], kCorrectedUnits[i]));
    }
    const MedianInterval share = MedianConfidenceInterval(shares.empty() ? std::vector<double>{0.5} : shares);
    fit.parameters.push_back({"forward_share", share.median, share.low, share.high, "1", "fitted", ""});
    double squares = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double fitted = Bind(terms[i], c).second;
      fit.runs.push_back({runs[i]->run_id, runs[i]->iteration_s, fitted});
      squares += (fitted - runs[i]->iteration_s) * (fitted - runs[i]->iteration_s);
    }
    fit.points = static_cast<int>(points.size());
    fit.residual_rms_s = std::sqrt(squares / static_cast<double>(runs.size()));
    return fit;
  }

  // Per term: compute (at the speed the binding side runs it), the update
  // inside it, and the exchange that is left on the path; with overlap the
  // part of the exchange that ran behind backward is hidden.
  Prediction Predict(const ModelFitRecord& fit, const ModelConfig& config) const override {
    const double W = GradientBytes(config);
    const LinkParameters link = LinkFor(fit, config);
    const std::vector<double> c = Coefficients(fit);
    const double factor = Parameter(fit, "path_compute_factor");
    const CorrectedTerms terms = Terms(config, W, link, factor);
    const double compute = c[0] + c[1] * config.batch_size;
    Prediction p;
    double iteration = 0;
    if (overlap_ && config.overlap) {
      const double backward = (1 - Parameter(fit, "forward_share")) * compute;
      const auto [exposed, hidden] = OverlappedExchange(config, W, link, backward);
      const double path = factor * compute + exposed;
      double cpu = terms.worker_cpu.At(c);
      if (terms.has_server) cpu = std::max(cpu, terms.server_cpu.At(c));
      iteration = std::max(path, cpu);
      p.hidden_comm_s = hidden;
    } else {
      iteration = Bind(terms, c).second;
    }
    const auto [side, binding_s] = Bind(terms, c);
    p.compute_s = side == Binding::kPath ? factor * compute : compute / CpuShare(config);
    p.compute_s = std::min(p.compute_s, iteration);
    p.comm_s = iteration - p.compute_s;
    (void)binding_s;
    return Finish(config, iteration, p);
  }

 private:
  bool overlap_;
};

// ---- linear -----------------------------------------------------------------

std::string LinearScope(const ModelConfig& config) {
  return ArchitectureScope(config) + " b=" + std::to_string(config.batch_size) + " " +
         ProfileScope(config.bandwidth_bits_per_s, config.latency_s);
}

class LinearModel : public PerformanceModel {
 public:
  std::string_view name() const override { return "linear"; }
  int version() const override { return 1; }

  // epoch_s = intercept + slope w, per architecture, batch and profile.
  ModelFitRecord Fit(const ModelData& data) const override {
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
