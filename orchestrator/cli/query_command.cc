// `dmlbench query SQL`: free SQL on the database opened read-only, as a
// table, CSV or JSON, with the SQL functions the report's own SQL has
// (report/sql_functions.h: median, its 95% interval, quantile, cv,
// round_sig, link_time_s, iteration_bound_s), so that a question asked of
// the results reads as the report asks it.
#include <iostream>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/report/sql_functions.h"

namespace dmlbench {
namespace {

struct QueryOptions {
  std::string sql;
  bool csv = false;
  bool json = false;
};

void QueryCommand(const GlobalOptions& global, const QueryOptions& o) {
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  AddStatisticsFunctions(*store);
  AddDisplayFunctions(*store);
  AddLinkTimeFunctions(*store);
  const QueryResult result = store->Query(o.sql);
  if (o.csv) {
    PrintCsv(std::cout, result);
  } else if (o.json) {
    PrintJson(std::cout, result);
  } else {
    PrintQueryTable(std::cout, result);
  }
}

}  // namespace

void AddQueryCommand(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<QueryOptions>();
  CLI::App* query = app.add_subcommand(
      "query", "run SQL on the database opened read-only; besides SQLite's own functions: median(x), "
               "median_ci_low(x), median_ci_high(x), median_ci_coverage(x), quantile(x, p), cv(x), "
               "kendall_tau(x, y), round_sig(x, digits), link_time_s(run_id), iteration_bound_s(run_id) "
               "(reports/README.md)");
  query->add_option("SQL", o->sql, "one SQL statement")->required();
  auto* csv = query->add_flag("--csv", o->csv, "CSV output");
  query->add_flag("--json", o->json, "JSON output (an array of objects)")->excludes(csv);
  query->callback([&global, o] { QueryCommand(global, *o); });
}

}  // namespace dmlbench
