// Checked text: what the store reads from a database before a path, a
// number, a state or a name is built from it. A results database is a file
// people mail, commit and open from someone else's home, so its values are
// checked where they are read, whoever wrote them (SQLite keeps text in an
// INTEGER column, and a CHECK can be switched off): an error names the
// database, the row and the column, and nothing is built from what failed.
// Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_
#define DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/enums.h"
#include "orchestrator/store/records.h"

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

// Where a value sits, as an error names it: "<db>: <row>: <column>", e.g.
// "r.db: run 3: runs.workers" (row "run 3", column "runs.workers").
std::string ColumnPlace(const std::string& db, const std::string& row, std::string_view column);

// A value as an error quotes it: NULL, an integer or a real as written,
// text double-quoted with its control characters escaped.
std::string CellQuoted(const Cell& value);

inline constexpr double kNoBound = std::numeric_limits<double>::infinity();

// The checked value of a column at `place` (ColumnPlace); else each throws
// StoreError "<place> is not <what was expected>, got <value>".
// An integer (stored as one) from `low` to `high`.
std::int64_t CheckedInteger(const std::string& place, const Cell& value, std::int64_t low, std::int64_t high);
// A number (an integer or a real), finite, from `low` to `high` (infinity:
// no bound above).
double CheckedReal(const std::string& place, const Cell& value, double low, double high = kNoBound);
// A number above 0, finite, at most `high`.
double CheckedPositiveReal(const std::string& place, const Cell& value, double high = kNoBound);
// 0 or 1.
bool CheckedFlag(const std::string& place, const Cell& value);
// Text that is one of `words`.
std::string CheckedWord(const std::string& place, const Cell& value, const std::vector<std::string_view>& words);
// Text that is the Text() of a value of `Enum` (core/enums.h).
template <typename Enum>
Enum CheckedState(const std::string& place, const Cell& value) {
  return *FromText<Enum>(CheckedWord(place, value, AllTexts<Enum>()));
}

// A number written as text (a host's cpu_cores tag, "0.15"): all of it a
// number as strtod reads one, starting with a digit or '.', from `low` to
// `high`; else throws StoreError as the Checked* above.
double CheckedNumberText(const std::string& place, const std::string& text, double low, double high);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_CHECKED_TEXT_H_
