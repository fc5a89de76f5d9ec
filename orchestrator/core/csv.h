// CSV fields as RFC 4180 writes them, for every CSV dmlbench prints or
// writes (query --csv, compare --csv, the report's tables). Pure function,
// safe from any thread. Does not parse CSV.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_CSV_H_
#define DMLBENCH_ORCHESTRATOR_CORE_CSV_H_

#include <string>
#include <string_view>

namespace dmlbench {

// The text itself when it holds no comma, double quote, CR or LF;
// otherwise wrapped in double quotes with each " written as "". Control
// characters other than CR, LF and TAB are written as visible escapes
// ("\e", "\x07"; core/terminal_text.h VisibleControls): a CSV file is read
// by people too, and printed raw an ESC redraws their terminal.
std::string CsvField(std::string_view text);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_CSV_H_
