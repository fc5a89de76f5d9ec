#include "orchestrator/launch/job_output.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>

namespace dmlbench {

std::vector<std::string> OutputFilenameArgs(const std::string& dir) {
  // ":nojobid" drops the job number Open MPI otherwise puts between `dir`
  // and the rank directories.
  return {"--output-filename", dir + ":nojobid"};
}

bool OrphanedOutputDir(std::string_view name) {
  constexpr std::string_view kRemote = ".output-";
  const std::string_view prefix = kOutputDirPrefix;
  if (name.substr(0, kRemote.size()) == kRemote) {
    // ".output-<run_key>-dmlbench-output-<pid>-XXXXXX"
    const size_t at = name.find("-" + std::string(prefix), kRemote.size());
    if (at == std::string_view::npos) return false;
    name.remove_prefix(at + 1);
  }
  if (name.substr(0, prefix.size()) != prefix) return false;
  name.remove_prefix(prefix.size());
  pid_t owner = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), owner);
  if (error != std::errc() || owner <= 0 || end == name.data() + name.size() || *end != '-') return false;
  // kill(pid, 0) fails with ESRCH only when no such process exists.
  return ::kill(owner, 0) != 0 && errno == ESRCH;
}

std::vector<JobOutputFile> ListJobOutput(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<JobOutputFile> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank.", 0) != 0 || !entry.is_directory()) continue;
    int rank = -1;
    const char* digits = name.data() + 5;
    const auto [end, parsed] = std::from_chars(digits, name.data() + name.size(), rank);
    if (parsed != std::errc() || end != name.data() + name.size() || rank < 0) continue;
    for (const char* stream : {"stdout", "stderr"}) {
      if (fs::is_regular_file(entry.path() / stream)) files.push_back({rank, stream, (entry.path() / stream).string()});
    }
  }
  std::sort(files.begin(), files.end(), [](const JobOutputFile& a, const JobOutputFile& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.stream == "stdout" && b.stream == "stderr";
  });
  const fs::path mpirun = fs::path(dir) / kMpirunStderrFile;
  if (fs::is_regular_file(mpirun, error)) files.push_back({std::nullopt, "stderr", mpirun.string()});
  return files;
}

}  // namespace dmlbench
