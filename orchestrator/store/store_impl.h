// Store internals shared by the files that implement the Store (store.cc and
// the table groups beside it): the connection, the open batch, the
// statements prepared once, the translation of SQLiteCpp's exceptions into
// StoreError, and binding helpers. Included by store/*.cc only; nothing
// outside store/ sees SQLiteCpp. Not thread-safe, like the Store.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_STORE_IMPL_H_
#define DMLBENCH_ORCHESTRATOR_STORE_STORE_IMPL_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/store/store.h"

namespace dmlbench {

struct Store::Impl {
  // `name` is a path, or a "file:" URI with OPEN_URI in `flags`.
  Impl(const std::string& name, int flags);

  // A transaction of one write of its own, IMMEDIATE or the deferred
  // default; none (nullopt) while a batch is open, whose transaction the
  // write then joins. Commit it when it is there.
  std::optional<SQLite::Transaction> OwnTransaction(bool immediate);

  // Declared before db: SQL functions outlive the connection that calls them.
  std::vector<std::unique_ptr<ScalarFunction>> scalar_functions;
  std::vector<std::unique_ptr<AggregateFunction>> aggregate_functions;
  SQLite::Database db;
  // Prepared once: the statements ingest runs for every event.
  std::unique_ptr<SQLite::Statement> insert_epoch;
  std::unique_ptr<SQLite::Statement> insert_rank;
  std::unique_ptr<SQLite::Statement> insert_iteration;
  // The open Batch's transaction; null when none is open. Declared after db
  // and the statements, so that it rolls back before they go.
  std::unique_ptr<SQLite::Transaction> batch;
};

// Every SQLiteCpp call runs inside this so that callers only ever see
// StoreError: the database path, SQLite's own message and extended code.
template <typename Body>
auto WithStoreErrors(const std::string& path, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    throw StoreError(path + ": " + e.what(), e.getExtendedErrorCode());
  }
}

template <typename T>
void BindOptional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}

// Binds NULL for "", else the text.
void BindTextOrNull(SQLite::Statement& statement, int index, const std::string& value);

// A column's value as SQLite stores it (a blob as "<blob of N bytes>"), for
// the checks of checked_text.h.
Cell CellOf(const SQLite::Column& column);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_STORE_IMPL_H_
