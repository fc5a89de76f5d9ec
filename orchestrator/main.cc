// dmlbench: the command line of the orchestrator. plan / run an experiment
// matrix, and status / query / export of the results database. Formatting
// of tables, CSV and JSON lives here; everything else is in the library.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "orchestrator/cluster/cluster_cli.h"
#include "orchestrator/launcher_factory.h"
#include "orchestrator/matrix.h"
#include "orchestrator/runner.h"
#include "orchestrator/ssh/ssh_cli.h"
#include "orchestrator/store.h"

namespace dmlbench {
namespace {

// Where Debian's dataset-fashion-mnist package installs the IDX files.
constexpr const char* kDefaultDatasetDir = "/usr/share/datasets/fashion-mnist";
constexpr int kExitInterrupted = 130;

std::atomic<bool> g_cancel{false};

void OnSignal(int) { g_cancel.store(true); }

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

// ---- cells and tables ------------------------------------------------------

std::string ExactText(const Cell& cell) {
  if (std::holds_alternative<std::nullptr_t>(cell)) return "";
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    char buffer[64];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, *d).ptr);
  }
  return std::get<std::string>(cell);
}

std::string ShortText(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6g", *d);
    return buffer;
  }
  return ExactText(cell);
}

std::string Runs(size_t count) { return std::to_string(count) + (count == 1 ? " run" : " runs"); }

std::string Shorten(const std::string& text, size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() <= width) return line;
  return line.substr(0, width - 3) + "...";
}

// Aligned columns; cells that are numbers align right.
void PrintTable(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      text += c ? "  " : "";
      text += right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    out << text << "\n";
  };
  line(headers);
  std::vector<std::string> rule;
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : rows) line(row);
}

void PrintQueryTable(std::ostream& out, const QueryResult& result) {
  std::vector<bool> right(result.columns.size(), false);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : result.rows) {
    std::vector<std::string> cells;
    for (size_t c = 0; c < row.size(); ++c) {
      if (std::holds_alternative<std::int64_t>(row[c]) || std::holds_alternative<double>(row[c])) right[c] = true;
      cells.push_back(Shorten(ShortText(row[c]), 80));
    }
    rows.push_back(std::move(cells));
  }
  PrintTable(out, result.columns, rows, right);
  out << "(" << result.rows.size() << (result.rows.size() == 1 ? " row" : " rows") << ")\n";
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void PrintCsv(std::ostream& out, const QueryResult& result) {
  for (size_t c = 0; c < result.columns.size(); ++c) out << (c ? "," : "") << CsvField(result.columns[c]);
  out << "\n";
  for (const auto& row : result.rows) {
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << CsvField(ExactText(row[c]));
    out << "\n";
  }
}

void PrintJson(std::ostream& out, const QueryResult& result) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.size(); ++c) {
      std::visit(
          [&](const auto& value) {
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::nullptr_t>) {
              object[result.columns[c]] = nullptr;
            } else {
              object[result.columns[c]] = value;
            }
          },
          row[c]);
    }
    rows.push_back(std::move(object));
  }
  out << rows.dump(2) << "\n";
}

// ---- locating programs and data -------------------------------------------

// dmlbench-trainer next to this program, in the build tree's trainer/
// directory, or in PATH.
std::string DefaultTrainer() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate : {self.parent_path() / "dmlbench-trainer",
                                  self.parent_path().parent_path() / "trainer" / "dmlbench-trainer"}) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "dmlbench-trainer";
}

// The IDX directory of `fashion-mnist` runs; "" when every run is synthetic.
std::string DatasetDir(const std::string& option, const Experiment& experiment) {
  bool needed = false;
  for (const PlannedRun& run : experiment.runs) needed = needed || run.params.dataset != "synthetic";
  if (!needed) return "";
  if (!option.empty()) return option;
  if (!experiment.execution.dataset_dir.empty()) return experiment.execution.dataset_dir;
  return kDefaultDatasetDir;
}

// ---- subcommands -------------------------------------------------------------

struct Options {
  std::string db = "results.db";
  std::string matrix;
  std::string trainer;
  std::string mpirun = "mpirun";
  std::string dataset_dir;
  std::string sql;
  bool csv = false;
  bool json = false;
  std::string export_dir;
};

int Plan(const Options& o) {
  const Experiment experiment = LoadExperiment(o.matrix);
  LauncherPaths paths{o.trainer, o.mpirun, DatasetDir(o.dataset_dir, experiment)};
  const std::string trainer_sha = MakeLauncher(experiment.execution, paths)->TrainerSha256();
  // Planning never writes: without a database every run is pending.
  const bool exists = std::filesystem::exists(o.db);
  Store store(exists ? o.db : ":memory:", exists ? Store::Mode::kReadOnly : Store::Mode::kReadWrite);
  const std::vector<PlanItem> plan = Plan(experiment, store, trainer_sha, paths.dataset_dir);
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, int> counts;
  int index = 0;
  for (const PlanItem& item : plan) {
    const RunParams& p = item.run.params;
    ++counts[item.state];
    rows.push_back({std::to_string(++index), item.run_key.substr(0, 12), p.architecture,
                    std::to_string(p.architecture == "ps" ? p.servers : 0), std::to_string(p.workers),
                    std::to_string(p.batch_size), p.overlap ? "on" : "off",
                    p.network.name.empty() ? "-" : p.network.name, std::to_string(p.repetition), item.run.split,
                    item.state, item.attempts ? std::to_string(item.attempts) : "",
                    Shorten(item.failure_reason, 60)});
  }
  PrintTable(std::cout,
             {"#", "run_key", "architecture", "servers", "workers", "batch", "overlap", "network", "rep", "split",
              "state", "attempts", "last failure"},
             rows, {true, false, false, true, true, true, false, false, true, false, false, true, false});
  std::cout << experiment.name << ": " << Runs(plan.size()) << ": " << counts["done"] << " done, "
            << counts["pending"] << " pending, " << counts["failed"] << " failed, " << counts["interrupted"]
            << " interrupted";
  if (counts["running"]) std::cout << ", " << counts["running"] << " running";
  std::cout << "\n";
  return 0;
}

void PrintSummary(std::ostream& out, const std::string& name, const SweepReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const RunReport& run : report.runs) {
    std::string epoch_s, throughput, accuracy;
    if (run.measures) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.3f", run.measures->epoch_s_mean);
      epoch_s = buffer;
      std::snprintf(buffer, sizeof buffer, "%.0f", run.measures->throughput_mean);
      throughput = buffer;
      if (run.measures->final_test_accuracy) {
        std::snprintf(buffer, sizeof buffer, "%.4f", *run.measures->final_test_accuracy);
        accuracy = buffer;
      }
    }
    const std::string state = run.item.state == "done" ? (run.ran_now ? "complete" : "complete (earlier)")
                                                       : run.item.state;
    rows.push_back({Describe(run.item.run.params), run.item.run.split, state, std::to_string(run.item.attempts),
                    epoch_s, throughput, accuracy, Shorten(run.item.failure_reason, 70)});
  }
  PrintTable(out, {"run", "split", "status", "attempts", "epoch_s", "samples/s", "test_acc", "reason"}, rows,
             {false, false, false, true, true, true, true, false});
  int now = 0;
  for (const RunReport& run : report.runs) now += run.ran_now && run.item.state == "done";
  out << name << ": " << Runs(report.runs.size()) << ": " << report.complete << " complete (" << now
      << " just now), " << report.failed << " failed, " << report.interrupted << " interrupted, "
      << report.pending << " pending\n";
  if (report.recovered) {
    out << report.recovered << (report.recovered == 1 ? " run was" : " runs were")
        << " left running by an orchestrator that stopped; redone\n";
  }
}

int Run(const Options& o) {
  const Experiment experiment = LoadExperiment(o.matrix);
  Store store(o.db);
  LauncherPaths paths;
  paths.trainer = o.trainer;
  paths.mpirun = o.mpirun;
  paths.dataset_dir = DatasetDir(o.dataset_dir, experiment);
  std::unique_ptr<Launcher> launcher = MakeLauncher(experiment.execution, paths);
  RunnerOptions options;
  options.dataset_dir = paths.dataset_dir;
  options.progress = &std::cerr;
  options.progress_redraws = ::isatty(STDERR_FILENO) != 0;
  Runner runner(store, *launcher, options);
  InstallSignalHandlers();
  const SweepReport report = runner.Run(experiment, g_cancel);
  PrintSummary(std::cout, experiment.name, report);
  if (report.cancelled) {
    std::cerr << "dmlbench: interrupted; `dmlbench run " << o.matrix << "` resumes\n";
    return kExitInterrupted;
  }
  return report.failed ? 1 : 0;
}

int Status(const Options& o) {
  if (!std::filesystem::exists(o.db)) {
    throw StoreError(o.db + ": no such database (it is created by `dmlbench run MATRIX`)", -1);
  }
  Store store(o.db, Store::Mode::kReadOnly);
  std::cout << o.db << ": schema version " << store.schema_version() << "\n";
  PrintQueryTable(std::cout, store.Query(R"(
    SELECT e.name AS experiment, count(r.run_id) AS runs,
           total(r.status = 'complete') AS complete, total(r.status = 'failed') AS failed,
           total(r.status = 'interrupted') AS interrupted,
           total(r.status IN ('pending', 'running')) AS pending_or_running,
           datetime(max(r.end_unix_s), 'unixepoch') AS last_run_end_utc
    FROM experiments e LEFT JOIN runs r USING (experiment_id)
    GROUP BY e.experiment_id ORDER BY e.experiment_id)"));
  return 0;
}

int Query(const Options& o) {
  if (!std::filesystem::exists(o.db)) {
    throw StoreError(o.db + ": no such database (it is created by `dmlbench run MATRIX`)", -1);
  }
  Store store(o.db, Store::Mode::kReadOnly);
  const QueryResult result = store.Query(o.sql);
  if (o.csv) {
    PrintCsv(std::cout, result);
  } else if (o.json) {
    PrintJson(std::cout, result);
  } else {
    PrintQueryTable(std::cout, result);
  }
  return 0;
}

int Export(const Options& o) {
  if (!std::filesystem::exists(o.db)) {
    throw StoreError(o.db + ": no such database (it is created by `dmlbench run MATRIX`)", -1);
  }
  Store store(o.db, Store::Mode::kReadOnly);
  std::filesystem::create_directories(o.export_dir);
  int files = 0;
  for (const std::string& name : store.TablesAndViews()) {
    const std::string file = (std::filesystem::path(o.export_dir) / (name + ".csv")).string();
    std::ofstream out(file, std::ios::binary);
    PrintCsv(out, store.Query("SELECT * FROM \"" + name + "\""));
    if (!out.flush()) throw std::runtime_error("cannot write " + file);
    ++files;
  }
  std::cout << "wrote " << files << " CSV files to " << o.export_dir << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"dmlbench: runs experiment matrices of the distributed trainer into an SQLite results database"};
  app.require_subcommand(1);
  app.fallthrough();
  Options o;
  o.trainer = DefaultTrainer();
  app.add_option("--db", o.db, "results database")->capture_default_str();

  auto add_program_options = [&](CLI::App* command) {
    command->add_option("MATRIX", o.matrix, "experiment file (schemas/matrix.md)")->required();
    command->add_option("--trainer", o.trainer, "dmlbench-trainer binary")->capture_default_str();
    command->add_option("--mpirun", o.mpirun, "Open MPI launcher")->capture_default_str();
    command->add_option("--dataset-dir", o.dataset_dir,
                        std::string("IDX files of fashion-mnist runs (default: the experiment's dataset_dir, "
                                    "else ") +
                            kDefaultDatasetDir + ")");
  };
  CLI::App* plan = app.add_subcommand("plan", "show the runs of a matrix and their state in the database; runs nothing");
  add_program_options(plan);
  CLI::App* run = app.add_subcommand("run", "execute the runs of a matrix that are not complete, then print a summary");
  add_program_options(run);
  CLI::App* status = app.add_subcommand("status", "runs per experiment and their states");
  CLI::App* query = app.add_subcommand("query", "run SQL on the database opened read-only");
  query->add_option("SQL", o.sql, "one SQL statement")->required();
  auto* csv = query->add_flag("--csv", o.csv, "CSV output");
  query->add_flag("--json", o.json, "JSON output (an array of objects)")->excludes(csv);
  CLI::App* export_command = app.add_subcommand("export", "write every table and view as DIR/<name>.csv");
  export_command->add_option("DIR", o.export_dir, "output directory (created if needed)")->required();

  AddInventoryCommands(app);
  AddClusterCommands(app);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*plan) return Plan(o);
    if (*run) return Run(o);
    if (*status) return Status(o);
    if (*query) return Query(o);
    if (*export_command) return Export(o);
  } catch (const std::exception& e) {
    std::cerr << "dmlbench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) { return dmlbench::Main(argc, argv); }
