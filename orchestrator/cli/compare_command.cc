// `dmlbench compare A B [--by KEY] [--only FILTER] [--fail-if
// slower|faster|different] [--factor F] [--underpowered error|warn] [--csv |
// --json]`: the complete runs A and B choose, configuration by
// configuration (orchestrator/compare): each side's median, the ratio B/A
// with its 95% interval and the U test's verdict, then the study's test
// over every configuration and, with --fail-if, the gate's decision
// (compare/gate.h). A side is a database file, a filter
// (schemas/filter.md), or a name: an experiment, a tag or a trainer build.
// `compare --history SPEC`: each configuration over builds in time order.
// Exit status 0, 1 when the gate fails, 2 on an error (docs/ci.md).
// Read-only.
#include <iostream>
#include <map>
#include <optional>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/run_choice.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/compare/compare.h"
#include "orchestrator/compare/formats.h"
#include "orchestrator/compare/gate.h"
#include "orchestrator/compare/history.h"
#include "orchestrator/compare/sides.h"
#include "orchestrator/core/terminal_text.h"
#include "orchestrator/filter/filter.h"

namespace dmlbench {
namespace {

struct CompareOptions {
  std::string a, b;
  std::string by;        // --by KEY; "" = configurations equal on both sides
  std::string only;
  std::string fail_if;   // "" = no gate
  std::string underpowered = "error";
  double factor = kDefaultFactor;
  std::string history;   // --history SPEC; "" = compare A and B
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
  const bool database = IsDatabaseOperand(operand);
  if (database) side.db = operand;
  const std::unique_ptr<Store> store = OpenExistingReadOnly(side.db);
  if (!database) side.filter = IsNameOperand(operand) ? FilterOfName(name, operand, store->Runs(), side.db) : operand;

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

// How a side reads in headers: "experiment=paper in results.db".
std::string Describe(const Side& side) {
  return TerminalText((side.filter.empty() ? "every run" : side.filter) + " in " + side.db);
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
            << (total == 1 ? " configuration: " : " configurations: ") << TerminalText(list) << "; " << why << "\n";
}

// "1.150 [1.149, 1.151]".
std::string RatioText(double ratio, double low, double high) {
  return Format(ratio, "%.3f") + " [" + Format(low, "%.3f") + ", " + Format(high, "%.3f") + "]";
}

void PrintText(const Side& a, const Side& b, const Comparison& comparison, const std::vector<std::string>& labels,
               double factor) {
  std::cout << "A: " << Describe(a) << "\nB: " << Describe(b) << "\n";
  if (!comparison.by.empty()) {
    std::cout << "paired by " << comparison.by << ": each configuration of A with the one of B that differs in nothing "
              << "else\n";
  }
  std::vector<std::vector<std::string>> rows;
  std::map<Change, int> changes;
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const RunTest& t = comparison.both[i].test;
    ++changes[t.change];
    rows.push_back({labels[i], std::to_string(t.runs_a) + "/" + std::to_string(t.runs_b),
                    Format(Median(comparison.both[i].a.run_median_s), "%.4g"),
                    Format(Median(comparison.both[i].b.run_median_s), "%.4g"),
                    RatioText(t.ratio, t.ratio_ci.low, t.ratio_ci.high), PValue(t.p_holm),
                    std::string(Text(t.change))});
  }
  PrintTable(std::cout, {"configuration", "runs", "A median", "B median", "B/A [95% CI]", "p (Holm)", "change"},
             rows, {false, true, true, true, false, true, false});
  const size_t n = comparison.both.size();
  std::cout << n << (n == 1 ? " configuration" : " configurations") << " compared, " << comparison.only_a.size()
            << " only in A, " << comparison.only_b.size() << " only in B: " << changes[Change::kSlower]
            << " slower, " << changes[Change::kFaster] << " faster, " << changes[Change::kWithinFactor]
            << " within factor, " << changes[Change::kNotSignificant] << " ~, " << changes[Change::kTooFewRuns]
            << " too few runs\n";
  const StudyTest& study = comparison.study;
  std::cout << "study: B/A " << Format(study.ratio, "%.3f");
  if (n >= 2) std::cout << " [" << Format(study.ratio_ci_low, "%.3f") << ", " << Format(study.ratio_ci_high, "%.3f") << "]";
  std::cout << ", the geometric mean over " << n << (n == 1 ? " configuration; " : " configurations; ")
            << (study.enough_configurations
                    ? "signed-rank p (Holm) " + PValue(study.p_holm) + ": " + std::string(Text(study.change))
                    : std::string("too few configurations to test (9 are needed)"))
            << "\n"
            << "runs: A's/B's; median: of each run's median steady epoch (warm-up excluded), s; B/A: ratio of the\n"
            << "medians with the U test's 95% interval; change: U test per configuration, signed-rank test over the\n"
            << "study, p Holm-adjusted over the " << comparison.tests << (comparison.tests == 1 ? " test" : " tests")
            << ", a change when p < " << Format(kGateAlpha, "%g") << " and B/A is beyond " << Format(factor, "%g")
            << " either way (docs/ci.md)\n";
  std::vector<std::vector<std::string>> shifts;
  for (const Shift& s : ShiftByArchitecture(comparison)) {
    shifts.push_back({s.architecture, std::to_string(s.configurations), Format(100 * s.median_abs, "%.1f%%"),
                      Format(100 * s.p95_abs, "%.1f%%"), Format(100 * s.max_abs, "%.1f%%")});
  }
  std::cout << "\nhow far B's pooled medians lie from A's, |B/A - 1| over each architecture's configurations\n"
               "(between two sweeps of one study: what a perfect model of one would miss the other by):\n";
  PrintTable(std::cout, {"architecture", "configurations", "median", "p95", "max"}, shifts,
             {false, true, true, true, true});
}

// The gate's words (`text`: in the text output; JSON and CSV carry it
// otherwise), then its status: 1 on a failure, 2 (an error) or a warning
// when it could not have seen a change of the factor.
void FinishGate(const GateOutcome& gate, const Comparison* comparison, bool text) {
  if (text) std::cout << "\n" << TerminalText(GateText(gate, comparison) + ResolutionText(gate), true);
  if (gate.underpowered) {
    if (gate.exit_status == 2) throw CompareError(UnderpoweredMessage(gate, /*hint=*/true));
    std::cerr << "warning: " << TerminalText(UnderpoweredMessage(gate, /*hint=*/false)) << "\n";
  }
  if (gate.exit_status == 1) throw CLI::RuntimeError(1);
}

FailIf ParsedFailIf(const std::string& text) {
  const std::optional<FailIf> fail_if = ParseFailIf(text);
  if (!fail_if) throw Error("--fail-if: expected slower, faster or different, got " + TerminalText(text));
  return *fail_if;
}

void CompareCommand(const GlobalOptions& global, const CompareOptions& options) {
  const Filter only = options.only.empty() ? Filter() : Filter::Parse(options.only, "--only");
  const Side a = ReadSide("A", options.a, global, only);
  const Side b = ReadSide("B", options.b, global, only);
  const Comparison comparison = Compare(a.runs, b.runs, options.factor, options.by);
  if (comparison.both.empty()) throw Error(NothingInCommon(comparison, KeysThatPair(a.runs, b.runs)));
  const std::vector<std::string> labels = Labels(comparison);
  std::vector<std::string> few;
  for (size_t i = 0; i < labels.size(); ++i) {
    const RunTest& t = comparison.both[i].test;
    if (!t.enough_runs) few.push_back(labels[i] + " (" + std::to_string(t.runs_a) + " and " + std::to_string(t.runs_b) + " runs)");
  }
  std::optional<GateOutcome> gate;
  if (!options.fail_if.empty()) {
    gate = DecideGate(comparison, labels, ParsedFailIf(options.fail_if), options.factor,
                      options.underpowered == "warn" ? Underpowered::kWarn : Underpowered::kError);
  }
  WarnTooFew(few, labels.size(),
             "even with every B run beyond every A run the U test could not reach p < " + Format(kGateAlpha, "%g") +
                 " with " + std::to_string(comparison.tests) + " tested together; " +
                 std::to_string(RunsNeeded(comparison.tests)) + " runs a side are needed");
  if (options.csv) {
    PrintCsv(std::cout, ComparisonCsv(comparison, labels));
  } else if (options.json) {
    const SideOrigin origin_a{a.operand, a.db, a.filter, a.runs.size()}, origin_b{b.operand, b.db, b.filter, b.runs.size()};
    std::cout << ComparisonJson(origin_a, origin_b, comparison, labels, options.factor, gate).dump(2) << "\n";
  } else {
    PrintText(a, b, comparison, labels, options.factor);
  }
  if (gate) FinishGate(*gate, &comparison, !options.csv && !options.json);
}

// ---- --history -------------------------------------------------------------

// The history as a table: a column per build, then the drift's figures.
void PrintHistoryTable(const GlobalOptions& global, const CompareOptions& options, const History& history,
                       const std::vector<std::string>& labels) {
  std::cout << "history: " << TerminalText(options.history) << " in " << TerminalText(global.db) << ", "
            << history.builds.size() << " builds in the order their first run was recorded\n";
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
    for (size_t k = 0; k < history.builds.size(); ++k) {
      row.push_back(c.runs[k] > 0 ? Format(c.median_s[k], "%.4g") : "-");
    }
    const auto [step_build, step] = LargestStep(c, history.builds);
    row.insert(row.end(), {Format(c.ratio, "%.3f"), Format(100 * (step - 1), "%+.1f%%") + " at " + step_build,
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
  if (!options.by.empty()) throw Error("--by pairs the configurations of A and B; it does not apply to --history");
  const HistorySpec spec = ParseHistorySpec(options.history);
  const Filter only = options.only.empty() ? Filter() : Filter::Parse(options.only, "--only");
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  std::vector<RunRecord> runs = store->Runs();
  if (runs.empty()) throw Error("--history: " + global.db + " holds no run");
  KeepOnly(only, "--history " + options.history, global.db, &runs);
  const std::vector<std::pair<std::string, std::vector<RunRecord>>> by_build = RunsByBuild(runs, spec, global.db);
  std::map<std::int64_t, std::string> left_out;
  const std::vector<SteadyEpoch> epochs = store->SteadyEpochs(&left_out);
  WarnLeftOut("--history", runs, left_out);
  std::vector<std::pair<std::string, std::vector<RunSample>>> builds;
  for (const auto& [name, build_runs] : by_build) builds.emplace_back(name, CompleteSamples(build_runs, epochs));
  const History history = CompareHistory(builds, options.factor);
  if (history.configurations.empty()) {
    throw Error("--history " + options.history + ": no configuration has complete runs in two builds or more of " +
                std::to_string(by_build.size()));
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
  if (!options.fail_if.empty()) gate = DecideGate(labels, changes, ParsedFailIf(options.fail_if), options.factor);
  WarnTooFew(few, labels.size(), "even perfectly ordered runs could not reach p < " + Format(kGateAlpha, "%g") +
                                     "; more runs per build are needed");
  if (options.json) {
    std::cout << HistoryJson(options.history, global.db, history, labels, options.factor, gate).dump(2) << "\n";
  } else {
    PrintHistoryTable(global, options, history, labels);
  }
  if (gate) FinishGate(*gate, nullptr, !options.json);
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
      "compared; --by KEY pairs those that differ only in KEY (A batch_size=50, B batch_size=200).\n"
      "Per configuration: the median of each side's run medians (each run's median steady epoch),\n"
      "the ratio B/A with its 95% interval, and a Mann-Whitney U test on the run medians. Over the\n"
      "study: the geometric mean of the ratios and Wilcoxon's signed-rank test of their logs. The\n"
      "p-values are Holm-adjusted together; slower or faster when p < 0.05 and the ratio is beyond\n"
      "--factor, ~ when not significant. Then, per architecture, the median, 95th percentile and\n"
      "maximum of |B/A - 1| of the pooled epochs' medians.\n"
      "--history SPEC instead of A and B: each configuration's median per build, builds in the order\n"
      "their first run was recorded, and a drift when the last build's median is beyond --factor of\n"
      "the first's and a trend test over every build's runs says so (p < 0.05, Holm-adjusted).\n"
      "Exit status: 0 the gate passed (or no --fail-if), 1 it failed, 2 an error (usage or data),\n"
      "or a gate that could not have seen a change of --factor (unless --underpowered warn).\n"
      "docs/compare.md, and docs/ci.md: compare as a regression gate.");
  compare->preparse_callback([&global](std::size_t) { global.error_status = kDataErrorStatus; });
  compare->add_option("A", options->a, "the baseline: a database, a filter or a name");
  compare->add_option("B", options->b, "what is compared with it: a database, a filter or a name");
  compare->add_option("--by", options->by,
                      "pair each configuration of A with the one of B that differs from it only in KEY (or in each "
                      "of KEY,KEY...), e.g. batch_size")
      ->type_name("KEY");
  compare->add_option("--only", options->only,
                      "on both sides, only the runs that also match FILTER, e.g. 'architecture=ring'")
      ->type_name("FILTER");
  compare->add_option("--fail-if", options->fail_if,
                      "exit with status 1 when the study or any configuration is significantly slower, faster, or "
                      "either (different) beyond --factor")
      ->type_name("slower|faster|different");
  compare->add_option("--factor", options->factor, "the smallest ratio B/A (or A/B) that counts as a change, above 1")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100.0));
  compare->add_option("--underpowered", options->underpowered,
                      "when the gate could not have seen every configuration changed by --factor: error (status 2) "
                      "or warn (and decide as usual)")
      ->type_name("error|warn")
      ->capture_default_str();
  compare->add_option("--history", options->history,
                      "each configuration's median over builds in time order: tag=GLOB, experiment=GLOB, "
                      "trainer=GLOB, or trainer (every trainer build)")
      ->type_name("SPEC");
  auto* csv = compare->add_flag("--csv", options->csv, "CSV output, one row per configuration");
  compare->add_flag("--json", options->json, "JSON output, with both sides, the study and the method")->excludes(csv);
  compare->callback([&global, options] {
    if (options->factor <= 1) throw Error("--factor must be above 1, got " + Format(options->factor, "%g"));
    if (options->underpowered != "error" && options->underpowered != "warn") {
      throw Error("--underpowered: expected error or warn, got " + TerminalText(options->underpowered));
    }
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
