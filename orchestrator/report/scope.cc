#include "orchestrator/report/scope.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "orchestrator/filter/filter.h"
#include "orchestrator/report/definition.h"

namespace dmlbench {
namespace {

constexpr std::size_t kNamedExperiments = 5;

std::string Plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "experiment a", "experiments a, b and 3 more".
std::string ExperimentsText(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string text = names.size() == 1 ? "experiment " : "experiments ";
  for (std::size_t i = 0; i < names.size() && i < kNamedExperiments; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > kNamedExperiments) text += " and " + std::to_string(names.size() - kNamedExperiments) + " more";
  return text;
}

bool HasColumn(const Store& store, const std::string& table, const std::string& column) {
  const QueryResult columns = store.Query("SELECT name FROM pragma_table_info('" + table + "', 'main')");
  for (const auto& row : columns.rows) {
    if (std::get<std::string>(row[0]) == column) return true;
  }
  return false;
}

// Text up to and including the first "AS" word after "CREATE VIEW name":
// what follows is the view's SELECT.
std::size_t SelectStart(const std::string& sql) {
  std::string upper = sql;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (std::size_t at = upper.find("AS"); at != std::string::npos; at = upper.find("AS", at + 2)) {
    const bool before = at > 0 && std::isspace(static_cast<unsigned char>(upper[at - 1]));
    const bool after = at + 2 < upper.size() && std::isspace(static_cast<unsigned char>(upper[at + 2]));
    if (before && after) return at + 2;
  }
  throw ReportError("cannot read the definition of a view: " + sql);
}

// The distinct names of the experiments of the database, in their order.
std::vector<std::string> ExperimentNames(const Store& store) {
  std::vector<std::string> names;
  try {
    for (const auto& row : store.Query("SELECT name FROM experiments GROUP BY name ORDER BY min(experiment_id)").rows) {
      names.push_back(std::get<std::string>(row[0]));
    }
  } catch (const StoreError&) {
    // A database without experiments: none to name.
  }
  return names;
}

// "experiment quickstart, tag baseline, --only architecture=ring".
std::string Conditions(const ReportScope& scope) {
  std::string conditions;
  auto add = [&](const std::string& text) { conditions += (conditions.empty() ? "" : ", ") + text; };
  if (!scope.experiment.empty()) add("experiment " + scope.experiment);
  if (!scope.tag.empty()) add("tag " + scope.tag);
  if (!scope.only.empty()) add("--only " + scope.only);
  return conditions;
}

}  // namespace

std::string ScopeText(const ReportScope& scope, std::size_t chosen, std::size_t stored,
                      const std::vector<std::string>& experiments) {
  if (scope.empty()) {
    if (stored == 0) return "no runs: the database holds none";
    const std::string all = stored == 1 ? "the one run" : "all " + std::to_string(stored) + " runs";
    return all + (experiments.empty() ? "" : " (" + ExperimentsText(experiments) + ")");
  }
  return std::to_string(chosen) + " of the " + Plural(stored, "run", "runs") + ": " + Conditions(scope);
}

std::string ApplyScope(Store& store, const ReportScope& scope, const std::string& run_columns) {
  const std::string extra = run_columns.empty() ? "" : ", " + run_columns;
  if (scope.empty()) {
    if (!extra.empty()) store.ExecuteScript("CREATE TEMP VIEW runs AS SELECT *" + extra + " FROM main.runs");
    std::size_t stored = 0;
    try {
      stored = static_cast<std::size_t>(std::get<std::int64_t>(store.Query("SELECT count(*) FROM runs").rows[0][0]));
    } catch (const StoreError&) {
      // No runs table: an empty database.
    }
    return ScopeText(scope, 0, stored, ExperimentNames(store));
  }
  const Filter filter = scope.only.empty() ? Filter() : Filter::Parse(scope.only, "--only");
  std::vector<RunRecord> runs;
  try {
    runs = store.Runs();
  } catch (const StoreError&) {
    // An empty database: no run to choose.
  }
  const std::size_t stored = runs.size();
  auto contains = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (!scope.experiment.empty() && !contains(ExperimentNames(store), scope.experiment)) {
    std::string known;
    for (const std::string& name : ExperimentNames(store)) known += (known.empty() ? "" : ", ") + name;
    throw ReportError("--experiment " + scope.experiment + ": no experiment of that name in " + store.path() +
                      (known.empty() ? " (it has none)" : "; it has " + known));
  }
  if (!scope.tag.empty() &&
      std::none_of(runs.begin(), runs.end(), [&](const RunRecord& run) { return contains(run.tags, scope.tag); })) {
    throw ReportError("--tag " + scope.tag + ": no run in " + store.path() + " has that tag");
  }
  std::erase_if(runs, [&](const RunRecord& run) {
    if (!scope.experiment.empty() && !contains(run.experiments, scope.experiment)) return true;
    if (!scope.tag.empty() && !contains(run.tags, scope.tag)) return true;
    return !filter.Matches({run.params, run.run_key, run.status, run.split, run.tags, run.experiments,
                            run.trainer_sha256});
  });
  const std::string text = ScopeText(scope, runs.size(), stored, {});
  if (runs.empty()) {
    throw ReportError("the scope (" + Conditions(scope) + ") chooses none of the " + Plural(stored, "run", "runs") +
                      " in " + store.path());
  }

  std::string ids;
  for (const RunRecord& run : runs) ids += (ids.empty() ? "(" : "),(") + std::to_string(run.run_id);
  store.ExecuteScript("CREATE TEMP TABLE report_scope (run_id INTEGER PRIMARY KEY); INSERT INTO report_scope VALUES " +
                      ids + ")");
  const std::string in_scope = " IN (SELECT run_id FROM temp.report_scope)";
  const std::string attempts_in_scope = " IN (SELECT attempt_id FROM main.attempts WHERE run_id" + in_scope + ")";
  const bool memberships = HasColumn(store, "experiment_runs", "run_id");
  const QueryResult objects = store.Query(
      "SELECT type, name, sql FROM main.sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
      "ORDER BY rowid");
  std::string script;
  for (const auto& row : objects.rows) {
    const std::string type = std::get<std::string>(row[0]), name = std::get<std::string>(row[1]);
    const std::string sql = std::get<std::string>(row[2]);
    if (type == "view") {
      script += "CREATE TEMP VIEW " + name + " AS" + sql.substr(SelectStart(sql)) + ";\n";
      continue;
    }
    std::string where;
    if (name == "model_fit_runs") {
      // The runs a fit rests on, whichever they are.
    } else if (HasColumn(store, name, "run_id")) {
      where = "run_id" + in_scope;
    } else if (HasColumn(store, name, "attempt_id")) {
      where = "attempt_id" + attempts_in_scope;
    } else if (name == "experiments") {
      where = "experiment_id IN (SELECT experiment_id FROM main." +
              std::string(memberships ? "experiment_runs" : "runs") + " WHERE run_id" + in_scope + ")";
    }
    if (where.empty() && !(name == "runs" && !extra.empty())) continue;
    script += "CREATE TEMP VIEW " + name + " AS SELECT *" + (name == "runs" ? extra : "") + " FROM main." + name +
              (where.empty() ? "" : " WHERE " + where) + ";\n";
  }
  store.ExecuteScript(script);
  return text;
}

std::string ViewSource(const Store& store, const std::string& name) {
  const QueryResult temp =
      store.Query("SELECT sql FROM temp.sqlite_schema WHERE type = 'view' AND name = '" + name + "'");
  if (temp.rows.empty()) return "main." + name;
  const std::string sql = std::get<std::string>(temp.rows[0][0]);
  return "(" + sql.substr(SelectStart(sql)) + ")";
}

}  // namespace dmlbench
