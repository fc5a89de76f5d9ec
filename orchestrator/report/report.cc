#include "orchestrator/report/report.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "common/sha256.h"
#include "orchestrator/report/figures.h"
#include "orchestrator/report/formats.h"
#include "orchestrator/report/page.h"
#include "orchestrator/report/sql_functions.h"
#include "orchestrator/store/epoch_validity.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw ReportError("cannot write " + path.string());
}

// Rows of an SQL file, or why this database cannot give them.
struct Rows {
  QueryResult result;
  std::string missing;
};

class SectionRunner {
 public:
  SectionRunner(Store& store, const ReportDefinition& definition)
      : store_(store), base_dir_(fs::path(definition.path).parent_path()) {}

  // A table or column the database lacks is "missing" when the database is
  // older than this program (its schema predates it); on a database of the
  // current schema it is a mistake in the SQL file, and fails.
  Rows Run(const SqlFile& sql) const {
    try {
      return {store_.Query(sql.text), ""};
    } catch (const StoreError& e) {
      const std::string message = WithoutPath(e);
      const bool absent = message.starts_with("no such table") || message.starts_with("no such column");
      if (absent && store_.schema_version() < Store::KnownSchemaVersion()) {
        return {{}, "This database cannot give it: " + message + " (its schema version is " +
                        std::to_string(store_.schema_version()) + ", this dmlbench's is " +
                        std::to_string(Store::KnownSchemaVersion()) + ")."};
      }
      throw ReportError((base_dir_ / sql.path).string() + ": " + message);
    }
  }

  void CreateViews(const SqlFile& views) const {
    if (views.text.empty()) return;
    try {
      store_.ExecuteScript(views.text);
    } catch (const StoreError& e) {
      throw ReportError((base_dir_ / views.path).string() + ": " + WithoutPath(e));
    }
  }

  SectionResult Compute(const Section& section) const {
    SectionResult result;
    result.section = &section;
    if (section.kind == Section::Kind::kTable) {
      Rows rows = Run(section.table);
      result.table = std::move(rows.result);
      result.missing = !rows.missing.empty() ? rows.missing : result.table.rows.empty() ? section.empty : "";
      return result;
    }
    for (std::size_t i = 0; i < section.data.size(); ++i) {
      Rows rows = Run(section.data[i].sql);
      if (i == 0 && (!rows.missing.empty() || rows.result.rows.empty())) {
        result.missing = rows.missing.empty() ? section.empty : rows.missing;
        result.data.clear();
        return result;
      }
      if (rows.result.rows.empty()) {
        result.notes.push_back(!rows.missing.empty()          ? rows.missing
                               : !section.data[i].missing.empty() ? section.data[i].missing
                                                                  : "No rows for " + section.data[i].name + ".");
      }
      result.data.emplace_back(section.data[i].name, std::move(rows.result));
    }
    return result;
  }

 private:
  // The database's path must not reach the report (the same database
  // elsewhere gives the same report): StoreError's what() starts with it.
  std::string WithoutPath(const StoreError& e) const {
    const std::string message = e.what(), prefix = store_.path() + ": ";
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  }

  Store& store_;
  fs::path base_dir_;
};

// Files a section may have written before, removed so that a section now
// missing leaves nothing stale behind. Only names of the report's own.
void RemoveOutputs(const fs::path& out, const Section& section) {
  for (const char* format : {".md", ".csv", ".tex"}) fs::remove(out / "tables" / (section.id + format));
  for (const char* format : {".svg", ".png"}) fs::remove(out / "figures" / (section.id + format));
  for (const fs::directory_entry& entry : fs::directory_iterator(out / "figures")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(section.id + ".") && name.ends_with(".tsv")) fs::remove(entry.path());
  }
}

QueryResult Provenance(const SectionRunner& runner, const ReportDefinition& definition, const std::string& database) {
  QueryResult provenance;
  provenance.columns = {"what", "value"};
  provenance.rows.push_back({std::string("database"), fs::path(database).filename().string() + " sha256 " +
                                                          Sha256FileHex(database)});
  if (definition.provenance.text.empty()) return provenance;
  Rows rows = runner.Run(definition.provenance);
  if (!rows.missing.empty()) provenance.rows.push_back({std::string("runs"), rows.missing});
  for (std::vector<Cell>& row : rows.result.rows) {
    if (row.size() != 2) throw ReportError(definition.provenance.path + ": must give two columns, what and value");
    provenance.rows.push_back(std::move(row));
  }
  return provenance;
}

std::int64_t IntegerOf(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return static_cast<std::int64_t>(*d);
  return 0;
}

// Every SQL file reads steady epochs through the view steady_epochs: a
// temporary view of that name (over the scope's, if it made one), which
// comes first in name lookup, leaves out those EpochFault refuses. Returns a LeftOutText line per run that had some.
std::vector<std::string> LeaveOutInvalidEpochs(Store& store) {
  if (store.schema_version() < 3) return {};  // no steady_epochs before version 3
  std::map<std::int64_t, std::string> left_out;
  store.SteadyEpochs(&left_out);
  if (left_out.empty()) return {};
  store.AddScalarFunction("epoch_fault", 3, [](const std::vector<Cell>& arguments) -> Cell {
    const double* wall_s = std::get_if<double>(&arguments[0]);
    const auto why = EpochFault(wall_s ? *wall_s : static_cast<double>(IntegerOf(arguments[0])),
                                IntegerOf(arguments[1]), IntegerOf(arguments[2]));
    return why ? Cell(*why) : Cell(nullptr);
  });
  const std::string source = ViewSource(store, "steady_epochs");
  store.ExecuteScript("DROP VIEW IF EXISTS temp.steady_epochs; CREATE TEMP VIEW steady_epochs AS SELECT * FROM " +
                      source + " WHERE epoch_fault(wall_s, iterations, samples) IS NULL");
  std::vector<std::string> lines;
  for (const auto& [run_id, line] : left_out) lines.push_back(line);
  return lines;
}

}  // namespace

ReportSummary GenerateReport(const ReportOptions& options) {
  const ReportDefinition definition = ReadReportDefinition(options.definition);
  if (!fs::is_regular_file(options.database)) {
    throw ReportError(options.database + ": no such database (it is created by `dmlbench run MATRIX`)");
  }
  Store store(options.database, Store::Mode::kReadOnlyScratch);
  AddStatisticsFunctions(store);
  AddDisplayFunctions(store);
  // A database older than runs.partition_bytes or runs.pulls_in_turn (but
  // not empty) gets them, 0, from the temporary view `runs` of the scope,
  // which comes first in name lookup, so the report's SQL reads the columns
  // either way.
  std::string run_columns;
  if (store.schema_version() >= 1 && store.schema_version() < Store::kPullsInTurnVersion) {
    const bool parts = store.schema_version() >= Store::kPartitionBytesVersion;
    run_columns = std::string(parts ? "" : "0 AS partition_bytes, ") + "0 AS pulls_in_turn";
  }
  const std::string covers = ApplyScope(store, options.scope, run_columns);
  AddLinkTimeFunctions(store);
  const std::vector<std::string> left_out = LeaveOutInvalidEpochs(store);
  const SectionRunner runner(store, definition);
  runner.CreateViews(definition.views);

  const fs::path out(options.out_dir);
  fs::create_directories(out / "tables");
  fs::create_directories(out / "figures");
  PageInput page;
  page.title = definition.title;
  page.database_name = fs::path(options.database).filename().string();
  page.covers = covers;
  ReportSummary summary;
  summary.covers = covers;
  std::vector<FigureJob> figures;
  for (const Section& section : definition.sections) {
    RemoveOutputs(out, section);
    SectionResult result = runner.Compute(section);
    if (!result.missing.empty()) {
      summary.missing.push_back(section.id + ": " + result.missing);
    } else if (section.kind == Section::Kind::kTable) {
      WriteText(out / "tables" / (section.id + ".md"), MarkdownTable(result.table));
      WriteText(out / "tables" / (section.id + ".csv"), CsvTable(result.table));
      WriteText(out / "tables" / (section.id + ".tex"), LatexTable(result.table));
      ++summary.tables;
    } else {
      FigureJob job{section.id, section.template_path, {}};
      for (const auto& [name, rows] : result.data) {
        WriteText(out / "figures" / (section.id + "." + name + ".tsv"), GnuplotData(rows));
        if (!rows.rows.empty()) job.present.push_back(name);
      }
      figures.push_back(std::move(job));
      ++summary.figures;
    }
    page.sections.push_back(std::move(result));
  }
  DrawFigures(options.gnuplot, fs::absolute(out / "figures").string(), figures);
  if (fs::is_empty(out / "figures")) fs::remove(out / "figures");  // a report of tables only has none
  page.provenance = Provenance(runner, definition, options.database);
  for (const std::string& line : left_out) page.provenance.rows.push_back({std::string("left out"), line});
  summary.left_out = left_out;
  summary.open_note = store.open_note();
  WriteText(out / "index.html", HtmlPage(page));
  WriteText(out / "report.md", MarkdownPage(page));
  return summary;
}

}  // namespace dmlbench
