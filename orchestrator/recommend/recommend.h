// Recommend: the exhaustive search behind `dmlbench model recommend`. Every
// candidate of a stated space (architecture, workers, servers, batch per
// worker) on every type of an instance catalog is predicted by one stored
// fit exactly as `model predict` predicts that configuration (the same
// ModelConfig, the same Predict and IntervalOf), priced from the catalog,
// and either kept — it meets the deadline (or the budget) at its point
// estimate — and ranked, or ruled out with the reason. Owns the search and
// the reading of which catalog types the fit's calibration hosts were; not
// the printing (answer.h) nor the model. Pure given its
// inputs; thread-safe (the models are).
#ifndef DMLBENCH_ORCHESTRATOR_RECOMMEND_RECOMMEND_H_
#define DMLBENCH_ORCHESTRATOR_RECOMMEND_RECOMMEND_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/model/coverage.h"
#include "orchestrator/model/interval.h"
#include "orchestrator/model/models.h"
#include "orchestrator/recommend/catalog.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A request recommend cannot answer (a malformed duration, an empty
// candidate space). what() says which and why.
class RecommendError : public Error {
 public:
  using Error::Error;
};

// What is to be trained.
struct Workload {
  std::vector<int> hidden = {128, 32};                     // layer widths between input and output
  std::int64_t train_samples = kFashionMnistTrainSamples;  // per epoch
  int epochs = 1;
};

// The configurations to try on every type; servers apply to ps alone.
struct CandidateSpace {
  std::vector<Architecture> architectures;
  std::vector<int> workers;
  std::vector<int> servers = {1};
  std::vector<int> batch_sizes = {100};  // per worker
};

// Finish by a deadline for the least money, or as fast as a budget allows.
struct Goal {
  enum class Kind { kDeadline, kBudget };
  Kind kind = Kind::kDeadline;
  double deadline_s = 0;   // kDeadline: training time, seconds
  double budget = 0;       // kBudget: in the catalog's currency
};

// "2h", "90m", "1h30m", "45s", "1.5h", "2d": a duration in seconds (d, h, m,
// s; at least one part, each unit at most once and the largest first;
// greater than 0). Throws RecommendError naming the text.
double ParseDuration(const std::string& text);

// Which hosts the fit's calibration runs ran on: their instance_type tags
// (EC2 inventories) and CPU shares (the emulated cluster's cpu_cores tag; 0
// uncapped). Throws StoreError.
struct CalibratedHosts {
  std::set<std::string> instance_types;
  std::set<double> cpu_shares;
};
CalibratedHosts CalibratedHostsOf(const Store& store, const ModelFitRecord& fit);

// One candidate kept: its prediction, its price and what it rests on.
struct Estimate {
  ModelConfig config;              // as `model predict` takes it
  const InstanceType* type = nullptr;  // borrowed from the catalog given to Recommend
  int hosts = 0;                   // one rank per host: workers + servers
  double epoch_s = 0;
  std::optional<EpochInterval> epoch_interval;  // nullopt: the fit has none
  double total_s = 0, total_low_s = 0, total_high_s = 0;  // epochs x (without an interval low = high = total)
  double cost = 0, cost_low = 0, cost_high = 0;           // hosts x price per hour x total
  std::string limited_by;          // Prediction::limited_by
  std::vector<std::string> beyond; // settings beyond the fit's calibration (CalibrationCoverage::Beyond)
  std::string assumption;          // the catalog's stated assumption about the type's compute, or ""
  bool meets_at_upper_end = false; // the goal holds at the interval's upper end (never without an interval)
};

// One candidate ruled out, or (config unset) every candidate on a type.
struct RuledOut {
  std::optional<ModelConfig> config;
  const InstanceType* type = nullptr;
  std::string reason;
  // How far it missed the goal (total / deadline or cost / budget), for
  // ordering the near misses first; 0 for the other reasons.
  double miss = 0;
};

struct Recommendation {
  std::vector<Estimate> ranked;     // meet the goal at the point estimate; best first
  // The best of `ranked` that meets the goal at its interval's upper end
  // (an index into ranked); nullopt when none does.
  std::optional<std::size_t> sure;
  std::vector<RuledOut> ruled_out;  // whole types first, then near misses first
  std::int64_t candidates = 0;      // configurations x types tried
};

// The most candidates (configurations x instance types) one search tries.
// Each is predicted and kept in memory (about 0.9 KB), so the bound keeps
// a search within about 200 MB and a few seconds; a space larger than any
// question of a cluster's size asks is refused before anything is
// predicted (docs/recommend.md).
inline constexpr std::int64_t kMaxCandidates = 200000;

// How many candidates `space` gives on each of `types` instance types.
std::int64_t CandidateCount(const CandidateSpace& space, std::size_t types);

// The search. `hosts` says which types are calibrated (a type the catalog
// calls calibrated that they do not hold is ruled out); `coverage` is the
// fit's (CalibrationCoverage on the database's runs). Ranked by cost under
// a deadline, by total time under a budget; ties by the other, then by
// fewer hosts. Throws RecommendError for an empty space, one of more than
// kMaxCandidates candidates, or no epochs.
Recommendation Recommend(const PerformanceModel& model, const ModelFitRecord& fit, const CalibrationCoverage& coverage,
                         const CalibratedHosts& hosts, const Catalog& catalog, const CandidateSpace& space,
                         const Workload& workload, const Goal& goal);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RECOMMEND_RECOMMEND_H_
