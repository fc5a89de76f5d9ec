// The database schema as the numbered SQL files of schemas/migrations/,
// compiled into the program (cmake/EmbedMigrations.cmake), so that a built
// or installed dmlbench needs no source tree.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_MIGRATIONS_H_
#define DMLBENCH_ORCHESTRATOR_STORE_MIGRATIONS_H_

#include <span>

namespace dmlbench {

struct EmbeddedMigration {
  const char* file;  // e.g. "001_initial.sql"
  const char* sql;   // its whole text
};

// Every migration file, sorted by name.
std::span<const EmbeddedMigration> EmbeddedMigrations();

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_MIGRATIONS_H_
