#include "orchestrator/launch/job_output.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace dmlbench {

std::vector<std::string> OutputFilenameArgs(const std::string& dir) {
  // ":nojobid" drops the job number Open MPI otherwise puts between `dir`
  // and the rank directories.
  return {"--output-filename", dir + ":nojobid"};
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
