#include "orchestrator/report/sql_functions.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/model/physics.h"
#include "orchestrator/model/statistics.h"

namespace dmlbench {
namespace {

// The numbers of the first argument over a group's rows.
std::vector<double> Numbers(const std::vector<std::vector<Cell>>& rows) {
  std::vector<double> values;
  for (const std::vector<Cell>& row : rows) {
    if (const auto* d = std::get_if<double>(&row[0])) values.push_back(*d);
    if (const auto* i = std::get_if<std::int64_t>(&row[0])) values.push_back(static_cast<double>(*i));
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

void AddLinkTimeFunction(Store& store) {
  auto link_s = std::make_shared<std::map<std::int64_t, double>>();
  try {
    const std::optional<ModelFitRecord> fit = store.LatestModelFit("corrected");
    if (fit) {
      for (const RunObservation& run : LoadModelData(store, {}).runs) {
        try {
          const LinkParameters link = LinkFor(*fit, run.config);
          const IterationTraffic traffic = Traffic(run.config, 4.0 * static_cast<double>(run.parameters));
          (*link_s)[run.run_id] = traffic.latency_steps * link.alpha_s + traffic.link_bytes / link.bytes_per_s;
        } catch (const ModelError&) {
          // A profile the fit knows no link for: no bound for this run.
        }
      }
    }
  } catch (const StoreError&) {
    // A database without runs or model tables: every bound is unknown.
  }
  store.AddScalarFunction("link_time_s", 1, [link_s](const std::vector<Cell>& arguments) -> Cell {
    const auto* run_id = std::get_if<std::int64_t>(&arguments[0]);
    if (run_id == nullptr) return nullptr;
    const auto found = link_s->find(*run_id);
    if (found == link_s->end()) return nullptr;
    return found->second;
  });
}

}  // namespace dmlbench
