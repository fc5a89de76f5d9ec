// Table: how the command line shows query results and summaries — aligned
// text tables (numbers right-aligned, a value of several lines over several
// lines), CSV (RFC 4180 quoting) and JSON (an array of objects). Every value
// is shown whole. Formatting only: it never reads the database itself. Pure
// functions of their arguments; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CLI_TABLE_H_
#define DMLBENCH_ORCHESTRATOR_CLI_TABLE_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "orchestrator/core/text_table.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// A cell as text that reads back exactly ("" for NULL).
std::string ExactText(const Cell& cell);
// A cell as text for people (%.6g for reals).
std::string ShortText(const Cell& cell);
// "1 run", "3 runs".
std::string Runs(size_t count);
// The first line of `text`, cut to `width` with "..." when longer.
std::string Shorten(const std::string& text, size_t width);

// Aligned columns; right[c] right-aligns column c. A cell with line breaks
// takes as many lines as it has, the other cells of its row blank below.
void PrintTable(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);
void PrintTable(std::ostream& out, const TextTable& table);
// A query result as a table with its row count.
void PrintQueryTable(std::ostream& out, const QueryResult& result);
void PrintCsv(std::ostream& out, const QueryResult& result);
// Object keys are the column names; a name an earlier column already has
// gets ":N", the smallest N >= 1 that no column of the result is named, so
// no column is lost (the names CSV and the table show are unchanged).
void PrintJson(std::ostream& out, const QueryResult& result);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CLI_TABLE_H_
