#include "orchestrator/plan/schedule.h"

#include <algorithm>
#include <set>
#include <utility>

namespace dmlbench {

Schedule::Schedule(const std::vector<PlanItem>& plan, std::vector<std::size_t> order, int runs_per_job,
                   std::function<bool(std::size_t)> runnable, JobCapacity capacity)
    : plan_(plan), runnable_(std::move(runnable)),
      per_job_(static_cast<std::size_t>(std::max(1, runs_per_job))), pending_(std::move(order)),
      started_(plan.size(), false), capacity_(std::move(capacity)), busy_(capacity_.hosts.size(), false),
      lost_(capacity_.hosts.size(), false) {
  if (capacity_.hosts.empty()) capacity_.max_concurrent = 1;
  capacity_.max_concurrent = std::max(1, capacity_.max_concurrent);
}

// Whether a run may share a job: one with a warm-up epoch. A run of one
// epoch measures that epoch, cold start and all, and in a job's later place
// it would start warm (the quickstart's 12 one-epoch runs: 1.7 s of epochs
// alone, 1.4 s in shared jobs); a warm-up epoch takes that difference, and
// the steady epochs after it are the same either way (docs/running.md).
bool Schedule::Shareable(std::size_t index) const { return plan_[index].run.params.epochs >= 2; }

// Whether two runs can share one job: what a launcher sets up before
// mpirun is the same for both (ranks, dataset, network). The trainer loads
// the data again for a run whose data differ (a synthetic run's are drawn
// from its seed).
bool Schedule::SameJob(std::size_t a, std::size_t b) const {
  const RunParams& x = plan_[a].run.params;
  const RunParams& y = plan_[b].run.params;
  return x.ranks() == y.ranks() && x.dataset == y.dataset && x.network == y.network;
}

void Schedule::Prune() {
  while (!alone_.empty() && !runnable_(alone_.front())) alone_.pop_front();
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [this](std::size_t i) { return started_[i] || !runnable_(i); }),
                 pending_.end());
}

std::vector<std::size_t> Schedule::FreeHostsFor(int ranks) const {
  std::vector<std::size_t> chosen;
  int slots = 0;
  for (std::size_t i = 0; i < capacity_.hosts.size() && slots < ranks; ++i) {
    if (busy_[i] || lost_[i]) continue;
    chosen.push_back(i);
    slots += capacity_.hosts[i].slots;
  }
  if (slots < ranks) chosen.clear();
  return chosen;
}

std::optional<ScheduledJob> Schedule::FindWork() {
  Prune();
  if (in_flight_ >= capacity_.max_concurrent) return std::nullopt;
  // The candidates in the order they are wanted: runs to try again, then
  // the sweep's order. The first that fits starts; a larger run passed over
  // waits for hosts, in its place.
  std::vector<std::pair<std::size_t, bool>> candidates;  // plan index, from alone_
  for (std::size_t index : alone_) candidates.emplace_back(index, true);
  for (std::size_t index : pending_) candidates.emplace_back(index, false);
  for (const auto& [index, alone] : candidates) {
    const int ranks = plan_[index].run.params.ranks();
    std::vector<std::size_t> hosts;
    if (!capacity_.hosts.empty()) {
      hosts = FreeHostsFor(ranks);
      if (hosts.empty()) continue;
    }
    ScheduledJob job;
    job.id = next_id_++;
    job.ranks = ranks;
    job.runs = {index};
    if (alone) {
      alone_.erase(std::find(alone_.begin(), alone_.end(), index));
    } else {
      started_[index] = true;
      std::set<std::string> points = {ConfigurationJson(plan_[index].run.params)};
      for (std::size_t other : pending_) {
        if (job.runs.size() >= per_job_) break;
        if (started_[other] || !runnable_(other) || !SameJob(index, other) || !Shareable(index) ||
            !Shareable(other) || !points.insert(ConfigurationJson(plan_[other].run.params)).second) {
          continue;
        }
        started_[other] = true;
        job.runs.push_back(other);
      }
    }
    for (std::size_t host : hosts) {
      busy_[host] = true;
      job.hosts.push_back(capacity_.hosts[host].name);
    }
    ++in_flight_;
    Prune();
    return job;
  }
  return std::nullopt;
}

void Schedule::Finished(const ScheduledJob& job, const std::vector<std::size_t>& again,
                        const std::vector<std::string>& lost) {
  --in_flight_;
  for (std::size_t i = 0; i < capacity_.hosts.size(); ++i) {
    const std::string& name = capacity_.hosts[i].name;
    if (std::find(job.hosts.begin(), job.hosts.end(), name) != job.hosts.end()) busy_[i] = false;
    if (std::find(lost.begin(), lost.end(), name) != lost.end()) lost_[i] = true;
  }
  alone_.insert(alone_.begin(), again.begin(), again.end());
}

bool Schedule::Exhausted() {
  Prune();
  return alone_.empty() && pending_.empty();
}

int Schedule::RemainingRanks() {
  Prune();
  int ranks = 0;
  for (std::size_t index : alone_) ranks = std::max(ranks, plan_[index].run.params.ranks());
  for (std::size_t index : pending_) ranks = std::max(ranks, plan_[index].run.params.ranks());
  return ranks;
}

int Schedule::TotalSlots() const {
  int slots = 0;
  for (const LaunchHost& host : capacity_.hosts) slots += host.slots;
  return slots;
}

std::optional<std::pair<std::size_t, std::string>> Schedule::Unplaceable() {
  Prune();
  if (capacity_.hosts.empty()) return std::nullopt;
  int slots = 0;
  std::string lost;
  for (std::size_t i = 0; i < capacity_.hosts.size(); ++i) {
    if (!lost_[i]) {
      slots += capacity_.hosts[i].slots;
    } else {
      lost += (lost.empty() ? "" : ", ") + capacity_.hosts[i].name;
    }
  }
  std::vector<std::size_t> left(alone_.begin(), alone_.end());
  left.insert(left.end(), pending_.begin(), pending_.end());
  for (std::size_t index : left) {
    const int ranks = plan_[index].run.params.ranks();
    if (ranks <= slots) continue;
    return std::make_pair(index, "needs " + std::to_string(ranks) + " ranks but the hosts that are up have " +
                                     std::to_string(slots) + " slots" + (lost.empty() ? "" : " (down: " + lost + ")"));
  }
  return std::nullopt;
}

}  // namespace dmlbench
