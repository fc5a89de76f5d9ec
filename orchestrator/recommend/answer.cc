#include "orchestrator/recommend/answer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "orchestrator/model/physics.h"

namespace dmlbench {
namespace {

constexpr double kSameRelative = 1e-9;

std::string Number(double value, const char* format = "%.4g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string Range(double low, double high) { return "[" + Number(low) + ", " + Number(high) + "]"; }

bool Same(double a, double b) { return std::fabs(a - b) <= kSameRelative * std::max(std::fabs(a), std::fabs(b)); }

// Equivalent for a reader: the same total and cost, and the same interval
// of each (an interval scaled per scheme can tell two schemes apart).
bool Equivalent(const Estimate& a, const Estimate& b) {
  return Same(a.total_s, b.total_s) && Same(a.cost, b.cost) && Same(a.total_low_s, b.total_low_s) &&
         Same(a.total_high_s, b.total_high_s) && a.meets_at_upper_end == b.meets_at_upper_end;
}

// A row's rank: its first candidate's, as --json numbers them.
std::string RankOf(const std::vector<std::vector<std::size_t>>& groups, std::size_t g) {
  return std::to_string(groups[g].front() + 1);
}

// "calibrated", or what is extrapolated and assumed, briefly: the setting
// each "beyond" phrase names (the words before its colon).
std::string RestsOn(const Estimate& e) {
  std::string text;
  for (const std::string& phrase : e.beyond) text += (text.empty() ? "" : "; ") + phrase.substr(0, phrase.find(':'));
  if (!text.empty()) text = "extrapolated: " + text;
  if (!e.assumption.empty()) text += (text.empty() ? "" : "; ") + std::string("assumed: compute as ") + e.type->assumed_like;
  return text.empty() ? "calibrated" : text;
}

// Whether the goal holds at the interval's upper end, in words.
std::string UpperEnd(const Estimate& e, const AnswerContext& c) {
  if (!e.epoch_interval) return "no interval";
  if (e.meets_at_upper_end) return "meets it";
  if (c.goal.kind == Goal::Kind::kDeadline) return "crosses: up to " + Number(e.total_high_s) + " s";
  return "crosses: up to " + Money(e.cost_high, c.catalog->currency);
}

std::string Candidates(std::size_t n) { return std::to_string(n) + (n == 1 ? " candidate" : " candidates"); }

// What a merged row stands for: each configuration with its types,
// "ring w=1 b=100 on cpu0.15-100mbit, cpu0.15-1gbit; mpi w=1 b=100 on ...".
std::string Members(const Recommendation& result, const std::vector<std::size_t>& group) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> types;
  for (std::size_t i : group) {
    const Estimate& e = result.ranked[i];
    const std::string label = ConfigLabel(e.config);
    if (!types.count(label)) order.push_back(label);
    types[label].push_back(e.type->name);
  }
  std::string text;
  for (const std::string& label : order) {
    std::string names;
    for (const std::string& name : types[label]) names += (names.empty() ? "" : ", ") + name;
    text += (text.empty() ? "" : "; ") + label + " on " + names;
  }
  return text;
}

std::string GoalText(const AnswerContext& c) {
  return c.goal.kind == Goal::Kind::kDeadline ? "finish within " + Number(c.goal.deadline_s) + " s for the least cost"
                                              : "finish fastest for at most " + Money(c.goal.budget, c.catalog->currency);
}

AnswerPart Header(const Recommendation& result, const AnswerContext& c) {
  const Catalog& catalog = *c.catalog;
  AnswerPart part;
  part.text = "fit " + std::to_string(c.fit_id) + " of " + c.model + "; catalog " + catalog.source_path + ": prices in " +
              catalog.currency + ", " + catalog.prices + ", as of " + catalog.prices_as_of + "\n" +
              std::to_string(result.candidates) + " candidates (configurations x instance types), " +
              std::to_string(c.epochs) + " epochs of " + std::to_string(c.samples) + " samples; goal: " + GoalText(c) +
              "; total = epochs x the steady epoch time (start-up and the first epoch's warm-up not counted), "
              "cost = hosts x price per hour x total\n\n";
  return part;
}

AnswerPart Ranked(const Recommendation& result, const std::vector<std::vector<std::size_t>>& groups,
                  std::size_t shown, std::optional<std::size_t> sure_group, const AnswerContext& c) {
  AnswerPart part;
  const std::string every = EveryCandidateLine(result, c.goal);
  if (!every.empty()) part.text = every + "\n";
  TextTable table;
  table.headers = {"rank", "configuration", "type", "hosts", "epoch, s", "epoch interval, s", "total, s",
                   "total interval, s", "cost", "cost interval", "at the upper end", "rests on", "stands for"};
  table.right = {true, false, false, true, true, false, true, false, true, false, false, false, false};
  const std::string& currency = c.catalog->currency;
  auto row_of = [&](std::size_t g) {
    const Estimate& e = result.ranked[groups[g].front()];
    const std::string interval = e.epoch_interval ? Range(e.epoch_interval->low_s, e.epoch_interval->high_s) + " (" +
                                                        Number(100 * e.epoch_interval->level, "%.0f%%") + ")"
                                                  : "";
    const std::string cost_interval =
        e.epoch_interval ? "[" + Amount(e.cost_low) + ", " + Amount(e.cost_high) + "] " + currency : "";
    table.rows.push_back({RankOf(groups, g), ConfigLabel(e.config), e.type->name, std::to_string(e.hosts),
                          Number(e.epoch_s), interval, Number(e.total_s),
                          e.epoch_interval ? Range(e.total_low_s, e.total_high_s) : "", Money(e.cost, currency),
                          cost_interval, UpperEnd(e, c), RestsOn(e),
                          groups[g].size() > 1 ? Candidates(groups[g].size()) + " alike" : ""});
  };
  for (std::size_t g = 0; g < shown; ++g) row_of(g);
  if (sure_group && *sure_group >= shown) row_of(*sure_group);
  part.table = std::move(table);
  return part;
}

// Below the ranked table: what merged rows stand for, the rows beyond
// --top, and the two answers.
std::string AfterRanked(const Recommendation& result, const std::vector<std::vector<std::size_t>>& groups,
                        std::size_t shown, std::optional<std::size_t> sure_group, const AnswerContext& c) {
  const std::string& currency = c.catalog->currency;
  std::string text;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size() < 2 || (g >= shown && g != sure_group)) continue;
    text += "  #" + RankOf(groups, g) + " stands for " + Candidates(groups[g].size()) +
            " of the same predicted time and cost: " + Members(result, groups[g]) + "\n";
  }
  if (groups.size() > shown) {
    text += "  and " + std::to_string(groups.size() - shown) + " more rows that meet the goal (--top, --json)\n";
  }
  const Estimate& best = result.ranked.front();
  text += "\nat the point estimate: #1 " + ConfigLabel(best.config) + " on " + best.type->name + ", " +
          Number(best.total_s) + " s, " + Money(best.cost, currency);
  if (best.epoch_interval && !best.meets_at_upper_end) {
    text += " — its interval crosses the " +
            (c.goal.kind == Goal::Kind::kDeadline ? "deadline (up to " + Number(best.total_high_s) + " s)"
                                                  : "budget (up to " + Money(best.cost_high, currency) + ")");
  }
  text += "\n";
  if (sure_group) {
    const Estimate& sure = result.ranked[groups[*sure_group].front()];
    text += "at the interval's upper end: #" + RankOf(groups, *sure_group) + " " + ConfigLabel(sure.config) +
            " on " + sure.type->name + ", up to " + Number(sure.total_high_s) + " s, up to " +
            Money(sure.cost_high, currency) + "\n";
  } else {
    text += "at the interval's upper end: no candidate meets the goal" +
            (c.fit_has_interval ? std::string() : " (fit " + std::to_string(c.fit_id) + " has no interval)") + "\n";
  }
  return text;
}

// What the shown rows rest on, in full, and the model's misses on the
// held-out configurations of their schemes.
std::string RestsOnText(const Recommendation& result, const std::vector<std::vector<std::size_t>>& groups,
                        std::size_t shown, std::optional<std::size_t> sure_group, const AnswerContext& c) {
  std::string text = "\nwhat the predictions rest on (validation runs are never fitted; errors of epoch time):\n";
  std::set<std::string> schemes;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g >= shown && g != sure_group) continue;
    for (std::size_t i : groups[g]) schemes.insert(SchemeLabel(result.ranked[i].config));
    const Estimate& e = result.ranked[groups[g].front()];
    if (e.beyond.empty() && e.assumption.empty()) continue;
    text += "  #" + RankOf(groups, g) + " " + ConfigLabel(e.config) + " on " + e.type->name + ":\n";
    for (const std::string& phrase : e.beyond) text += "    beyond its calibration: " + phrase + "\n";
    if (!e.assumption.empty()) text += "    assumption: " + e.assumption + "\n";
  }
  for (const std::string& scheme : schemes) {
    const auto summary = std::find_if(c.held_out.begin(), c.held_out.end(), [&](const ErrorSummary& s) {
      return s.architecture == scheme && s.split == "validation";
    });
    text += "  " + scheme + ": ";
    if (summary == c.held_out.end()) {
      text += "no validation run of it in this database: its error is unknown\n";
      continue;
    }
    text += "held-out configurations: median " + Number(100 * summary->median_abs, "%.1f%%") + ", p95 " +
            Number(100 * summary->p95_abs, "%.1f%%") + ", max " + Number(100 * summary->max_abs, "%.1f%%") +
            " over " + std::to_string(summary->points) + "\n";
  }
  return text;
}

// Ruled out: how many for each reason (the words before its colon), then
// the first --top of them.
AnswerPart RuledOutPart(const Recommendation& result, const AnswerContext& c) {
  std::map<std::string, int> counts;
  for (const RuledOut& r : result.ruled_out) {
    ++counts[r.config ? r.reason.substr(0, r.reason.find(':')) : "type not usable"];
  }
  AnswerPart part;
  part.text = "\nruled out: " + std::to_string(result.ruled_out.size()) + " (";
  bool first = true;
  for (const auto& [kind, count] : counts) {
    part.text += (first ? "" : ", ") + kind + " " + std::to_string(count);
    first = false;
  }
  part.text += "); whole types first, then near misses:\n";
  TextTable table;
  table.headers = {"configuration", "type", "why"};
  table.right = {false, false, false};
  const std::size_t shown = std::min(result.ruled_out.size(), c.top);
  for (std::size_t i = 0; i < shown; ++i) {
    const RuledOut& r = result.ruled_out[i];
    table.rows.push_back({r.config ? ConfigLabel(*r.config) : "(every configuration)", r.type->name, r.reason});
  }
  part.table = std::move(table);
  return part;
}

}  // namespace

std::string Amount(double amount) {
  const double size = std::fabs(amount);
  if (size == 0) return "0";
  if (size >= 1) return Number(amount, "%.2f");
  // Two significant digits in fixed notation, trailing zeros dropped (a
  // rounding up to the next decade gives one: 0.0000996 -> 0.0001).
  const int decimals = 1 - static_cast<int>(std::floor(std::log10(size)));
  std::string text = Number(amount, ("%." + std::to_string(decimals) + "f").c_str());
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string Money(double amount, const std::string& currency) { return Amount(amount) + " " + currency; }

std::vector<std::vector<std::size_t>> MergeEquivalent(const Recommendation& result) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < result.ranked.size(); ++i) {
    const Estimate& e = result.ranked[i];
    // Equivalent candidates rank next to each other (by cost or time,
    // then the other, then hosts): a group is a run of them.
    if (!groups.empty() && Equivalent(result.ranked[groups.back().front()], e)) {
      groups.back().push_back(i);
    } else {
      groups.push_back({i});
    }
  }
  return groups;
}

std::string EveryCandidateLine(const Recommendation& result, const Goal& goal) {
  if (result.ranked.empty() || static_cast<std::int64_t>(result.ranked.size()) != result.candidates) return "";
  const bool all_sure = std::all_of(result.ranked.begin(), result.ranked.end(),
                                    [](const Estimate& e) { return e.meets_at_upper_end; });
  return "every one of the " + Candidates(result.ranked.size()) + " meets the " +
         (goal.kind == Goal::Kind::kDeadline ? "deadline" : "budget") + " at its point estimate" +
         (all_sure ? " and at its interval's upper end" : "") + ": the ranking is by " +
         (goal.kind == Goal::Kind::kDeadline ? "cost" : "time") + " alone";
}

std::vector<AnswerPart> Answer(const Recommendation& result, const AnswerContext& c) {
  std::vector<AnswerPart> parts = {Header(result, c)};
  if (result.ranked.empty()) {
    parts.push_back({"no candidate meets the goal at its point estimate\n", std::nullopt});
  } else {
    const std::vector<std::vector<std::size_t>> groups = MergeEquivalent(result);
    const std::size_t shown = std::min(groups.size(), c.top);
    std::optional<std::size_t> sure_group;
    for (std::size_t g = 0; result.sure && g < groups.size() && !sure_group; ++g) {
      if (std::find(groups[g].begin(), groups[g].end(), *result.sure) != groups[g].end()) sure_group = g;
    }
    parts.push_back(Ranked(result, groups, shown, sure_group, c));
    parts.push_back({AfterRanked(result, groups, shown, sure_group, c) + RestsOnText(result, groups, shown, sure_group, c),
                     std::nullopt});
  }
  if (!result.ruled_out.empty()) parts.push_back(RuledOutPart(result, c));
  if (result.ruled_out.size() > c.top) {
    parts.push_back({"  and " + std::to_string(result.ruled_out.size() - c.top) + " more (--json)\n", std::nullopt});
  }
  return parts;
}

}  // namespace dmlbench
