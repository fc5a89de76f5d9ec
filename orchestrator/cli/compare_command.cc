// `dmlbench compare A B [--only FILTER] [--csv | --json]`: the complete runs
// A and B choose, configuration by configuration (orchestrator/compare): the
// median steady epoch time of each side with its 95% confidence interval,
// the ratio B/A and a verdict. A side is a database file, a filter
// (schemas/filter.md), or a name: an experiment, a tag or a trainer build.
// Read-only.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/compare/compare.h"
#include "orchestrator/filter/filter.h"

namespace dmlbench {
namespace {

struct CompareOptions {
  std::string a, b;
  std::string only;
  bool csv = false;
  bool json = false;
};

// One operand, resolved: the database it reads and the filter that chooses
// its runs there.
struct Side {
  std::string name;      // "A" or "B"
  std::string operand;   // as given
  std::string db;
  std::string filter;    // "" = every run of the database
  std::vector<RunSample> runs;
};

std::string Join(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

bool IsHexWord(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// A database operand: an existing file, or anything that reads as a path.
bool IsDatabase(const std::string& operand) {
  return std::filesystem::is_regular_file(operand) || operand.find('/') != std::string::npos ||
         (operand.size() > 3 && operand.ends_with(".db"));
}

// A name operand: no operator, no list, no quote; a filter otherwise.
bool IsName(const std::string& operand) { return operand.find_first_of("=<>!,|'\"") == std::string::npos; }

// The filter a name stands for in `store`: experiment=NAME, tag=NAME or
// trainer=PREFIX, whichever is the only one that exists there.
std::string FilterOfName(const std::string& side, const std::string& name, const Store& store) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::set<std::string> experiments, tags, builds, matching_builds;
  for (const RunRecord& run : store.Runs()) {
    experiments.insert(run.experiments.begin(), run.experiments.end());
    tags.insert(run.tags.begin(), run.tags.end());
    builds.insert(run.trainer_sha256.substr(0, 12));
    if (IsHexWord(name) && run.trainer_sha256.starts_with(lower)) matching_builds.insert(run.trainer_sha256);
  }
  std::vector<std::string> kinds;
  if (experiments.contains(name)) kinds.push_back("experiment");
  if (tags.contains(name)) kinds.push_back("tag");
  if (!matching_builds.empty()) kinds.push_back("trainer");
  if (kinds.empty()) {
    throw Error(side + ": " + Quoted(name) + " is no experiment, tag or trainer build in " + store.path() +
                " (experiments: " + Join(experiments) + "; tags: " + Join(tags) + "; trainer builds: " +
                Join(builds) + ")");
  }
  if (kinds.size() > 1) {
    std::string choices;
    for (size_t i = 0; i < kinds.size(); ++i) {
      choices += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i] + "=" + name;
    }
    throw Error(side + ": " + Quoted(name) + " names more than one thing in " + store.path() + "; write " +
                choices);
  }
  if (kinds.front() == "trainer" && matching_builds.size() > 1) {
    std::set<std::string> shown;
    for (const std::string& sha : matching_builds) shown.insert(sha.substr(0, 12));
    throw Error(side + ": trainer build prefix " + name + " matches " + std::to_string(matching_builds.size()) +
                " builds in " + store.path() + " (" + Join(shown) + "); give more digits");
  }
  return kinds.front() + "=" + (kinds.front() == "trainer" ? lower : name);
}

// Resolves a side's operand and reads its complete runs with their steady
// epochs. Throws Error naming the side when it chooses no complete run.
Side ReadSide(const std::string& name, const std::string& operand, const GlobalOptions& global,
              const Filter& only) {
  Side side{name, operand, global.db, "", {}};
  if (operand.empty()) throw Error(name + ": expected a database, a filter or a name, got nothing");
  const bool database = IsName(operand) && IsDatabase(operand);
  if (database) side.db = operand;
  const std::unique_ptr<Store> store = OpenExistingReadOnly(side.db);
  if (!database) side.filter = IsName(operand) ? FilterOfName(name, operand, *store) : operand;

  std::vector<RunRecord> runs =
      side.filter.empty() ? store->Runs() : ChooseRuns(*store, Filter::Parse(side.filter, name));
  if (runs.empty()) throw Error(name + ": " + side.db + " holds no run");
  if (!only.empty()) {
    const size_t chosen = runs.size();
    std::erase_if(runs, [&](const RunRecord& run) { return !only.Matches(FactsOf(run)); });
    if (runs.empty()) throw Error(name + " " + operand + ": " + only.NoMatch("its " + Runs(chosen) + " in " + side.db));
  }
  std::map<std::int64_t, RunSample*> by_id;
  std::vector<RunSample> samples;
  samples.reserve(runs.size());
  for (const RunRecord& run : runs) {
    if (run.status != RunState::kComplete) continue;
    samples.push_back({run.params, {}, false});
    by_id[run.run_id] = &samples.back();
  }
  for (const SteadyEpoch& epoch : store->SteadyEpochs()) {
    const auto it = by_id.find(epoch.run_id);
    if (it == by_id.end()) continue;
    it->second->steady_epoch_s.push_back(epoch.wall_s);
    it->second->warmup_included = it->second->warmup_included || epoch.warmup_included;
  }
  if (samples.empty()) {
    throw Error(name + " " + operand + " chooses " + Runs(runs.size()) + " in " + side.db + ", none of them complete");
  }
  side.runs = std::move(samples);
  return side;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", s);
  return buffer;
}

std::string Fixed(double value, const char* format) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// How a side reads in headers: "experiment=paper in results.db".
std::string Describe(const Side& side) {
  return (side.filter.empty() ? "every run" : side.filter) + " in " + side.db;
}

// The labels of the compared configurations, naming what varies among them.
std::vector<std::string> Labels(const std::vector<RunParams>& params) {
  ShownParams shown = VaryingIn(params);
  shown.repetition = false;
  std::vector<std::string> labels;
  for (const RunParams& p : params) labels.push_back(dmlbench::Describe(p, shown));
  return labels;
}

constexpr const char* kMethod =
    "median of the steady epochs (warm-up excluded) with its rank-based 95% confidence interval; B is slower or "
    "faster than A when the two intervals do not overlap";

void PrintText(const Side& a, const Side& b, const Comparison& comparison, const std::vector<std::string>& labels) {
  std::cout << "A: " << Describe(a) << "\nB: " << Describe(b) << "\n";
  std::vector<std::vector<std::string>> rows;
  std::map<Verdict, int> counts;
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    ++counts[c.verdict];
    auto interval = [](const MedianInterval& m) { return "[" + Seconds(m.low) + ", " + Seconds(m.high) + "]"; };
    rows.push_back({labels[i], std::to_string(c.a.epoch_s.n), Seconds(c.a.epoch_s.median), interval(c.a.epoch_s),
                    std::to_string(c.b.epoch_s.n), Seconds(c.b.epoch_s.median), interval(c.b.epoch_s),
                    Fixed(c.ratio, "%.3f"), std::string(Text(c.verdict))});
  }
  PrintTable(std::cout,
             {"configuration", "A epochs", "A median s", "A 95% CI", "B epochs", "B median s", "B 95% CI", "B/A",
              "verdict"},
             rows, {false, true, true, false, true, true, false, true, false});
  std::cout << comparison.both.size() << (comparison.both.size() == 1 ? " configuration" : " configurations")
            << " in both: " << counts[Verdict::kSlower] << " slower, " << counts[Verdict::kFaster] << " faster, "
            << counts[Verdict::kNoDifference] << " no significant difference";
  if (counts[Verdict::kTooFewEpochs]) std::cout << ", " << counts[Verdict::kTooFewEpochs] << " too few epochs";
  std::cout << "; " << comparison.only_a.size() << " only in A, " << comparison.only_b.size()
            << " only in B (not compared)\n"
            << "epoch time: " << kMethod << "\n";
  std::vector<std::vector<std::string>> shifts;
  for (const Shift& s : ShiftByArchitecture(comparison)) {
    shifts.push_back({s.architecture, std::to_string(s.configurations), Fixed(100 * s.median_abs, "%.1f%%"),
                      Fixed(100 * s.p95_abs, "%.1f%%"), Fixed(100 * s.max_abs, "%.1f%%")});
  }
  std::cout << "\nhow far B's medians lie from A's, |B/A - 1| over each architecture's configurations (between two "
               "sweeps of one study: what a perfect model of one would miss the other by):\n";
  PrintTable(std::cout, {"architecture", "configurations", "median", "p95", "max"}, shifts,
             {false, true, true, true, true});
}

void PrintCsvTable(const Comparison& comparison, const std::vector<std::string>& labels) {
  QueryResult table;
  table.columns = {"configuration", "parameters"};
  for (const char* side : {"a", "b"}) {
    for (const char* column : {"runs", "epochs", "median_s", "ci_low_s", "ci_high_s", "ci_coverage"}) {
      table.columns.push_back(std::string(side) + "_" + column);
    }
  }
  table.columns.insert(table.columns.end(), {"ratio", "verdict"});
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    std::vector<Cell> row = {labels[i], c.configuration};
    for (const SideSummary* s : {&c.a, &c.b}) {
      row.insert(row.end(), {std::int64_t{s->runs}, std::int64_t{s->epoch_s.n}, s->epoch_s.median, s->epoch_s.low,
                             s->epoch_s.high, s->epoch_s.coverage});
    }
    row.insert(row.end(), {c.ratio, std::string(Text(c.verdict))});
    table.rows.push_back(std::move(row));
  }
  PrintCsv(std::cout, table);
}

void PrintJsonReport(const Side& a, const Side& b, const Comparison& comparison,
                     const std::vector<std::string>& labels) {
  auto side = [](const Side& s) {
    return nlohmann::json{{"operand", s.operand}, {"database", s.db}, {"filter", s.filter},
                          {"complete_runs", s.runs.size()}};
  };
  auto summary = [](const SideSummary& s) {
    return nlohmann::json{{"runs", s.runs},
                          {"epochs", s.epoch_s.n},
                          {"median_s", s.epoch_s.median},
                          {"ci_low_s", s.epoch_s.low},
                          {"ci_high_s", s.epoch_s.high},
                          {"ci_coverage", s.epoch_s.coverage},
                          {"warmup_included", s.warmup_included}};
  };
  nlohmann::json configurations = nlohmann::json::array();
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    configurations.push_back({{"configuration", labels[i]},
                              {"parameters", nlohmann::json::parse(c.configuration)},
                              {"a", summary(c.a)},
                              {"b", summary(c.b)},
                              {"ratio", c.ratio},
                              {"verdict", Text(c.verdict)}});
  }
  nlohmann::json shifts = nlohmann::json::array();
  for (const Shift& s : ShiftByArchitecture(comparison)) {
    shifts.push_back({{"architecture", s.architecture},
                      {"configurations", s.configurations},
                      {"median_abs_ratio_minus_1", s.median_abs},
                      {"p95_abs_ratio_minus_1", s.p95_abs},
                      {"max_abs_ratio_minus_1", s.max_abs}});
  }
  const std::vector<std::string> only_a = Labels(comparison.only_a), only_b = Labels(comparison.only_b);
  const nlohmann::json report = {{"a", side(a)},
                                 {"b", side(b)},
                                 {"method", kMethod},
                                 {"confidence_level", kCompareLevel},
                                 {"configurations", configurations},
                                 {"shift_by_architecture", shifts},
                                 {"only_a", only_a},
                                 {"only_b", only_b}};
  std::cout << report.dump(2) << "\n";
}

void CompareCommand(const GlobalOptions& global, const CompareOptions& options) {
  const Filter only = options.only.empty() ? Filter() : Filter::Parse(options.only, "--only");
  const Side a = ReadSide("A", options.a, global, only);
  const Side b = ReadSide("B", options.b, global, only);
  const Comparison comparison = Compare(a.runs, b.runs);
  if (comparison.both.empty()) {
    throw Error("A and B have no configuration in common: A has " + std::to_string(comparison.only_a.size()) +
                ", B has " + std::to_string(comparison.only_b.size()) +
                " (a configuration is every parameter but the seed and the repetition)");
  }
  std::vector<RunParams> compared;
  for (const ConfigurationComparison& c : comparison.both) compared.push_back(c.params);
  const std::vector<std::string> labels = Labels(compared);
  if (options.csv) {
    PrintCsvTable(comparison, labels);
  } else if (options.json) {
    PrintJsonReport(a, b, comparison, labels);
  } else {
    PrintText(a, b, comparison, labels);
  }
}

}  // namespace

void AddCompareCommand(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* compare = app.add_subcommand(
      "compare", "compare the epoch times of two sets of complete runs, configuration by configuration");
  compare->footer(
      "A and B each name a set of complete runs:\n"
      "  a database file (a path, or a name ending in .db): all its runs\n"
      "  a filter (schemas/filter.md), e.g. 'experiment=paper,network=1gbit' or 'tag=baseline'\n"
      "  a name: the experiment, the tag or the trainer build (a prefix of its sha256) of that name\n"
      "Configurations (every parameter but the seed and the repetition) with runs on both sides are\n"
      "compared: the median of their steady epoch times (warm-up excluded), its rank-based 95%\n"
      "confidence interval, the ratio B/A, and a verdict: B is slower or faster when the two\n"
      "intervals do not overlap, else no significant difference (too few epochs: 5 or fewer).\n"
      "Then, per architecture, how far B's medians lie from A's: the median, 95th percentile and\n"
      "maximum of |B/A - 1| over its configurations.");
  compare->add_option("A", options->a, "the baseline: a database, a filter or a name")->required();
  compare->add_option("B", options->b, "what is compared with it: a database, a filter or a name")->required();
  compare->add_option("--only", options->only,
                      "on both sides, only the runs that also match FILTER, e.g. 'architecture=ring'")
      ->type_name("FILTER");
  auto* csv = compare->add_flag("--csv", options->csv, "CSV output, one row per configuration");
  compare->add_flag("--json", options->json, "JSON output, with both sides and the method")->excludes(csv);
  compare->callback([&global, options] { CompareCommand(global, *options); });
}

}  // namespace dmlbench
