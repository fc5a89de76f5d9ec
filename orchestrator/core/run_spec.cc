#include "orchestrator/core/run_spec.h"

#include <nlohmann/json.hpp>

#include "trainer/sha256.h"

namespace dmlbench {

std::string Describe(const RunParams& params) {
  std::string text(Text(params.architecture));
  if (params.architecture == Architecture::kPs) text += " k=" + std::to_string(params.servers);
  text += " w=" + std::to_string(params.workers) + " b=" + std::to_string(params.batch_size);
  if (params.overlap) text += " overlap";
  if (!params.network.name.empty()) text += " net=" + params.network.name;
  text += " rep=" + std::to_string(params.repetition);
  return text;
}

std::string CanonicalJson(const RunParams& params) {
  // nlohmann::json objects keep keys sorted; dump() without indent has no
  // whitespace; doubles print as the shortest text that reads back exactly.
  // The repetition and the profile's name are not part of the identity: the
  // seed already differs per repetition, and renaming a profile does not
  // change what is measured.
  nlohmann::json json = {
      {"architecture", Text(params.architecture)},
      {"workers", params.workers},
      {"servers", params.servers},
      {"batch_size", params.batch_size},
      {"epochs", params.epochs},
      {"hidden", params.hidden},
      {"learning_rate", params.learning_rate},
      {"overlap", params.overlap},
      {"bucket_bytes", params.bucket_bytes},
      {"max_iterations_per_epoch", params.max_iterations_per_epoch},
      {"dataset", params.dataset},
      {"seed", params.seed},
      {"network", {{"bandwidth_bits_per_s", params.network.bandwidth_bits_per_s},
                   {"latency_s", params.network.latency_s}}},
  };
  return json.dump();
}

std::string RunKey(const RunParams& params, const std::string& trainer_sha256,
                   const std::string& dataset_sha256) {
  return Sha256Hex(CanonicalJson(params) + trainer_sha256 + dataset_sha256);
}

}  // namespace dmlbench
