#include "orchestrator/recommend/recommend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>


namespace dmlbench {
namespace {

constexpr double kShareTolerance = 1e-9;

std::string Text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// "%.4g" as the tables print it.
std::string Short(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// 1440000 as "1,440,000".
std::string Grouped(std::int64_t value) {
  std::string digits = std::to_string(value), grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

bool HasShare(const std::set<double>& shares, double share) {
  return std::any_of(shares.begin(), shares.end(), [&](double s) { return std::fabs(s - share) < kShareTolerance; });
}

// Why a type the catalog calls calibrated is not, or "" when it is.
std::string NotCalibrated(const InstanceType& type, const CalibratedHosts& hosts, std::int64_t fit_id) {
  if (type.compute != ComputeSource::kCalibrated) return "";
  const std::string fit = "fit " + std::to_string(fit_id);
  if (type.cpu_share > 0) {
    if (HasShare(hosts.cpu_shares, type.cpu_share)) return "";
    std::string shares;
    for (double s : hosts.cpu_shares) shares += (shares.empty() ? "" : ", ") + (s > 0 ? Text(s) + " core" : "uncapped");
    return "the catalog calls it calibrated, but no calibration run of " + fit + " ran on hosts of " +
           Text(type.cpu_share) + " core (its hosts had " + (shares.empty() ? "none" : shares) + ")";
  }
  if (hosts.instance_types.count(type.name)) return "";
  return "the catalog calls it calibrated, but no calibration run of " + fit + " ran on hosts tagged instance_type=" +
         type.name;
}

// The CPU share the model is given for `type`: its own, or the one of the
// type it is assumed to compute as.
double ShareOf(const InstanceType& type, const Catalog& catalog) {
  if (type.compute != ComputeSource::kAssumed) return type.cpu_share;
  return catalog.Find(type.assumed_like)->cpu_share;
}

// Every configuration of the space, ps once per server count, the others once.
std::vector<ModelConfig> Configurations(const CandidateSpace& space, const Workload& workload) {
  std::vector<ModelConfig> configs;
  for (const Architecture architecture : space.architectures) {
    const std::vector<int> no_servers = {0};
    const std::vector<int>& servers = architecture == Architecture::kPs ? space.servers : no_servers;
    for (const int k : servers) {
      for (const int w : space.workers) {
        for (const int b : space.batch_sizes) {
          ModelConfig config;
          config.architecture = architecture;
          config.workers = w;
          config.servers = k;
          config.batch_size = b;
          config.hidden = workload.hidden;
          config.train_samples = workload.train_samples;
          configs.push_back(config);
        }
      }
    }
  }
  return configs;
}

// The key a candidate is ranked by: under a deadline cost then time, under
// a budget time then cost; then fewer hosts (a stable sort keeps the
// catalog's and the space's order after that).
std::tuple<double, double, int> RankKey(const Estimate& e, const Goal& goal) {
  const bool deadline = goal.kind == Goal::Kind::kDeadline;
  return {deadline ? e.cost : e.total_s, deadline ? e.total_s : e.cost, e.hosts};
}

}  // namespace

double ParseDuration(const std::string& text) {
  const std::string expected = "a duration must be numbers with units d, h, m or s (e.g. 2h, 90m, 1h30m), got \"" +
                               text + "\"";
  double seconds = 0;
  double previous_scale = 0;  // of the unit before; each must be smaller
  std::size_t at = 0;
  if (text.empty()) throw RecommendError(expected);
  while (at < text.size()) {
    const char* begin = text.c_str() + at;
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (end == begin || *end == '\0' || !std::isfinite(value) || value < 0 || *begin == '-' || *begin == '+' ||
        std::isspace(static_cast<unsigned char>(*begin))) {
      throw RecommendError(expected);
    }
    const char unit = *end;
    const double scale = unit == 'd' ? 86400 : unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 0;
    if (scale == 0) throw RecommendError(expected);
    if (previous_scale > 0 && scale >= previous_scale) {
      throw RecommendError("a duration names each unit once, the largest first (e.g. 1h30m), got \"" + text + "\"");
    }
    previous_scale = scale;
    seconds += value * scale;
    at = static_cast<std::size_t>(end - text.c_str()) + 1;
  }
  if (!(seconds > 0)) throw RecommendError("a duration must be greater than 0, got \"" + text + "\"");
  return seconds;
}

std::int64_t CandidateCount(const CandidateSpace& space, std::size_t types) {
  std::int64_t architectures = 0;
  for (const Architecture architecture : space.architectures) {
    architectures += architecture == Architecture::kPs ? static_cast<std::int64_t>(space.servers.size()) : 1;
  }
  std::int64_t count = architectures;
  for (const std::size_t factor : {space.workers.size(), space.batch_sizes.size(), types}) {
    if (__builtin_mul_overflow(count, static_cast<std::int64_t>(factor), &count)) {
      return std::numeric_limits<std::int64_t>::max();
    }
  }
  return count;
}

CalibratedHosts CalibratedHostsOf(const Store& store, const ModelFitRecord& fit) {
  CalibratedHosts hosts;
  if (fit.runs.empty()) return hosts;
  const std::map<std::int64_t, std::vector<HostTags>> tags = store.CompleteRunHostTags();
  for (const ModelFitRunRow& row : fit.runs) {
    const auto it = tags.find(row.run_id);
    if (it == tags.end()) continue;
    for (const HostTags& host : it->second) {
      if (const auto type = host.tags.find("instance_type"); type != host.tags.end()) {
        hosts.instance_types.insert(type->second);
      }
      hosts.cpu_shares.insert(host.cpu_cores);
    }
  }
  return hosts;
}

Recommendation Recommend(const PerformanceModel& model, const ModelFitRecord& fit, const CalibrationCoverage& coverage,
                         const CalibratedHosts& hosts, const Catalog& catalog, const CandidateSpace& space,
                         const Workload& workload, const Goal& goal) {
  if (space.architectures.empty() || space.workers.empty() || space.batch_sizes.empty() ||
      (space.servers.empty() &&
       std::find(space.architectures.begin(), space.architectures.end(), Architecture::kPs) != space.architectures.end())) {
    throw RecommendError("the candidate space is empty: give architectures, workers, batch sizes (and servers for ps)");
  }
  if (workload.epochs < 1) throw RecommendError("epochs must be at least 1, got " + std::to_string(workload.epochs));
  if (const std::int64_t count = CandidateCount(space, catalog.types.size()); count > kMaxCandidates) {
    throw RecommendError("the candidate space holds " + Grouped(count) + " candidates (" +
                         Grouped(count / static_cast<std::int64_t>(catalog.types.size())) + " configurations x " +
                         std::to_string(catalog.types.size()) + " instance types), more than the " +
                         Grouped(kMaxCandidates) + " one search tries: give fewer --workers, --batch, --servers or "
                         "--architecture values, or a catalog of fewer types");
  }
  const std::vector<ModelConfig> configs = Configurations(space, workload);
  Recommendation result;
  result.ranked.reserve(configs.size() * catalog.types.size());
  std::vector<RuledOut> misses;
  for (const InstanceType& type : catalog.types) {
    result.candidates += static_cast<std::int64_t>(configs.size());
    if (const std::string why = NotCalibrated(type, hosts, fit.fit_id); !why.empty()) {
      result.ruled_out.push_back({std::nullopt, &type, why, 0});
      continue;
    }
    const std::string assumption =
        type.compute == ComputeSource::kAssumed
            ? "compute assumed as " + type.assumed_like + "'s (the catalog's statement, not measured)"
            : "";
    for (ModelConfig config : configs) {
      config.network.bandwidth_bits_per_s = type.bandwidth_bits_per_s;
      config.network.latency_s = type.latency_s;
      config.cpu_cores = ShareOf(type, catalog);
      if (IterationsPerEpoch(config) < 1) {
        result.ruled_out.push_back({config, &type,
                                    "no whole iteration: b w = " + std::to_string(config.batch_size * config.workers) +
                                        " samples exceed the " + std::to_string(config.train_samples) + " of an epoch",
                                    0});
        continue;
      }
      Prediction p;
      try {
        p = model.Predict(fit, config);
      } catch (const ModelError& e) {
        result.ruled_out.push_back({config, &type, std::string("the model cannot predict it: ") + e.what(), 0});
        continue;
      }
      Estimate e;
      e.config = config;
      e.type = &type;
      e.hosts = config.workers + config.servers;
      e.epoch_s = p.epoch_s;
      e.epoch_interval = IntervalOf(fit, config, p.epoch_s);
      e.total_s = workload.epochs * p.epoch_s;
      e.total_low_s = e.epoch_interval ? workload.epochs * e.epoch_interval->low_s : e.total_s;
      e.total_high_s = e.epoch_interval ? workload.epochs * e.epoch_interval->high_s : e.total_s;
      const double per_second = e.hosts * type.price_per_hour / 3600;
      e.cost = per_second * e.total_s;
      e.cost_low = per_second * e.total_low_s;
      e.cost_high = per_second * e.total_high_s;
      e.limited_by = p.limited_by;
      e.assumption = assumption;
      if (goal.kind == Goal::Kind::kDeadline) {
        if (e.total_s > goal.deadline_s) {
          misses.push_back({config, &type,
                            "misses the deadline: " + Short(e.total_s) + " s predicted, " + Short(goal.deadline_s) +
                                " s allowed",
                            e.total_s / goal.deadline_s});
          continue;
        }
        e.meets_at_upper_end = e.epoch_interval && e.total_high_s <= goal.deadline_s;
      } else {
        if (e.cost > goal.budget) {
          misses.push_back({config, &type,
                            "over the budget: " + Short(e.cost) + " " + catalog.currency + " predicted, " +
                                Short(goal.budget) + " allowed",
                            e.cost / goal.budget});
          continue;
        }
        e.meets_at_upper_end = e.epoch_interval && e.cost_high <= goal.budget;
      }
      result.ranked.push_back(std::move(e));
    }
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
            [&](const Estimate& a, const Estimate& b) { return RankKey(a, goal) < RankKey(b, goal); });
  // What it rests on, for the kept ones only.
  for (Estimate& e : result.ranked) e.beyond = coverage.Beyond(e.config);
  for (std::size_t i = 0; i < result.ranked.size(); ++i) {
    if (result.ranked[i].meets_at_upper_end) {
      result.sure = i;
      break;
    }
  }
  std::stable_sort(misses.begin(), misses.end(), [](const RuledOut& a, const RuledOut& b) { return a.miss < b.miss; });
  // Whole types first, then the candidates that cannot run or be
  // predicted, then the near misses.
  std::stable_partition(result.ruled_out.begin(), result.ruled_out.end(),
                        [](const RuledOut& r) { return !r.config.has_value(); });
  result.ruled_out.insert(result.ruled_out.end(), misses.begin(), misses.end());
  return result;
}

}  // namespace dmlbench
