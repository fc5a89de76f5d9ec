// Calibration data built in memory for the model tests that need no
// database: runs whose epoch times follow a given function, on probed links.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_MODEL_MODEL_DATA_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_MODEL_MODEL_DATA_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/model/observations.h"
#include "orchestrator/model/physics.h"

namespace dmlbench::testing {

inline ModelConfig Configuration(Architecture architecture, int workers, int servers, int batch_size,
                                 double bandwidth_bits_per_s) {
  ModelConfig config;
  config.architecture = architecture;
  config.workers = workers;
  config.servers = servers;
  config.batch_size = batch_size;
  config.network.bandwidth_bits_per_s = bandwidth_bits_per_s;
  return config;
}

// A calibration run of `config` whose every steady epoch takes `epoch_s`.
inline RunObservation CalibrationRun(std::int64_t run_id, const ModelConfig& config, double epoch_s) {
  RunObservation run;
  run.run_id = run_id;
  run.run_key = "run" + std::to_string(run_id);
  run.split = "calibration";
  run.config = config;
  run.parameters = ParameterCount(config);
  run.iterations_per_epoch = IterationsPerEpoch(config);
  run.steady_epoch_s = {epoch_s, epoch_s};
  run.epoch_s = epoch_s;
  run.iteration_s = epoch_s / static_cast<double>(run.iterations_per_epoch);
  return run;
}

// A probe of an unshaped-latency link at `bits_per_s`, measured at that
// rate exactly with `alpha_s`.
inline LinkObservation Probe(double bits_per_s, double alpha_s) {
  return LinkObservation{bits_per_s, 0, alpha_s, bits_per_s / 8, {1}};
}

// The configurations the models' monotonicity tests walk: every scheme, 1 to
// 8 workers, batches of 16, 100 and 512, 100 Mbit/s and 1 Gbit/s, uncapped
// and at 0.15 and 0.5 core.
inline std::vector<ModelConfig> MonotonicityConfigurations() {
  std::vector<ModelConfig> all;
  const std::vector<std::pair<Architecture, int>> schemes = {
      {Architecture::kRing, 0}, {Architecture::kMpi, 0}, {Architecture::kP2p, 0},
      {Architecture::kPs, 1},   {Architecture::kPs, 2},  {Architecture::kPs, 4}};
  for (const auto& [architecture, servers] : schemes) {
    for (int w = 1; w <= 8; ++w) {
      for (int b : {16, 100, 512}) {
        for (double bandwidth : {1e8, 1e9}) {
          for (double cpu : {0.0, 0.15, 0.5}) {
            ModelConfig config = Configuration(architecture, w, servers, b, bandwidth);
            config.cpu_cores = cpu;
            all.push_back(config);
          }
        }
      }
    }
  }
  return all;
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_MODEL_MODEL_DATA_H_
