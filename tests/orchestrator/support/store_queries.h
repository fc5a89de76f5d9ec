// One-cell queries for tests that check what a Store holds: the first cell
// of the first row as an integer, a real or as text. Throws (std::bad_variant_access,
// std::out_of_range) when the cell is not there or of another type, which
// fails the test. Header-only.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_STORE_QUERIES_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_STORE_QUERIES_H_

#include <cstdint>
#include <string>

#include "orchestrator/store/store.h"

namespace dmlbench::testing {

inline std::int64_t Int(const Store& store, const std::string& sql) {
  return std::get<std::int64_t>(store.Query(sql).rows.at(0).at(0));
}

inline double Real(const Store& store, const std::string& sql) {
  return std::get<double>(store.Query(sql).rows.at(0).at(0));
}

inline std::string Text(const Store& store, const std::string& sql) {
  return std::get<std::string>(store.Query(sql).rows.at(0).at(0));
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_STORE_QUERIES_H_
