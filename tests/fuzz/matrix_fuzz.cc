// Fuzzes the matrix reader end to end: TOML text -> validated experiment ->
// expanded runs -> run keys. Any input must either be refused with a
// MatrixError that names the file, or expand into runs that keep the
// promises of matrix.h (valid parameters, a split for each run, no two runs
// with the same key). Anything else (a crash, another exception, a broken
// promise) aborts. Seeds: tests/fuzz/corpus/matrix/.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>

#include "orchestrator/matrix/matrix.h"

namespace {

constexpr std::string_view kPath = "fuzz.toml";
// Stand-ins for the trainer's and the dataset's checksums.
const std::string kTrainerSha256(64, 'a');
const std::string kDatasetSha256(64, 'b');

bool ValidRun(const dmlbench::PlannedRun& run) {
  const dmlbench::RunParams& p = run.params;
  bool ps = p.architecture == dmlbench::Architecture::kPs;
  return (run.split == "calibration" || run.split == "validation") && p.workers >= 1 &&
         p.workers <= 64 && (ps ? p.servers >= 1 && p.servers <= 64 : p.servers == 0) &&
         p.batch_size >= 1 && p.epochs >= 1 && !p.hidden.empty() && p.learning_rate > 0 &&
         p.bucket_bytes > 0 && p.max_iterations_per_epoch >= 0 && p.repetition >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    dmlbench::Experiment experiment = dmlbench::ParseExperiment(text, std::string(kPath));
    if (experiment.runs.empty()) std::abort();
    std::unordered_set<std::string> keys;
    for (const dmlbench::PlannedRun& run : experiment.runs) {
      if (!ValidRun(run)) std::abort();
      if (!keys.insert(dmlbench::RunKey(run.params, kTrainerSha256, kDatasetSha256)).second) {
        std::abort();
      }
    }
  } catch (const dmlbench::MatrixError& error) {
    std::string_view message = error.what();
    if (!message.starts_with(std::string(kPath) + ":")) std::abort();
  }
  return 0;
}
