// Checked text: what the store reads from a database before a path, a
// number or a name is built from it. A results database is a file people
// mail, commit and open from someone else's home, so its text is checked
// where it is read, whoever wrote it; an error names the database, the row
// and the column, and nothing is built from what failed. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_
#define DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dmlbench {

// Whether `text` is a run key: 64 lowercase hex digits (DESIGN.md section 5).
bool IsRunKey(std::string_view text);

// `text` when it is a run key; else throws StoreError
// "<db>: run <id>: runs.run_key is not 64 lowercase hex digits, got \"...\"".
std::string CheckedRunKey(const std::string& db, std::int64_t run_id, std::string text);

// The layer widths of a runs.hidden text ("128,32"): 1 to kMaxHiddenLayers
// decimal integers, each 1..kMaxLayerSize, separated by single commas; else
// throws StoreError naming the database, the run and the column.
std::vector<int> CheckedLayerWidths(const std::string& db, std::int64_t run_id, const std::string& text);

// Whether `name` is a plain SQL identifier, usable as a file name as it is:
// a letter or '_', then letters, digits or '_' (at most 128).
bool IsPlainName(std::string_view name);

// `dir` + "/" + `relative` when `relative` stays inside `dir`: not empty,
// not absolute, and no component empty, "." or ".."; else throws
// StoreError "<db>: <what> is not a path inside <dir>, got \"...\"".
std::string PathInside(const std::string& db, const std::string& dir, const std::string& relative,
                       const std::string& what);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_
