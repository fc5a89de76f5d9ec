// `dmlbench status`: runs per experiment and their states, read-only. One
// row per experiment name, with how many versions of its matrix were run
// (an edited matrix is another version) and the path its latest was read
// from; a run counts once for every name whose versions planned it
// (experiment_runs). Below, the complete runs whose attempt holds a note
// (an epoch far slower than the others).
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <map>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/terminal_text.h"

namespace dmlbench {
namespace {

// The column counting the runs in these states, named by them (runs.status
// holds their text, core/enums.h): "total(r.status IN ('pending',
// 'running')) AS pending_or_running".
std::string CountOf(std::initializer_list<RunState> states) {
  std::string texts, name;
  for (const RunState state : states) {
    texts += (texts.empty() ? "'" : ", '") + std::string(Text(state)) + "'";
    name += (name.empty() ? "" : "_or_") + std::string(Text(state));
  }
  return "total(r.status IN (" + texts + ")) AS " + name;
}

// The complete runs whose attempt holds a note, the first kShownNotes of
// them with their key, parameters and note.
void PrintNotes(const Store& store) {
  constexpr std::size_t kShownNotes = 10;
  const QueryResult notes = store.Query(R"(
    SELECT r.run_id, a.note FROM runs r JOIN attempts a ON a.attempt_id = r.complete_attempt_id
    WHERE a.note IS NOT NULL ORDER BY r.run_id)");
  if (notes.rows.empty()) return;
  std::map<std::int64_t, RunRecord> runs;
  for (RunRecord& run : store.Runs()) runs[run.run_id] = std::move(run);
  std::cout << "\n" << notes.rows.size() << " complete " << (notes.rows.size() == 1 ? "run has" : "runs have")
            << " a note (`dmlbench logs RUN` prints it with the attempt):\n";
  for (std::size_t i = 0; i < notes.rows.size() && i < kShownNotes; ++i) {
    const RunRecord& run = runs.at(std::get<std::int64_t>(notes.rows[i][0]));
    std::cout << "  " << run.run_key.substr(0, 12) << " " << TerminalText(Describe(run.params)) << ": "
              << TerminalText(std::get<std::string>(notes.rows[i][1])) << "\n";
  }
  if (notes.rows.size() > kShownNotes) std::cout << "  and " << notes.rows.size() - kShownNotes << " more\n";
}

void StatusCommand(const GlobalOptions& global) {
  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  std::cout << global.db << ": schema version " << store->schema_version() << "\n";
  // Until schema version 7 a run belonged only to the experiment that first
  // planned it; a database that old is read as it is.
  constexpr int kSharedRunsVersion = 7;
  const std::string members = store->schema_version() >= kSharedRunsVersion
                                  ? "experiments e JOIN experiment_runs m USING (experiment_id)"
                                  : "experiments e JOIN runs m USING (experiment_id)";
  const std::string counts = CountOf({RunState::kComplete}) + ", " + CountOf({RunState::kFailed}) + ", " +
                             CountOf({RunState::kInterrupted}) + ", " +
                             CountOf({RunState::kPending, RunState::kRunning});
  // One row per experiment name: its versions (each text of the matrix
  // that was run is one) and every run any of them planned, once.
  PrintQueryTable(std::cout, store->Query(R"(
    WITH versions AS (SELECT name, count(*) AS versions, min(experiment_id) AS first, max(experiment_id) AS latest
                      FROM experiments GROUP BY name),
         members AS (SELECT DISTINCT e.name, m.run_id FROM )" + members + R"()
    SELECT v.name AS experiment, v.versions, count(r.run_id) AS runs, )" + counts + R"(,
           datetime(max(r.end_unix_s), 'unixepoch') AS last_run_end_utc,
           (SELECT source_path FROM experiments WHERE experiment_id = v.latest) AS latest_source_path
    FROM versions v LEFT JOIN members USING (name) LEFT JOIN runs r USING (run_id)
    GROUP BY v.name ORDER BY v.first)"));
  if (store->schema_version() >= Store::kAttemptNotesVersion) PrintNotes(*store);
}

}  // namespace

void AddStatusCommand(CLI::App& app, const GlobalOptions& global) {
  CLI::App* status =
      app.add_subcommand("status", "runs per experiment (one row per name, with its versions) and their states");
  status->callback([&global] { StatusCommand(global); });
}

}  // namespace dmlbench
