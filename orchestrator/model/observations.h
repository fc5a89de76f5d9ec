// Observations: what the model stage reads from the results database — each
// complete run as a configuration with its steady-state times (the first
// epoch is warm-up and never used when a later one exists), and each link
// profile as the link probe measured it. Reads through the Store's typed
// calls (CompleteRuns, SteadyEpochs, BusiestCpuPerIteration,
// LatestCalibrationProbes); never writes. Not thread-safe (the Store is not).
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_OBSERVATIONS_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_OBSERVATIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/physics.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

struct RunObservation {
  std::int64_t run_id = 0;
  std::string run_key;
  std::string split;                    // calibration | validation
  std::string experiment;               // its experiment's name
  ModelConfig config;                   // with its repetition (from 0) and the rest of its parameters
  std::int64_t parameters = 0;          // P, from the trainer's run_start
  std::int64_t iterations_per_epoch = 0;
  std::vector<double> steady_epoch_s;   // warm-up excluded, epoch order
  bool warmup_included = false;         // a one-epoch run: its only epoch is all there is
  double epoch_s = 0;                   // median of steady_epoch_s
  double iteration_s = 0;               // epoch_s / iterations_per_epoch
  // Per iteration, mean over the workers and steady epochs.
  double forward_s = 0, backward_s = 0, update_s = 0, exchange_s = 0, exposed_comm_s = 0;
  // CPU seconds per iteration of the busiest worker and of the busiest
  // server (ps), median over the steady epochs; empty when the trainer did
  // not report CPU time (before schema version 9) or there is no server.
  std::optional<double> worker_cpu_s, server_cpu_s;
};

// A link profile as measured (the most recent calibration probe of it).
struct LinkObservation {
  double bandwidth_bits_per_s = 0;      // configured; 0 = unshaped
  double latency_s = 0;                 // configured
  double alpha_s = 0;                   // fitted latency
  double bytes_per_s = 0;               // fitted B
  std::vector<std::int64_t> probe_ids;  // the link_probes rows of that probe
};

struct ModelData {
  std::vector<RunObservation> runs;     // complete runs, by run_id
  std::vector<LinkObservation> links;
  // One LeftOutText line (store/epoch_validity.h) per complete run whose
  // steady epochs EpochFault refused and left out; a run left with none is
  // not in `runs`.
  std::vector<std::string> left_out;
};

// Complete runs of the experiments named in `experiments` (every experiment
// when empty) and every calibration probe. Throws StoreError.
ModelData LoadModelData(const Store& store, const std::vector<std::string>& experiments);

// The probe of the profile a configuration asks for, if any.
std::optional<LinkObservation> FindLink(const std::vector<LinkObservation>& links, const ModelConfig& config);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_OBSERVATIONS_H_
