#include "orchestrator/core/run_spec.h"

#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

#include "common/sha256.h"

namespace dmlbench {
namespace {

// Shortest text that reads back as the same double ("0.05", "1e-05").
std::string ShortestDouble(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::string JoinInts(const std::vector<int>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

}  // namespace

bool IsValidName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameLength && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
         });
}

bool IsValidSystemName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxSystemNameLength && name.front() != ' ' && name.back() != ' ' &&
         std::none_of(name.begin(), name.end(), [](char c) {
           return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
         });
}

ShownParams VaryingIn(const std::vector<RunParams>& runs) {
  ShownParams varying;
  if (runs.empty()) return varying;
  const RunParams& first = runs.front();
  for (const RunParams& p : runs) {
    varying.learning_rate = varying.learning_rate || p.learning_rate != first.learning_rate;
    varying.hidden = varying.hidden || p.hidden != first.hidden;
    varying.epochs = varying.epochs || p.epochs != first.epochs;
    varying.max_iterations_per_epoch =
        varying.max_iterations_per_epoch || p.max_iterations_per_epoch != first.max_iterations_per_epoch;
    varying.warmup_iterations = varying.warmup_iterations || p.warmup_iterations != first.warmup_iterations;
    varying.bucket_bytes = varying.bucket_bytes || p.bucket_bytes != first.bucket_bytes;
    varying.partition_bytes = varying.partition_bytes || p.partition_bytes != first.partition_bytes;
    varying.pulls_in_turn = varying.pulls_in_turn || p.pulls_in_turn != first.pulls_in_turn;
    varying.dataset = varying.dataset || p.dataset != first.dataset;
  }
  return varying;
}

ShownParams VaryingIn(const std::vector<PlannedRun>& runs) {
  std::vector<RunParams> params;
  params.reserve(runs.size());
  for (const PlannedRun& run : runs) params.push_back(run.params);
  return VaryingIn(params);
}

std::string ArchitectureLabel(Architecture architecture, int servers) {
  std::string label(Text(architecture));
  if (architecture == Architecture::kPs) label += " k=" + std::to_string(servers);
  return label;
}

std::string Describe(const RunParams& params, const ShownParams& shown) {
  std::string text = ArchitectureLabel(params.architecture, params.servers);
  text += " w=" + std::to_string(params.workers) + " b=" + std::to_string(params.batch_size);
  if (shown.learning_rate) text += " lr=" + ShortestDouble(params.learning_rate);
  if (shown.hidden) text += " hidden=" + JoinInts(params.hidden);
  if (shown.epochs) text += " epochs=" + std::to_string(params.epochs);
  if (shown.max_iterations_per_epoch) text += " iters=" + std::to_string(params.max_iterations_per_epoch);
  if (shown.warmup_iterations) text += " warmup=" + std::to_string(params.warmup_iterations);
  if (shown.bucket_bytes) text += " bucket=" + std::to_string(params.bucket_bytes);
  if (shown.partition_bytes) text += " partition=" + std::to_string(params.partition_bytes);
  if (shown.dataset) text += " dataset=" + params.dataset;
  if (params.overlap) text += " overlap";
  if (params.pulls_in_turn) text += " pulls-in-turn";
  if (!params.evaluate) text += " no-eval";
  if (!params.network.name.empty()) text += " net=" + params.network.name;
  if (shown.repetition) text += " rep=" + std::to_string(params.repetition);
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
  // Named only when set, so that runs planned before it existed keep their keys.
  if (params.partition_bytes != 0) json["partition_bytes"] = params.partition_bytes;
  if (params.pulls_in_turn) json["pulls_in_turn"] = true;
  if (params.warmup_iterations != 0) json["warmup_iterations"] = params.warmup_iterations;
  if (!params.evaluate) json["evaluate"] = false;
  return json.dump();
}

std::string ConfigurationJson(const RunParams& params) {
  nlohmann::json json = nlohmann::json::parse(CanonicalJson(params));
  json.erase("seed");
  json.erase("warmup_iterations");
  json.erase("evaluate");
  return json.dump();
}

std::string RunKey(const RunParams& params, const std::string& trainer_sha256,
                   const std::string& dataset_sha256, const std::string& system) {
  return Sha256Hex(CanonicalJson(params) + trainer_sha256 + dataset_sha256 +
                   (system.empty() ? "" : "\nsystem:" + system));
}

}  // namespace dmlbench
