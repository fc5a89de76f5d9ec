// Matrix: reads an experiment file (experiments/*.toml, format in
// schemas/matrix.md), validates it and expands it into fully resolved runs.
// This is the one place TOML becomes typed options. It does not look at the
// database or any host. Pure functions; safe to call from any thread.
#ifndef DMLBENCH_ORCHESTRATOR_MATRIX_H_
#define DMLBENCH_ORCHESTRATOR_MATRIX_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/launcher.h"

namespace dmlbench {

// Thrown for any invalid experiment file. what() is the whole message:
// "experiments/sweep.toml:12:5: workers must be between 1 and 64, got 0".
class MatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One fully resolved run: every parameter that can change what the trainer
// measures. Two runs with equal RunParams are the same experiment point.
struct RunParams {
  std::string architecture = "ring";     // ring | mpi | ps | p2p
  int workers = 1;                       // w
  int servers = 0;                       // k, ps only (1, 2 or 4 in the study)
  int batch_size = 100;                  // local batch b per worker
  int epochs = 1;
  std::vector<int> hidden = {128, 32};
  double learning_rate = 0.05;
  bool overlap = false;
  std::int64_t bucket_bytes = 1 << 20;
  std::int64_t max_iterations_per_epoch = 0;  // 0 = whole epochs
  std::string dataset = "fashion-mnist";      // "fashion-mnist" (DATASET dir) or "synthetic"
  std::uint64_t seed = 1;                     // base seed + repetition
  int repetition = 0;                         // 0-based
  NetworkProfile network;

  int ranks() const { return workers + (architecture == "ps" ? servers : 0); }
};

struct ExecutionOptions {
  std::string provider = "local";        // local | ssh | cluster
  std::string inventory;                 // ssh: inventory file (relative to the matrix file)
  double timeout_s = 900;                // per run
  int attempts = 2;                      // tries per run before it is failed
  std::string dataset_dir;               // "" = the default Fashion-MNIST directory
};

struct PlannedRun {
  RunParams params;
  std::string split;                     // "calibration" | "validation"
};

struct Experiment {
  std::string name;
  std::string description;
  std::string source_path;               // as given by the user
  std::string source_text;               // the file's bytes
  std::string source_sha256;             // hex
  ExecutionOptions execution;
  std::vector<PlannedRun> runs;          // in expansion order, deterministic
};

// Reads, validates and expands. Throws MatrixError.
Experiment LoadExperiment(const std::string& path);
// Same, from text already in memory (`path` is only used in messages).
Experiment ParseExperiment(const std::string& text, const std::string& path);

// The canonical form of the parameters (sorted keys, no whitespace JSON);
// the run key is sha256(canonical || trainer sha256 || dataset checksum).
std::string CanonicalJson(const RunParams& params);
std::string RunKey(const RunParams& params, const std::string& trainer_sha256,
                   const std::string& dataset_sha256);

// One line naming the point for progress output and messages, e.g.
// "ps k=2 w=4 b=100 net=1gbit rep=0".
std::string Describe(const RunParams& params);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MATRIX_H_
