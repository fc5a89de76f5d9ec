// TextTable: a table of text for a person, as a stage composes it and the
// command line prints it aligned (cli/table.h's PrintTable): headers, rows of
// cells, and which columns align right. A value; no behaviour.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_TEXT_TABLE_H_
#define DMLBENCH_ORCHESTRATOR_CORE_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace dmlbench {

struct TextTable {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;  // per column: numbers align right
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_TEXT_TABLE_H_
