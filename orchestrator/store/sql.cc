#include "orchestrator/store/store.h"

#include "orchestrator/store/store_impl.h"

#include <sqlite3.h>

#include <cstddef>
#include <exception>
#include <variant>

namespace dmlbench {
namespace {

std::string Trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  return std::string(text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1));
}

Cell CellOf(sqlite3_value* value) {
  switch (sqlite3_value_type(value)) {
    case SQLITE_INTEGER:
      return static_cast<std::int64_t>(sqlite3_value_int64(value));
    case SQLITE_FLOAT:
      return sqlite3_value_double(value);
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_BLOB:
      return "<blob of " + std::to_string(sqlite3_value_bytes(value)) + " bytes>";
    default:
      return std::string(reinterpret_cast<const char*>(sqlite3_value_text(value)),
                         static_cast<std::size_t>(sqlite3_value_bytes(value)));
  }
}

void SetResult(sqlite3_context* context, const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) {
    sqlite3_result_int64(context, *i);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    sqlite3_result_double(context, *d);
  } else if (const auto* text = std::get_if<std::string>(&cell)) {
    sqlite3_result_text(context, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(context);
  }
}

void CallScalar(sqlite3_context* context, int count, sqlite3_value** values) {
  try {
    std::vector<Cell> arguments;
    for (int i = 0; i < count; ++i) arguments.push_back(CellOf(values[i]));
    SetResult(context, (*static_cast<ScalarFunction*>(sqlite3_user_data(context)))(arguments));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

// An aggregate's rows live behind a pointer in SQLite's per-group context;
// the final call (which SQLite makes for every group, also after an error)
// frees them.
using AggregateRows = std::vector<std::vector<Cell>>;

void StepAggregate(sqlite3_context* context, int count, sqlite3_value** values) {
  auto** rows = static_cast<AggregateRows**>(sqlite3_aggregate_context(context, sizeof(AggregateRows*)));
  if (rows == nullptr) {
    sqlite3_result_error_nomem(context);
    return;
  }
  try {
    if (*rows == nullptr) *rows = new AggregateRows;
    std::vector<Cell> row;
    for (int i = 0; i < count; ++i) row.push_back(CellOf(values[i]));
    (*rows)->push_back(std::move(row));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}

void FinishAggregate(sqlite3_context* context) {
  auto** slot = static_cast<AggregateRows**>(sqlite3_aggregate_context(context, 0));
  const std::unique_ptr<AggregateRows> rows(slot != nullptr ? *slot : nullptr);
  try {
    const AggregateRows none;
    SetResult(context, (*static_cast<AggregateFunction*>(sqlite3_user_data(context)))(rows ? *rows : none));
  } catch (const std::exception& e) {
    sqlite3_result_error(context, e.what(), -1);
  }
}


}  // namespace

Cell CellOf(const SQLite::Column& column) {
  switch (column.getType()) {
    case SQLITE_INTEGER:
      return column.getInt64();
    case SQLITE_FLOAT:
      return column.getDouble();
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_BLOB:
      return "<blob of " + std::to_string(column.getBytes()) + " bytes>";
    default:
      return column.getString();
  }
}

QueryResult Store::Query(const std::string& sql) const {
  return WithStoreErrors(path_, [&] {
    // SQLite compiles the first statement and would silently drop the rest.
    sqlite3_stmt* first = nullptr;
    const char* rest = nullptr;
    if (sqlite3_prepare_v2(impl_->db.getHandle(), sql.c_str(), static_cast<int>(sql.size()), &first, &rest) ==
        SQLITE_OK) {
      const bool writes = first != nullptr && sqlite3_stmt_readonly(first) == 0;
      sqlite3_finalize(first);
      if (writes && mode_ != Mode::kReadWrite) {
        throw StoreError(path_ + ": the database is open read-only, and this statement would write (to it, or as "
                                 "VACUUM INTO to a file of its own): " + Trimmed(sql),
                         -1);
      }
      sqlite3_stmt* second = nullptr;
      const int status = sqlite3_prepare_v2(impl_->db.getHandle(), rest, -1, &second, nullptr);
      sqlite3_finalize(second);
      if (status != SQLITE_OK || second != nullptr) {
        throw StoreError(path_ + ": one SQL statement at a time, got more after the first: " + Trimmed(rest), -1);
      }
    }
    SQLite::Statement statement(impl_->db, sql);
    QueryResult result;
    const int count = statement.getColumnCount();
    for (int i = 0; i < count; ++i) result.columns.emplace_back(statement.getColumnName(i));
    while (statement.executeStep()) {
      std::vector<Cell> row;
      row.reserve(count);
      for (int i = 0; i < count; ++i) row.push_back(CellOf(statement.getColumn(i)));
      result.rows.push_back(std::move(row));
    }
    return result;
  });
}

void Store::ExecuteScript(const std::string& sql) {
  WithStoreErrors(path_, [&] { impl_->db.exec(sql); });
}

void Store::AddScalarFunction(const std::string& name, int arguments, ScalarFunction function) {
  impl_->scalar_functions.push_back(std::make_unique<ScalarFunction>(std::move(function)));
  const int code = sqlite3_create_function_v2(impl_->db.getHandle(), name.c_str(), arguments,
                                              SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                              impl_->scalar_functions.back().get(), CallScalar, nullptr, nullptr,
                                              nullptr);
  if (code != SQLITE_OK) throw StoreError(path_ + ": cannot add SQL function " + name + ": " + sqlite3_errstr(code), code);
}

void Store::AddAggregateFunction(const std::string& name, int arguments, AggregateFunction function) {
  impl_->aggregate_functions.push_back(std::make_unique<AggregateFunction>(std::move(function)));
  const int code = sqlite3_create_function_v2(impl_->db.getHandle(), name.c_str(), arguments,
                                              SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                              impl_->aggregate_functions.back().get(), nullptr, StepAggregate,
                                              FinishAggregate, nullptr);
  if (code != SQLITE_OK) throw StoreError(path_ + ": cannot add SQL function " + name + ": " + sqlite3_errstr(code), code);
}

std::vector<std::string> Store::TablesAndViews() const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
      ORDER BY type = 'view', name)");
    std::vector<std::string> names;
    while (select.executeStep()) names.push_back(select.getColumn(0).getString());
    return names;
  });
}

}  // namespace dmlbench
