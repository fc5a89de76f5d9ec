#include "orchestrator/compare/formats.h"

#include <cmath>

namespace dmlbench {
namespace {

// A ratio a test could detect; null when it could detect none.
nlohmann::json Detectable(double ratio) { return std::isfinite(ratio) ? nlohmann::json(ratio) : nlohmann::json(); }

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
          {"detectable_slower", Detectable(t.detectable_slower)},
          {"detectable_faster", Detectable(t.detectable_faster)},
          {"change", Text(t.change)}};
}

nlohmann::json StudyJson(const StudyTest& s) {
  return {{"test", "wilcoxon signed-rank"},
          {"configurations", s.configurations},
          {"ratio_geometric_mean", s.ratio},
          {"ratio_ci_low", s.configurations >= 2 ? nlohmann::json(s.ratio_ci_low) : nlohmann::json()},
          {"ratio_ci_high", s.configurations >= 2 ? nlohmann::json(s.ratio_ci_high) : nlohmann::json()},
          {"w_plus", s.signed_rank.w_plus},
          {"n", s.signed_rank.n},
          {"exact", s.signed_rank.exact},
          {"p", s.signed_rank.p},
          {"p_holm", s.p_holm},
          {"enough_configurations", s.enough_configurations},
          {"detectable_slower", Detectable(s.detectable_slower)},
          {"detectable_faster", Detectable(s.detectable_faster)},
          {"change", s.enough_configurations ? Text(s.change) : "too few configurations"}};
}

nlohmann::json GateJson(const std::optional<GateOutcome>& gate, double factor, int tests) {
  nlohmann::json json = {{"alpha", kGateAlpha}, {"factor", factor}, {"correction", "holm"}};
  if (tests > 0) json["tests"] = tests;
  if (!gate) return json;
  json["fail_if"] = Text(gate->fail_if);
  json["failed"] = gate->failed;
  json["judged"] = gate->judged;
  if (gate->resolution) {
    const Resolution& r = *gate->resolution;
    json["study_judged"] = gate->study_judged;
    json["study_failed"] = gate->study_failed;
    json["resolution"] = {{"every_configuration", Detectable(r.every)},
                          {"every_configuration_by", r.every_by},
                          {"one_configuration_low", Detectable(r.one_low)},
                          {"one_configuration_low_at", r.one_low_label},
                          {"one_configuration_high", r.one_low_label.empty() ? nlohmann::json() : nlohmann::json(r.one_high)},
                          {"one_configuration_high_at", r.one_high_label}};
    json["underpowered"] = gate->underpowered;
  }
  json["exit_status"] = gate->exit_status;
  return json;
}

nlohmann::json SummaryJson(const SideSummary& s) {
  return {{"runs", s.runs},
          {"epochs", s.epoch_s.n},
          {"median_s", s.epoch_s.median},
          {"ci_low_s", s.epoch_s.low},
          {"ci_high_s", s.epoch_s.high},
          {"ci_coverage", s.epoch_s.coverage},
          {"run_median_s", s.run_median_s},
          {"warmup_included", s.warmup_included}};
}

}  // namespace

nlohmann::json ComparisonJson(const SideOrigin& a, const SideOrigin& b, const Comparison& comparison,
                              const std::vector<std::string>& labels, double factor,
                              const std::optional<GateOutcome>& gate) {
  auto side = [](const SideOrigin& s) {
    return nlohmann::json{{"operand", s.operand}, {"database", s.database}, {"filter", s.filter},
                          {"complete_runs", s.complete_runs}};
  };
  nlohmann::json configurations = nlohmann::json::array();
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const ConfigurationComparison& c = comparison.both[i];
    nlohmann::json row = {{"configuration", labels[i]},
                          {"parameters", nlohmann::json::parse(c.configuration)},
                          {"a", SummaryJson(c.a)},
                          {"b", SummaryJson(c.b)},
                          {"ratio", c.ratio},
                          {"verdict", Text(c.verdict)},
                          {"u_test", TestJson(c.test)}};
    if (!comparison.by.empty()) row["parameters_b"] = nlohmann::json::parse(c.configuration_b);
    configurations.push_back(std::move(row));
  }
  nlohmann::json shifts = nlohmann::json::array();
  for (const Shift& s : ShiftByArchitecture(comparison)) {
    shifts.push_back({{"architecture", s.architecture},
                      {"configurations", s.configurations},
                      {"median_abs_ratio_minus_1", s.median_abs},
                      {"p95_abs_ratio_minus_1", s.p95_abs},
                      {"max_abs_ratio_minus_1", s.max_abs}});
  }
  nlohmann::json report = {{"a", side(a)},
                           {"b", side(b)},
                           {"method", kEpochMethod},
                           {"confidence_level", kCompareLevel},
                           {"u_test_method", TestMethod(factor)},
                           {"study_method", StudyMethod()},
                           {"gate", GateJson(gate, factor, comparison.tests)},
                           {"configurations", configurations},
                           {"study", StudyJson(comparison.study)},
                           {"shift_by_architecture", shifts},
                           {"only_a", Labels(comparison.only_a)},
                           {"only_b", Labels(comparison.only_b)}};
  if (!comparison.by.empty()) report["by"] = comparison.by;
  return report;
}

QueryResult ComparisonCsv(const Comparison& comparison, const std::vector<std::string>& labels) {
  QueryResult table;
  table.columns = {"configuration", "parameters"};
  if (!comparison.by.empty()) table.columns.push_back("parameters_b");
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
    if (!comparison.by.empty()) row.push_back(c.configuration_b);
    for (const SideSummary* s : {&c.a, &c.b}) {
      row.insert(row.end(), {std::int64_t{s->runs}, std::int64_t{s->epoch_s.n}, s->epoch_s.median, s->epoch_s.low,
                             s->epoch_s.high, s->epoch_s.coverage});
    }
    row.insert(row.end(), {c.ratio, std::string(Text(c.verdict)), c.test.ratio, c.test.ratio_ci.low,
                           c.test.ratio_ci.high, c.test.u.p, c.test.p_holm, std::string(Text(c.test.change))});
    table.rows.push_back(std::move(row));
  }
  return table;
}

nlohmann::json HistoryJson(const std::string& spec, const std::string& database, const History& history,
                           const std::vector<std::string>& labels, double factor,
                           const std::optional<GateOutcome>& gate) {
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
  return {{"history", spec},
          {"database", database},
          {"builds", history.builds},
          {"method", HistoryMethod(factor)},
          {"gate", GateJson(gate, factor, 0)},
          {"configurations", configurations}};
}

}  // namespace dmlbench
