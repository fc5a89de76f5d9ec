// `dmlbench compare A B [--only FILTER] [--fail-if slower|faster|different]
// [--factor F] [--csv | --json]`: the complete runs A and B choose,
// configuration by configuration (orchestrator/compare): the median steady
// epoch time of each side with its 95% confidence interval, the ratio B/A
// and a verdict, and beside it the U test on the runs' medians that the
// gate (--fail-if) decides by. A side is a database file, a filter
// (schemas/filter.md), or a name: an experiment, a tag or a trainer build.
// `compare --history SPEC`: each configuration over builds in time order.
// Exit status 0, 1 when the gate fails, 2 on an error (docs/ci.md).
// Read-only.
#include <nlohmann/json.hpp>

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/compare/compare.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/filter/filter.h"

namespace dmlbench {
namespace {

struct CompareOptions {
  std::string a, b;
  std::string only;
  std::optional<FailIf> fail_if;
  double factor = kDefaultFactor;
  std::string history;  // --history SPEC; "" = compare A and B
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

// The complete runs of `runs` with their steady epochs (from `epochs`, the
// store's SteadyEpochs()), in the order of `runs`.
std::vector<RunSample> CompleteSamples(const std::vector<RunRecord>& runs,
                                       const std::vector<SteadyEpoch>& epochs) {
  std::vector<RunSample> samples;
  std::map<std::int64_t, std::size_t> by_id;
  for (const RunRecord& run : runs) {
    if (run.status != RunState::kComplete) continue;
    by_id[run.run_id] = samples.size();
    samples.push_back({run.params, {}, false});
  }
  for (const SteadyEpoch& epoch : epochs) {
    const auto it = by_id.find(epoch.run_id);
    if (it == by_id.end()) continue;
    RunSample& sample = samples[it->second];
    sample.steady_epoch_s.push_back(epoch.wall_s);
    sample.warmup_included = sample.warmup_included || epoch.warmup_included;
  }
  return samples;
}

// Names on standard error each run of `runs` whose invalid epochs the
// store left out (Store::SteadyEpochs), so that "too few epochs" says why.
void WarnLeftOut(const std::string& side, const std::vector<RunRecord>& runs,
                 const std::map<std::int64_t, std::string>& left_out) {
  for (const RunRecord& run : runs) {
    if (const auto it = left_out.find(run.run_id); it != left_out.end()) {
      std::cerr << "warning: " << side << ": " << TerminalText(it->second) << "\n";
    }
  }
}

// `runs` less those --only leaves out; throws Error naming `what` when
// none is left.
void KeepOnly(const Filter& only, const std::string& what, const std::string& db, std::vector<RunRecord>* runs) {
  if (only.empty()) return;
  const size_t chosen = runs->size();
  std::erase_if(*runs, [&](const RunRecord& run) { return !only.Matches(FactsOf(run)); });
  if (runs->empty()) throw Error(what + ": " + only.NoMatch("its " + Runs(chosen) + " in " + db));
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
  KeepOnly(only, name + " " + operand, side.db, &runs);
  std::map<std::int64_t, std::string> left_out;
  std::vector<RunSample> samples = CompleteSamples(runs, store->SteadyEpochs(&left_out));
  WarnLeftOut(name, runs, left_out);
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

// A p-value as people read one: "0.0043", "<0.0001".
std::string PValue(double p) { return p < 1e-4 ? "<0.0001" : Fixed(p, "%.2g"); }

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

// The U test's method in one line, for the text and the JSON.
std::string TestMethod(double factor) {
  return "Mann-Whitney U test on each run's median steady epoch (the run is the independent unit), two-sided, "
         "p adjusted by Holm's method over the configurations compared; a change when p < " +
         Fixed(kGateAlpha, "%g") + " and the ratio of the medians of the run medians is beyond " +
         Fixed(factor, "%g") + " either way";
}

std::string RatioWithInterval(const RunTest& t) {
  return Fixed(t.ratio, "%.3f") + " [" + Fixed(t.ratio_ci.low, "%.3f") + ", " + Fixed(t.ratio_ci.high, "%.3f") + "]";
}

// On stderr, the configurations (`few`, each "label (why)") of `total`
// whose runs are too few for the test to reach kGateAlpha: a warning, not
// a verdict.
void WarnTooFew(const std::vector<std::string>& few, size_t total, const std::string& why) {
  if (few.empty()) return;
  std::string list;
  for (size_t i = 0; i < few.size() && i < 5; ++i) list += (i == 0 ? "" : ", ") + few[i];
  if (few.size() > 5) list += " and " + std::to_string(few.size() - 5) + " more";
  std::cerr << "warning: too few runs to test " << few.size() << " of " << total
            << (total == 1 ? " configuration: " : " configurations: ") << list << "; " << why << "\n";
}

void PrintText(const Side& a, const Side& b, const Comparison& comparison, const std::vector<std::string>& labels,
               double factor) {
  std::cout << "A: " << Describe(a) << "\nB: " << Describe(b) << "\n";
  std::vector<std::vector<std::string>> rows;
  std::map<Verdict, int> counts;
  std::map<Change, int> changes;
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    ++counts[c.verdict];
    ++changes[c.test.change];
    auto interval = [](const MedianInterval& m) { return "[" + Seconds(m.low) + ", " + Seconds(m.high) + "]"; };
    rows.push_back({labels[i], std::to_string(c.a.epoch_s.n), Seconds(c.a.epoch_s.median), interval(c.a.epoch_s),
                    std::to_string(c.b.epoch_s.n), Seconds(c.b.epoch_s.median), interval(c.b.epoch_s),
                    Fixed(c.ratio, "%.3f"), std::string(Text(c.verdict)),
                    std::to_string(c.test.runs_a) + "/" + std::to_string(c.test.runs_b), RatioWithInterval(c.test),
                    PValue(c.test.p_holm), std::string(Text(c.test.change))});
  }
  PrintTable(std::cout,
             {"configuration", "A epochs", "A median s", "A 95% CI", "B epochs", "B median s", "B 95% CI", "B/A",
              "verdict", "runs A/B", "run B/A [95% CI]", "p (Holm)", "U test"},
             rows, {false, true, true, false, true, true, false, true, false, true, false, true, false});
  std::cout << comparison.both.size() << (comparison.both.size() == 1 ? " configuration" : " configurations")
            << " in both: " << counts[Verdict::kSlower] << " slower, " << counts[Verdict::kFaster] << " faster, "
            << counts[Verdict::kNoDifference] << " no significant difference";
  if (counts[Verdict::kTooFewEpochs]) std::cout << ", " << counts[Verdict::kTooFewEpochs] << " too few epochs";
  std::cout << "; " << comparison.only_a.size() << " only in A, " << comparison.only_b.size()
            << " only in B (not compared)\n"
            << "epoch time: " << kMethod << "\n"
            << "U test: " << changes[Change::kSlower] << " slower, " << changes[Change::kFaster] << " faster, "
            << changes[Change::kWithinFactor] << " within factor, " << changes[Change::kNotSignificant]
            << " not significant (~), " << changes[Change::kTooFewRuns] << " too few runs; " << TestMethod(factor)
            << "\n";
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
  table.columns.insert(table.columns.end(), {"ratio", "verdict", "run_ratio", "run_ratio_ci_low",
                                             "run_ratio_ci_high", "p", "p_holm", "change"});
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    std::vector<Cell> row = {labels[i], c.configuration};
    for (const SideSummary* s : {&c.a, &c.b}) {
      row.insert(row.end(), {std::int64_t{s->runs}, std::int64_t{s->epoch_s.n}, s->epoch_s.median, s->epoch_s.low,
                             s->epoch_s.high, s->epoch_s.coverage});
    }
    row.insert(row.end(), {c.ratio, std::string(Text(c.verdict)), c.test.ratio, c.test.ratio_ci.low,
                           c.test.ratio_ci.high, c.test.u.p, c.test.p_holm, std::string(Text(c.test.change))});
    table.rows.push_back(std::move(row));
  }
  PrintCsv(std::cout, table);
}

nlohmann::json TestJson(const RunTest& t) {
  return {{"unit", "run median"},
          {"runs_a", t.runs_a},
          {"runs_b", t.runs_b},
          {"u", t.u.u},
          {"exact", t.u.exact},
          {"p", t.u.p},
          {"p_holm", t.p_holm},
          {"ratio", t.ratio},
          {"ratio_ci_low", t.ratio_ci.low},
          {"ratio_ci_high", t.ratio_ci.high},
          {"ratio_ci_coverage", t.ratio_ci.coverage},
          {"enough_runs", t.enough_runs},
          {"change", Text(t.change)}};
}

std::string_view Text(FailIf fail_if) {
  switch (fail_if) {
    case FailIf::kSlower: return "slower";
    case FailIf::kFaster: return "faster";
    case FailIf::kDifferent: return "different";
  }
  return "?";
}

// What the gate decided, for the text and the JSON.
struct GateOutcome {
  FailIf fail_if = FailIf::kSlower;
  std::vector<std::string> failed;  // labels of the configurations it fails on
  int judged = 0;                   // configurations with runs enough to judge
  int compared = 0;
};

nlohmann::json GateJson(const std::optional<GateOutcome>& gate, double factor) {
  nlohmann::json json = {{"alpha", kGateAlpha}, {"factor", factor}, {"correction", "holm"}};
  if (gate) {
    json["fail_if"] = Text(gate->fail_if);
    json["failed"] = gate->failed;
    json["judged"] = gate->judged;
    json["exit_status"] = gate->failed.empty() ? 0 : 1;
  }
  return json;
}

void PrintJsonReport(const Side& a, const Side& b, const Comparison& comparison,
                     const std::vector<std::string>& labels, double factor, const std::optional<GateOutcome>& gate) {
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
                          {"run_median_s", s.run_median_s},
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
                              {"verdict", Text(c.verdict)},
                              {"u_test", TestJson(c.test)}});
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
                                 {"u_test_method", TestMethod(factor)},
                                 {"gate", GateJson(gate, factor)},
                                 {"configurations", configurations},
                                 {"shift_by_architecture", shifts},
                                 {"only_a", only_a},
                                 {"only_b", only_b}};
  std::cout << report.dump(2) << "\n";
}

// The gate over `changes` (one per configuration, by `labels`). Throws
// Error when no configuration had runs enough to judge: a gate that cannot
// judge must not read as a pass.
GateOutcome DecideGate(FailIf fail_if, const std::vector<std::string>& labels, const std::vector<Change>& changes) {
  GateOutcome gate;
  gate.fail_if = fail_if;
  gate.compared = static_cast<int>(changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i] != Change::kTooFewRuns) ++gate.judged;
    if (Fails(changes[i], fail_if)) gate.failed.push_back(labels[i]);
  }
  if (gate.judged == 0) {
    throw Error("--fail-if " + std::string(Text(fail_if)) + ": no configuration has runs enough to be tested (" +
                std::to_string(gate.compared) + (gate.compared == 1 ? " configuration" : " configurations") +
                " compared); the gate can neither pass nor fail");
  }
  return gate;
}

// The gate's verdict on stdout (`text`: in words; JSON carries it
// otherwise); a failure ends the command with status 1.
void PrintGate(const GateOutcome& gate, double factor, bool text) {
  const std::string what = gate.fail_if == FailIf::kDifferent ? "changed" : std::string(Text(gate.fail_if));
  if (text) {
    std::cout << "\ngate --fail-if " << Text(gate.fail_if) << " --factor " << Fixed(factor, "%g") << ": ";
    if (gate.failed.empty()) {
      std::cout << "pass, no configuration " << what << " (" << gate.judged << " of " << gate.compared
                << " tested)\n";
    } else {
      std::cout << "FAIL, " << gate.failed.size() << " of " << gate.compared << " configurations " << what << ":\n";
      for (const std::string& label : gate.failed) std::cout << "  " << label << "\n";
    }
  }
  if (!gate.failed.empty()) throw CLI::RuntimeError(1);
}

void CompareCommand(const GlobalOptions& global, const CompareOptions& options) {
  const Filter only = options.only.empty() ? Filter() : Filter::Parse(options.only, "--only");
  const Side a = ReadSide("A", options.a, global, only);
  const Side b = ReadSide("B", options.b, global, only);
  const Comparison comparison = Compare(a.runs, b.runs, options.factor);
  if (comparison.both.empty()) {
    throw Error("A and B have no configuration in common: A has " + std::to_string(comparison.only_a.size()) +
                ", B has " + std::to_string(comparison.only_b.size()) +
                " (a configuration is every parameter but the seed and the repetition)");
  }
  std::vector<RunParams> compared;
  std::vector<Change> changes;
  for (const ConfigurationComparison& c : comparison.both) {
    compared.push_back(c.params);
    changes.push_back(c.test.change);
  }
  const std::vector<std::string> labels = Labels(compared);
  std::vector<std::string> few;
  for (size_t i = 0; i < labels.size(); ++i) {
    const RunTest& t = comparison.both[i].test;
    if (!t.enough_runs) few.push_back(labels[i] + " (" + std::to_string(t.runs_a) + " and " + std::to_string(t.runs_b) + " runs)");
  }
  std::optional<GateOutcome> gate;
  if (options.fail_if) gate = DecideGate(*options.fail_if, labels, changes);
  WarnTooFew(few, labels.size(),
             "even with every B run beyond every A run the U test could not reach p < " + Fixed(kGateAlpha, "%g") +
                 " with " + std::to_string(labels.size()) + " tested together; " +
                 std::to_string(RunsNeeded(static_cast<int>(labels.size()))) + " runs a side are needed");
  if (options.csv) {
    PrintCsvTable(comparison, labels);
  } else if (options.json) {
    PrintJsonReport(a, b, comparison, labels, options.factor, gate);
  } else {
    PrintText(a, b, comparison, labels, options.factor);
  }
  if (gate) PrintGate(*gate, options.factor, !options.csv && !options.json);
}

// ---- --history -------------------------------------------------------------

// What --history groups runs by: kind "tag", "experiment" or "trainer",
// and the glob (fnmatch) a name must match.
struct HistorySpec {
  std::string kind;
  std::string glob;
};

HistorySpec ParseHistorySpec(const std::string& text) {
  if (text == "trainer") return {"trainer", "*"};
  const size_t equals = text.find('=');
  if (equals != std::string::npos && equals + 1 < text.size()) {
    const std::string kind = text.substr(0, equals);
    if (kind == "tag" || kind == "experiment" || kind == "trainer") return {kind, text.substr(equals + 1)};
  }
  throw Error("--history: expected tag=GLOB, experiment=GLOB, trainer=GLOB or trainer, got " + Quoted(text));
}

// The names of `run` under `spec` that its glob matches (a trainer build
// by the first 12 digits of its sha256).
std::vector<std::string> BuildNames(const RunRecord& run, const HistorySpec& spec) {
  std::vector<std::string> names;
  if (spec.kind == "tag") names = run.tags;
  if (spec.kind == "experiment") names = run.experiments;
  if (spec.kind == "trainer") names = {run.trainer_sha256.substr(0, 12)};
  std::erase_if(names, [&](const std::string& name) { return fnmatch(spec.glob.c_str(), name.c_str(), 0) != 0; });
  return names;
}

// The change of one step, "+4.1% at nightly-03": the largest |ratio - 1|
// between neighbouring builds that have runs of `c`.
std::pair<std::string, double> LargestStep(const ConfigurationHistory& c, const std::vector<std::string>& builds) {
  std::pair<std::string, double> largest{"", 1};
  int previous = -1;
  for (size_t i = 0; i < builds.size(); ++i) {
    if (c.runs[i] == 0) continue;
    if (previous >= 0) {
      const double step = c.median_s[i] / c.median_s[static_cast<size_t>(previous)];
      if (std::fabs(step - 1) > std::fabs(largest.second - 1)) largest = {builds[i], step};
    }
    previous = static_cast<int>(i);
  }
  return largest;
}

std::string HistoryMethod(double factor) {
  return "a drift when the last build's median of run medians is beyond " + Fixed(factor, "%g") +
         " of the first's, either way, and Jonckheere-Terpstra's trend test over every build's run medians in "
         "time order gives p < " + Fixed(kGateAlpha, "%g") + " (two-sided, Holm-adjusted over the configurations)";
}

// The history as JSON: each configuration's median per build, its ratio,
// largest step and trend, and the gate.
void PrintHistoryJson(const GlobalOptions& global, const CompareOptions& options, const History& history,
                      const std::vector<std::string>& labels, const std::optional<GateOutcome>& gate) {
  nlohmann::json configurations = nlohmann::json::array();
  for (size_t i = 0; i < labels.size(); ++i) {
    const ConfigurationHistory& c = history.configurations[i];
    nlohmann::json per_build = nlohmann::json::array();
    for (size_t k = 0; k < history.builds.size(); ++k) {
      per_build.push_back({{"build", history.builds[k]},
                           {"runs", c.runs[k]},
                           {"median_s", c.runs[k] > 0 ? nlohmann::json(c.median_s[k]) : nlohmann::json()}});
    }
    const auto [step_build, step] = LargestStep(c, history.builds);
    configurations.push_back({{"configuration", labels[i]},
                              {"parameters", nlohmann::json::parse(c.configuration)},
                              {"builds", per_build},
                              {"ratio_last_first", c.ratio},
                              {"largest_step", {{"build", step_build}, {"ratio", step}}},
                              {"trend", {{"test", "jonckheere-terpstra"}, {"j", c.trend.j}, {"z", c.trend.z},
                                         {"p", c.trend.p}, {"p_holm", c.p_holm}}},
                              {"enough_runs", c.enough_runs},
                              {"change", Text(c.change)}});
  }
  const nlohmann::json report = {{"history", options.history},
                                 {"database", global.db},
                                 {"builds", history.builds},
                                 {"method", HistoryMethod(options.factor)},
                                 {"gate", GateJson(gate, options.factor)},
                                 {"configurations", configurations}};
  std::cout << report.dump(2) << "\n";
}

// The history as a table: a column per build, then the drift's figures.
void PrintHistoryTable(const GlobalOptions& global, const CompareOptions& options, const History& history,
                       const std::vector<std::string>& labels) {
  std::cout << "history: " << options.history << " in " << global.db << ", " << history.builds.size()
            << " builds in the order their first run was recorded\n";
  std::vector<std::string> headers = {"configuration"};
  std::vector<bool> right = {false};
  for (const std::string& build : history.builds) {
    headers.push_back(build);
    right.push_back(true);
  }
  headers.insert(headers.end(), {"last/first", "largest step", "trend p (Holm)", "drift"});
  right.insert(right.end(), {true, false, true, false});
  std::vector<std::vector<std::string>> rows;
  std::map<Change, int> counts;
  for (size_t i = 0; i < labels.size(); ++i) {
    const ConfigurationHistory& c = history.configurations[i];
    ++counts[c.change];
    std::vector<std::string> row = {labels[i]};
    for (size_t k = 0; k < history.builds.size(); ++k) row.push_back(c.runs[k] > 0 ? Seconds(c.median_s[k]) : "-");
    const auto [step_build, step] = LargestStep(c, history.builds);
    row.insert(row.end(), {Fixed(c.ratio, "%.3f"), Fixed(100 * (step - 1), "%+.1f%%") + " at " + step_build,
                           PValue(c.p_holm), std::string(Text(c.change))});
    rows.push_back(std::move(row));
  }
  PrintTable(std::cout, headers, rows, right);
  std::cout << labels.size() << (labels.size() == 1 ? " configuration" : " configurations")
            << ", median of the run medians in s per build: " << counts[Change::kSlower] << " slower, "
            << counts[Change::kFaster] << " faster, " << counts[Change::kWithinFactor] << " within factor, "
            << counts[Change::kNotSignificant] << " no drift (~), " << counts[Change::kTooFewRuns]
            << " too few runs; " << HistoryMethod(options.factor) << "\n";
}

void HistoryCommand(const GlobalOptions& global, const CompareOptions& options) {
  if (!options.a.empty()) throw Error("--history compares builds of one database; A and B do not apply");
  if (options.csv) throw Error("--history prints a table or --json, not --csv");
  const HistorySpec spec = ParseHistorySpec(options.history);
  const Filter only = options.only.empty() ? Filter() : Filter::Parse(options.only, "--only");
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  std::vector<RunRecord> runs = store->Runs();
  if (runs.empty()) throw Error("--history: " + global.db + " holds no run");
  KeepOnly(only, "--history " + options.history, global.db, &runs);
  // Builds in the order their first run was recorded (run ids grow with time).
  std::map<std::string, std::vector<RunRecord>> by_build;
  for (const RunRecord& run : runs) {
    for (const std::string& name : BuildNames(run, spec)) by_build[name].push_back(run);
  }
  std::vector<std::string> order;
  for (const auto& [name, build_runs] : by_build) order.push_back(name);
  std::sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) {
    return by_build[x].front().run_id < by_build[y].front().run_id;
  });
  if (order.size() < 2) {
    std::set<std::string> names(order.begin(), order.end());
    throw Error("--history " + options.history + ": " + std::to_string(order.size()) + " builds match in " +
                global.db + " (" + Join(names) + "); a history needs two or more");
  }
  std::map<std::int64_t, std::string> left_out;
  const std::vector<SteadyEpoch> epochs = store->SteadyEpochs(&left_out);
  WarnLeftOut("--history", runs, left_out);
  std::vector<std::pair<std::string, std::vector<RunSample>>> builds;
  for (const std::string& name : order) builds.emplace_back(name, CompleteSamples(by_build[name], epochs));
  const History history = CompareHistory(builds, options.factor);
  if (history.configurations.empty()) {
    throw Error("--history " + options.history + ": no configuration has complete runs in two builds or more of " +
                std::to_string(order.size()));
  }
  std::vector<RunParams> params;
  std::vector<Change> changes;
  std::vector<std::string> few;
  for (const ConfigurationHistory& c : history.configurations) {
    params.push_back(c.params);
    changes.push_back(c.change);
  }
  const std::vector<std::string> labels = Labels(params);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (history.configurations[i].enough_runs) continue;
    int runs_in_all = 0;
    for (int n : history.configurations[i].runs) runs_in_all += n;
    few.push_back(labels[i] + " (" + Runs(static_cast<size_t>(runs_in_all)) + ")");
  }
  std::optional<GateOutcome> gate;
  if (options.fail_if) gate = DecideGate(*options.fail_if, labels, changes);
  WarnTooFew(few, labels.size(), "even perfectly ordered runs could not reach p < " + Fixed(kGateAlpha, "%g") +
                                     "; more runs per build are needed");

  if (options.json) {
    PrintHistoryJson(global, options, history, labels, gate);
  } else {
    PrintHistoryTable(global, options, history, labels);
  }
  if (gate) PrintGate(*gate, options.factor, !options.json);
}

}  // namespace

void AddCompareCommand(CLI::App& app, GlobalOptions& global) {
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
      "Beside it, a Mann-Whitney U test on each run's median (the run is the independent unit),\n"
      "Holm-adjusted over the configurations: slower or faster when p < 0.05 and the ratio of the\n"
      "run medians is beyond --factor, ~ when not significant.\n"
      "Then, per architecture, how far B's medians lie from A's: the median, 95th percentile and\n"
      "maximum of |B/A - 1| over its configurations.\n"
      "--history SPEC instead of A and B: each configuration's median per build, builds in the order\n"
      "their first run was recorded, and a drift when the last build's median is beyond --factor of\n"
      "the first's and a trend test over every build's runs says so (p < 0.05, Holm-adjusted).\n"
      "Exit status: 0 no configuration failed --fail-if, 1 one did, 2 an error (usage or data).\n"
      "docs/ci.md: compare as a regression gate.");
  compare->preparse_callback([&global](std::size_t) { global.error_status = kDataErrorStatus; });
  compare->add_option("A", options->a, "the baseline: a database, a filter or a name");
  compare->add_option("B", options->b, "what is compared with it: a database, a filter or a name");
  compare->add_option("--only", options->only,
                      "on both sides, only the runs that also match FILTER, e.g. 'architecture=ring'")
      ->type_name("FILTER");
  compare->add_option("--fail-if", options->fail_if,
                      "exit with status 1 when any configuration is significantly slower, faster, or either "
                      "(different) beyond --factor")
      ->transform(CLI::CheckedTransformer(std::map<std::string, FailIf>{{"slower", FailIf::kSlower},
                                                                        {"faster", FailIf::kFaster},
                                                                        {"different", FailIf::kDifferent}}))
      ->type_name("slower|faster|different");
  compare->add_option("--factor", options->factor, "the smallest ratio B/A (or A/B) that counts as a change, above 1")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100.0));
  compare->add_option("--history", options->history,
                      "each configuration's median over builds in time order: tag=GLOB, experiment=GLOB, "
                      "trainer=GLOB, or trainer (every trainer build)")
      ->type_name("SPEC");
  auto* csv = compare->add_flag("--csv", options->csv, "CSV output, one row per configuration");
  compare->add_flag("--json", options->json, "JSON output, with both sides and the method")->excludes(csv);
  compare->callback([&global, options] {
    if (options->factor <= 1) throw Error("--factor must be above 1, got " + Fixed(options->factor, "%g"));
    if (!options->history.empty()) {
      HistoryCommand(global, *options);
    } else if (options->a.empty() || options->b.empty()) {
      throw Error(std::string("expected A and B, or --history SPEC; got ") + (options->a.empty() ? "neither" : "only A"));
    } else {
      CompareCommand(global, *options);
    }
  });
}

}  // namespace dmlbench
