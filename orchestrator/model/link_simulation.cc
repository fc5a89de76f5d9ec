#include "orchestrator/model/link_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
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

}  // namespace

double SimulatedBytes(const Schedule& schedule, double burst_bytes) {
  const int n = static_cast<int>(schedule.size());
  double largest = 0;
  for (const auto& rounds : schedule) {
    for (const Round& round : rounds) {
      for (const Message& m : round.sends) largest = std::max(largest, m.bytes);
    }
  }
  const double eps = 1e-9 * std::max(largest, 1.0);
  // Resources: host h uploads through link h and downloads through n + h.
  std::vector<double> tokens(static_cast<std::size_t>(2 * n), burst_bytes);
  std::vector<Flow> flows;
  std::vector<std::size_t> next(static_cast<std::size_t>(n), 0);     // the round each rank is in
  std::vector<std::set<int>> sending(static_cast<std::size_t>(n));   // its round's sends in flight
  std::vector<std::vector<Message>> awaiting(static_cast<std::size_t>(n));
  std::vector<bool> posted(static_cast<std::size_t>(n), false);
  std::map<std::pair<int, int>, int> delivered, consumed;             // messages per (from, to)
  int ids = 0;

  // Moves each of `ranks` on as far as its messages allow. A rank's progress
  // depends only on messages delivered, which happens between calls, so
  // only the ranks a delivery touched need a look.
  auto advance = [&](const std::vector<int>& ranks) {
    for (int r : ranks) {
      while (next[r] < schedule[r].size()) {
        if (!posted[r]) {
          const Round& round = schedule[r][next[r]];
          for (const Message& m : round.sends) {
            if (m.peer < 0 || m.peer >= n) throw std::invalid_argument("a message to a rank beyond the schedule");
            flows.push_back({r, m.peer, m.bytes, ++ids});
            sending[r].insert(ids);
          }
          awaiting[r] = round.receives;
          posted[r] = true;
        }
        std::erase_if(awaiting[r], [&](const Message& m) {
          const std::pair<int, int> pair{m.peer, r};
          if (delivered[pair] <= consumed[pair]) return false;
          ++consumed[pair];
          return true;
        });
        if (!sending[r].empty() || !awaiting[r].empty()) break;
        ++next[r];
        posted[r] = false;
      }
    }
  };

  double time = 0;
  std::vector<int> everyone(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) everyone[r] = r;
  advance(everyone);
  while (!flows.empty()) {
    std::vector<double> capacity(tokens.size());
    for (std::size_t l = 0; l < tokens.size(); ++l) capacity[l] = tokens[l] > eps ? kBurstRate : 1.0;
    const std::vector<double> rate = FairRates(flows, n, std::move(capacity));
    std::vector<double> use(tokens.size(), 0);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      use[flows[f].from] += rate[f];
      use[n + flows[f].to] += rate[f];
    }
    // Until the next message arrives or a bucket runs dry.
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < flows.size(); ++f) step = std::min(step, flows[f].left / rate[f]);
    for (std::size_t l = 0; l < tokens.size(); ++l) {
      if (tokens[l] > eps && use[l] > 1) step = std::min(step, tokens[l] / (use[l] - 1));
    }
    if (!std::isfinite(step)) throw std::logic_error("link simulation: messages in flight that never move");
    time += step;
    for (std::size_t l = 0; l < tokens.size(); ++l) {
      tokens[l] = std::clamp(tokens[l] - (use[l] - 1) * step, 0.0, burst_bytes);
    }
    std::vector<int> touched;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      flows[f].left -= rate[f] * step;
      if (flows[f].left <= eps) {
        ++delivered[{flows[f].from, flows[f].to}];
        sending[flows[f].from].erase(flows[f].id);
        touched.push_back(flows[f].from);
        touched.push_back(flows[f].to);
      }
    }
    std::erase_if(flows, [eps](const Flow& f) { return f.left <= eps; });
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    advance(touched);
  }
  for (int r = 0; r < n; ++r) {
    if (next[r] < schedule[r].size()) {
      throw std::invalid_argument("rank " + std::to_string(r) + " waits for a message no rank sends");
    }
  }
  return time;
}

}  // namespace dmlbench
