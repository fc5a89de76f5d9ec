// Gzip: whole files into and out of the gzip format (zlib), for the output
// of attempts kept beside the database (schemas/database.md). The one module
// of the orchestrator that uses zlib. Stateless; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_GZIP_H_
#define DMLBENCH_ORCHESTRATOR_STORE_GZIP_H_

#include <cstdint>
#include <string>

namespace dmlbench {

// Compresses the file `from` into the gzip file `to` (created or truncated).
// Returns the number of bytes read from `from`. Throws StoreError naming
// the file that could not be read or written.
std::int64_t GzipFile(const std::string& from, const std::string& to);

// The uncompressed content of the gzip file `path`. Throws StoreError
// naming it when it cannot be read or is not gzip.
std::string GunzipFile(const std::string& path);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_GZIP_H_
