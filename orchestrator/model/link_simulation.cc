#include "orchestrator/model/link_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

  // Moves every rank on as far as its messages allow.
  auto advance = [&] {
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < n; ++r) {
        if (next[r] >= schedule[r].size()) continue;
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
        if (sending[r].empty() && awaiting[r].empty()) {
          ++next[r];
          posted[r] = false;
          moved = true;
        }
      }
    }
  };

  double time = 0;
  advance();
  while (!flows.empty()) {
    // Max-min fair rates by progressive filling over the links.
    std::vector<double> capacity(tokens.size());
    for (std::size_t l = 0; l < tokens.size(); ++l) capacity[l] = tokens[l] > eps ? kBurstRate : 1.0;
    std::vector<double> rate(flows.size(), 0);
    std::vector<bool> fixed(flows.size(), false);
    for (std::size_t unfixed = flows.size(); unfixed > 0;) {
      std::vector<int> count(tokens.size(), 0);
      for (std::size_t f = 0; f < flows.size(); ++f) {
        if (fixed[f]) continue;
        ++count[flows[f].from];
        ++count[n + flows[f].to];
      }
      std::size_t bottleneck = 0;
      double share = std::numeric_limits<double>::infinity();
      for (std::size_t l = 0; l < tokens.size(); ++l) {
        if (count[l] > 0 && capacity[l] / count[l] < share) share = capacity[l] / count[l], bottleneck = l;
      }
      for (std::size_t f = 0; f < flows.size(); ++f) {
        const std::size_t up = flows[f].from, down = n + flows[f].to;
        if (fixed[f] || (up != bottleneck && down != bottleneck)) continue;
        rate[f] = share;
        fixed[f] = true;
        --unfixed;
        capacity[up] -= share;
        capacity[down] -= share;
      }
    }
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
    time += step;
    for (std::size_t l = 0; l < tokens.size(); ++l) {
      tokens[l] = std::clamp(tokens[l] - (use[l] - 1) * step, 0.0, burst_bytes);
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      flows[f].left -= rate[f] * step;
      if (flows[f].left <= eps) {
        ++delivered[{flows[f].from, flows[f].to}];
        sending[flows[f].from].erase(flows[f].id);
      }
    }
    std::erase_if(flows, [eps](const Flow& f) { return f.left <= eps; });
    advance();
  }
  for (int r = 0; r < n; ++r) {
    if (next[r] < schedule[r].size()) {
      throw std::invalid_argument("rank " + std::to_string(r) + " waits for a message no rank sends");
    }
  }
  return time;
}

}  // namespace dmlbench
