#include "orchestrator/model/link_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace dmlbench {

Schedule RabenseifnerSchedule(int ranks, double gradient_bytes) {
  const double W = gradient_bytes;
  int p = 1;
  while (p * 2 <= ranks) p *= 2;
  const int rem = ranks - p;
  Schedule schedule(static_cast<std::size_t>(std::max(ranks, 0)));
  // The fold: ranks below 2 rem swap halves with their partner; the odd one
  // then hands its reduced half to the even one and leaves.
  std::vector<int> vrank(schedule.size());
  for (int r = 0; r < ranks; ++r) {
    std::vector<Round>& rounds = schedule[r];
    if (r < 2 * rem) {
      const int partner = r % 2 == 1 ? r - 1 : r + 1;
      rounds.push_back({{{partner, W / 2}}, {{partner, W / 2}}});
      if (r % 2 == 1) {
        rounds.push_back({{{partner, W / 2}}, {}});
        vrank[r] = -1;
      } else {
        rounds.push_back({{}, {{partner, W / 2}}});
        vrank[r] = r / 2;
      }
    } else {
      vrank[r] = r - rem;
    }
  }
  auto real = [rem](int v) { return v < rem ? 2 * v : v + rem; };
  // Reduce-scatter by recursive halving, then allgather by recursive
  // doubling with the same peers and windows in reverse.
  for (int r = 0; r < ranks; ++r) {
    if (vrank[r] < 0) continue;
    std::vector<Message> steps;
    double window = W;
    for (int mask = 1; mask < p; mask *= 2) {
      steps.push_back({real(vrank[r] ^ mask), window / 2});
      window /= 2;
    }
    for (const Message& m : steps) schedule[r].push_back({{m}, {m}});
    for (auto m = steps.rbegin(); m != steps.rend(); ++m) schedule[r].push_back({{*m}, {*m}});
  }
  // The result back to the ranks that left.
  for (int r = 0; r < 2 * rem; ++r) {
    if (r % 2 == 1) {
      schedule[r].push_back({{}, {{r - 1, W}}});
    } else {
      schedule[r].push_back({{{r + 1, W}}, {}});
    }
  }
  return schedule;
}

namespace {

// A message moving from `from` to `to`.
struct Flow {
  int from = 0, to = 0;
  double left = 0;
  int id = 0;
};

// What a link passes at once while its bucket holds tokens, against its
// rate of 1: "at once", beside the rate (the result hardly depends on it).
constexpr double kBurstRate = 1000;

// Max-min fair rates by progressive filling: the link whose capacity left
// per unfixed flow is least fixes its flows at that share, and so on. A
// heap of (share, link) with stale entries skipped keeps it near
// O((flows + links) log links) for thousands of ranks.
std::vector<double> FairRates(const std::vector<Flow>& flows, int n, std::vector<double> capacity) {
  const std::size_t links = capacity.size();
  std::vector<std::vector<std::size_t>> through(links);
  std::vector<int> count(links, 0);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    through[flows[f].from].push_back(f);
    through[n + flows[f].to].push_back(f);
    ++count[flows[f].from];
    ++count[n + flows[f].to];
  }
  using Entry = std::pair<double, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (std::size_t l = 0; l < links; ++l) {
    if (count[l] > 0) heap.push({capacity[l] / count[l], l});
  }
  std::vector<double> rate(flows.size(), 0);
  std::vector<bool> fixed(flows.size(), false);
  while (!heap.empty()) {
    const auto [share, l] = heap.top();
    heap.pop();
    if (count[l] == 0 || share != capacity[l] / count[l]) continue;  // stale
    for (std::size_t f : through[l]) {
      if (fixed[f]) continue;
      fixed[f] = true;
      rate[f] = share;
      for (std::size_t end : {static_cast<std::size_t>(flows[f].from), static_cast<std::size_t>(n + flows[f].to)}) {
        capacity[end] = std::max(0.0, capacity[end] - share);
        if (--count[end] > 0 && end != l) heap.push({capacity[end] / count[end], end});
      }
    }
  }
  return rate;
}

// One play of a schedule: the messages in flight, the round each rank is
// in, and each link's tokens. Resources: host h uploads through link h and
// downloads through n + h.
class LinkSimulation {
 public:
  LinkSimulation(const Schedule& schedule, double burst_bytes)
      : schedule_(schedule), n_(static_cast<int>(schedule.size())), burst_bytes_(burst_bytes),
        eps_(1e-9 * std::max(LargestMessage(schedule), 1.0)),
        tokens_(static_cast<std::size_t>(2 * n_), burst_bytes), next_(static_cast<std::size_t>(n_), 0),
        sending_(static_cast<std::size_t>(n_)), awaiting_(static_cast<std::size_t>(n_)),
        posted_(static_cast<std::size_t>(n_), false) {}

  // Plays every rank's rounds to the end; returns the time it took.
  double Run() {
    std::vector<int> everyone(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) everyone[r] = r;
    Advance(everyone);
    while (!flows_.empty()) Advance(Step());
    for (int r = 0; r < n_; ++r) {
      if (next_[r] < schedule_[r].size()) {
        throw std::invalid_argument("rank " + std::to_string(r) + " waits for a message no rank sends");
      }
    }
    return time_;
  }

 private:
  static double LargestMessage(const Schedule& schedule) {
    double largest = 0;
    for (const auto& rounds : schedule) {
      for (const Round& round : rounds) {
        for (const Message& m : round.sends) largest = std::max(largest, m.bytes);
      }
    }
    return largest;
  }

  // Moves each of `ranks` on as far as its messages allow. A rank's progress
  // depends only on messages delivered, which happens between calls, so
  // only the ranks a delivery touched need a look.
  void Advance(const std::vector<int>& ranks) {
    for (int r : ranks) {
      while (next_[r] < schedule_[r].size()) {
        if (!posted_[r]) Post(r);
        std::erase_if(awaiting_[r], [&](const Message& m) {
          const std::pair<int, int> pair{m.peer, r};
          if (delivered_[pair] <= consumed_[pair]) return false;
          ++consumed_[pair];
          return true;
        });
        if (!sending_[r].empty() || !awaiting_[r].empty()) break;
        ++next_[r];
        posted_[r] = false;
      }
    }
  }

  // Rank r's sends of its round in flight, and its receives awaited.
  void Post(int r) {
    const Round& round = schedule_[r][next_[r]];
    for (const Message& m : round.sends) {
      if (m.peer < 0 || m.peer >= n_) throw std::invalid_argument("a message to a rank beyond the schedule");
      flows_.push_back({r, m.peer, m.bytes, ++ids_});
      sending_[r].insert(ids_);
    }
    awaiting_[r] = round.receives;
    posted_[r] = true;
  }

  // The flows at their fair rates until the next message arrives or a
  // bucket runs dry; returns the ranks whose messages arrived, once each.
  std::vector<int> Step() {
    std::vector<double> capacity(tokens_.size());
    for (std::size_t l = 0; l < tokens_.size(); ++l) capacity[l] = tokens_[l] > eps_ ? kBurstRate : 1.0;
    const std::vector<double> rate = FairRates(flows_, n_, std::move(capacity));
    std::vector<double> use(tokens_.size(), 0);
    for (std::size_t f = 0; f < flows_.size(); ++f) {
      use[flows_[f].from] += rate[f];
      use[n_ + flows_[f].to] += rate[f];
    }
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < flows_.size(); ++f) step = std::min(step, flows_[f].left / rate[f]);
    for (std::size_t l = 0; l < tokens_.size(); ++l) {
      if (tokens_[l] > eps_ && use[l] > 1) step = std::min(step, tokens_[l] / (use[l] - 1));
    }
    if (!std::isfinite(step)) throw std::logic_error("link simulation: messages in flight that never move");
    time_ += step;
    for (std::size_t l = 0; l < tokens_.size(); ++l) {
      tokens_[l] = std::clamp(tokens_[l] - (use[l] - 1) * step, 0.0, burst_bytes_);
    }
    std::vector<int> touched;
    for (std::size_t f = 0; f < flows_.size(); ++f) {
      flows_[f].left -= rate[f] * step;
      if (flows_[f].left <= eps_) {
        ++delivered_[{flows_[f].from, flows_[f].to}];
        sending_[flows_[f].from].erase(flows_[f].id);
        touched.push_back(flows_[f].from);
        touched.push_back(flows_[f].to);
      }
    }
    std::erase_if(flows_, [this](const Flow& f) { return f.left <= eps_; });
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    return touched;
  }

  const Schedule& schedule_;
  const int n_;
  const double burst_bytes_;
  const double eps_;                              // bytes left that count as delivered
  std::vector<double> tokens_;                    // per link
  std::vector<Flow> flows_;                       // messages in flight
  std::vector<std::size_t> next_;                 // the round each rank is in
  std::vector<std::set<int>> sending_;            // its round's sends in flight
  std::vector<std::vector<Message>> awaiting_;    // its round's receives not yet delivered
  std::vector<bool> posted_;                      // its round's sends are in flight
  std::map<std::pair<int, int>, int> delivered_, consumed_;  // messages per (from, to)
  int ids_ = 0;
  double time_ = 0;
};

}  // namespace

double SimulatedBytes(const Schedule& schedule, double burst_bytes) {
  return LinkSimulation(schedule, burst_bytes).Run();
}

double RabenseifnerBytes(int ranks, double gradient_bytes, double burst_bytes) {
  static std::mutex mutex;
  static std::map<std::tuple<int, double, double>, double> played;
  const std::tuple<int, double, double> key{ranks, gradient_bytes, burst_bytes};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = played.find(key); it != played.end()) return it->second;
  }
  // Played outside the lock: two threads may both play a triple, to the same answer.
  const double bytes = SimulatedBytes(RabenseifnerSchedule(ranks, gradient_bytes), burst_bytes);
  const std::lock_guard<std::mutex> lock(mutex);
  played.emplace(key, bytes);
  return bytes;
}

}  // namespace dmlbench
