// Error: the one base of every exception the orchestrator's stages throw
// (MatrixError, StoreError, LaunchError, SshError, ClusterError, ...). Each
// stage wraps the library it owns (toml++, SQLite, libssh) into its own
// subclass, keeping the library's message and code; only cli/ catches Error
// and prints it. what() is always the whole one-line message. Thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_ERROR_H_
#define DMLBENCH_ORCHESTRATOR_CORE_ERROR_H_

#include <stdexcept>

namespace dmlbench {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_ERROR_H_
