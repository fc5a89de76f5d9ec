// TextFile: a small file read or written whole (a state file, a /proc or
// cgroup file). Owns nothing beyond a call. A failure to write is returned
// as a value naming the file and the system's reason, so that each stage
// words it and throws its own error type. Safe from any thread for
// distinct paths.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_TEXT_FILE_H_
#define DMLBENCH_ORCHESTRATOR_CORE_TEXT_FILE_H_

#include <optional>
#include <string>
#include <string_view>

namespace dmlbench {

// Why a file could not be written.
struct WriteFailure {
  std::string path;    // the file that failed (for ReplaceTextFile, maybe <path>.tmp)
  std::string reason;  // the system's words: "No such file or directory"
};

// The whole of `path`; "" when it cannot be opened (a missing file reads as
// empty, which is what a stopped process's pid file or an absent log means).
std::string ReadTextFile(const std::string& path);

// Writes `text` as the whole of `path`, in place: what a kernel file (a
// cgroup's cpu.max) needs. nullopt when written.
std::optional<WriteFailure> WriteTextFile(const std::string& path, std::string_view text);

// Writes `text` to <path>.tmp and renames it over `path`, so that a reader
// sees the old text or the new one, never a part. nullopt when written.
std::optional<WriteFailure> ReplaceTextFile(const std::string& path, std::string_view text);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_TEXT_FILE_H_
