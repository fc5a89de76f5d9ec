#include "orchestrator/launch/trainer_command.h"

#include <charconv>

namespace dmlbench {
namespace {

// Shortest text that reads back as the same double.
std::string ExactDouble(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

}  // namespace

std::vector<std::string> TrainerArgs(const RunParams& p) {
  std::string hidden;
  for (size_t i = 0; i < p.hidden.size(); ++i) hidden += (i ? "," : "") + std::to_string(p.hidden[i]);
  std::vector<std::string> args = {
      "--architecture", std::string(Text(p.architecture)),
      "--servers", std::to_string(p.architecture == Architecture::kPs ? p.servers : 0),
      "--epochs", std::to_string(p.epochs),
      "--batch-size", std::to_string(p.batch_size),
      "--hidden", hidden,
      "--learning-rate", ExactDouble(p.learning_rate),
      "--seed", std::to_string(p.seed),
      "--max-iterations-per-epoch", std::to_string(p.max_iterations_per_epoch),
      "--bucket-bytes", std::to_string(p.bucket_bytes)};
  if (p.overlap) args.push_back("--overlap");
  if (p.partition_bytes != 0) {
    args.push_back("--partition-bytes");
    args.push_back(std::to_string(p.partition_bytes));
  }
  if (p.pulls_in_turn) args.push_back("--pulls-in-turn");
  if (p.warmup_iterations != 0) {
    args.push_back("--warmup-iterations");
    args.push_back(std::to_string(p.warmup_iterations));
  }
  if (!p.evaluate) args.push_back("--no-evaluate");
  if (p.dataset == "synthetic") {
    args.push_back("--synthetic");
    args.push_back(std::to_string(kSyntheticTrainSamples));
  }
  args.insert(args.end(), {"--events", "-", "--quiet"});
  return args;
}

}  // namespace dmlbench
