#include "orchestrator/report/sql_functions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/physics.h"
#include "orchestrator/core/statistics.h"

namespace dmlbench {
namespace {

// A cell's number; nullopt for NULL and text.
std::optional<double> Number(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  return std::nullopt;
}

// The numbers of the first argument over a group's rows.
std::vector<double> Numbers(const std::vector<std::vector<Cell>>& rows) {
  std::vector<double> values;
  for (const std::vector<Cell>& row : rows) {
    if (const std::optional<double> value = Number(row[0])) values.push_back(*value);
  }
  return values;
}

// An aggregate of the group's numbers; NULL for a group without any.
AggregateFunction OfNumbers(double (*statistic)(const std::vector<double>&)) {
  return [statistic](const std::vector<std::vector<Cell>>& rows) -> Cell {
    const std::vector<double> values = Numbers(rows);
    if (values.empty()) return nullptr;
    return statistic(values);
  };
}

}  // namespace

void AddStatisticsFunctions(Store& store) {
  store.AddAggregateFunction("median", 1, OfNumbers([](const std::vector<double>& v) { return Median(v); }));
  store.AddAggregateFunction("median_ci_low", 1, OfNumbers([](const std::vector<double>& v) {
                               return MedianConfidenceInterval(v).low;
                             }));
  store.AddAggregateFunction("median_ci_high", 1, OfNumbers([](const std::vector<double>& v) {
                               return MedianConfidenceInterval(v).high;
                             }));
  store.AddAggregateFunction("median_ci_coverage", 1, OfNumbers([](const std::vector<double>& v) {
                               return MedianConfidenceInterval(v).coverage;
                             }));
  store.AddAggregateFunction("quantile", 2, [](const std::vector<std::vector<Cell>>& rows) -> Cell {
    const std::vector<double> values = Numbers(rows);
    if (values.empty()) return nullptr;
    const Cell& p = rows.front()[1];
    const double probability = std::holds_alternative<double>(p)         ? std::get<double>(p)
                               : std::holds_alternative<std::int64_t>(p) ? static_cast<double>(std::get<std::int64_t>(p))
                                                                         : -1;
    if (probability < 0 || probability > 1) throw Error("quantile(x, p): p must be between 0 and 1");
    return Quantile(values, probability);
  });
  store.AddAggregateFunction("kendall_tau", 2, [](const std::vector<std::vector<Cell>>& rows) -> Cell {
    std::vector<double> x, y;
    for (const std::vector<Cell>& row : rows) {
      const std::optional<double> a = Number(row[0]), b = Number(row[1]);
      if (a && b) x.push_back(*a), y.push_back(*b);
    }
    const std::optional<double> tau = KendallTau(x, y);
    if (!tau) return nullptr;
    return *tau;
  });
  store.AddAggregateFunction("cv", 1, [](const std::vector<std::vector<Cell>>& rows) -> Cell {
    const std::optional<double> cv = CoefficientOfVariation(Numbers(rows));
    if (!cv) return nullptr;
    return *cv;
  });
}

void AddDisplayFunctions(Store& store) {
  store.AddScalarFunction("round_sig", 2, [](const std::vector<Cell>& arguments) -> Cell {
    const auto* digits = std::get_if<std::int64_t>(&arguments[1]);
    if (digits == nullptr || *digits < 1 || *digits > 17) throw Error("round_sig(x, digits): digits must be 1 to 17");
    double x = 0;
    if (const auto* d = std::get_if<double>(&arguments[0])) {
      x = *d;
    } else if (const auto* i = std::get_if<std::int64_t>(&arguments[0])) {
      x = static_cast<double>(*i);
    } else {
      return nullptr;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", static_cast<int>(*digits), x);
    return std::strtod(text, nullptr);
  });
}

namespace {

// A lower bound on a run's iteration time from first principles; see
// iteration_bound_s in the header. W is the gradient's bytes, w workers.
double IterationBound(const ModelConfig& config, const LinkParameters& link, double W, double compute_cpu_s) {
  const double w = config.workers;
  double bytes = 0;    // through the busiest link in one direction, one after another
  double latencies = 0;  // dependent message latencies
  // Directions used one after the other, each starting with a full token
  // bucket (LinkBurstBytes; a real link has none, and the bound is then
  // looser by as much).
  double bursts = 0;
  if (config.architecture == Architecture::kPs) {
    // A worker pushes W (W/k to each server), and the last server's W/k
    // must arrive before that server's answer can; a server's link carries
    // every worker's W/k in each direction.
    const double k = std::max(config.servers, 1);
    bytes = std::max(W + W / k, w * W / k);
    latencies = 2;
    bursts = 2;
  } else if (w > 1) {
    // Any allreduce: each worker sends at least 2 (w-1)/w W (reduce-scatter
    // and allgather halves of the data) in at least ceil(log2 w) rounds.
    bytes = 2 * (w - 1) / w * W;
    latencies = std::ceil(std::log2(w));
    bursts = 1;
  }
  const double exchange =
      latencies * link.alpha_s + PacedBytes(bytes, bursts, config.network.bandwidth_bits_per_s) / link.bytes_per_s;
  return config.overlap ? std::max(compute_cpu_s, exchange) : compute_cpu_s + exchange;
}

}  // namespace

void AddLinkTimeFunctions(Store& store) {
  auto link_s = std::make_shared<std::map<std::int64_t, double>>();
  auto bound_s = std::make_shared<std::map<std::int64_t, double>>();
  try {
    const std::optional<ModelFitRecord> fit = store.LatestModelFit("corrected");
    if (fit) {
      const ModelParameterRow* overhead = FindParameter(*fit, "cpu_overhead_s", "");
      const ModelParameterRow* per_sample = FindParameter(*fit, "cpu_per_sample_s", "");
      for (const RunObservation& run : LoadModelData(store, {}).runs) {
        try {
          const LinkParameters link = LinkFor(*fit, run.config);
          const double gradient_bytes = 4.0 * static_cast<double>(run.parameters);
          const IterationTraffic traffic = Traffic(run.config, gradient_bytes);
          (*link_s)[run.run_id] = traffic.latency_steps * link.alpha_s + traffic.link_bytes / link.bytes_per_s;
          if (overhead != nullptr && per_sample != nullptr) {
            const double compute_cpu_s = overhead->value + per_sample->value * run.config.batch_size;
            (*bound_s)[run.run_id] = IterationBound(run.config, link, gradient_bytes, compute_cpu_s);
          }
        } catch (const ModelError&) {
          // A profile the fit knows no link for: no bound for this run.
        }
      }
    }
  } catch (const StoreError&) {
    // A database without runs or model tables: every bound is unknown.
  }
  auto lookup = [](std::shared_ptr<std::map<std::int64_t, double>> values) {
    return [values](const std::vector<Cell>& arguments) -> Cell {
      const auto* run_id = std::get_if<std::int64_t>(&arguments[0]);
      if (run_id == nullptr) return nullptr;
      const auto found = values->find(*run_id);
      if (found == values->end()) return nullptr;
      return found->second;
    };
  };
  store.AddScalarFunction("link_time_s", 1, lookup(link_s));
  store.AddScalarFunction("iteration_bound_s", 1, lookup(bound_s));
}

}  // namespace dmlbench
