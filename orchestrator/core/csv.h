// CSV fields as RFC 4180 writes them, for every CSV dmlbench prints or
// writes (query --csv, compare --csv, the report's tables). Pure function,
// safe from any thread. Does not parse CSV.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_CSV_H_
#define DMLBENCH_ORCHESTRATOR_CORE_CSV_H_

#include <string>
#include <string_view>

namespace dmlbench {

// The text itself when it holds no comma, double quote, CR or LF;
// otherwise wrapped in double quotes with each " written as "".
std::string CsvField(std::string_view text);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_CSV_H_
