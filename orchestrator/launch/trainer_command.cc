#include "orchestrator/launch/trainer_command.h"

#include <charconv>
#include <iterator>

namespace dmlbench {
namespace {

// Shortest text that reads back as the same double.
std::string ExactDouble(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

// The options of the run itself: all but where its events go.
std::vector<std::string> RunOptions(const RunParams& p) {
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
  return args;
}

constexpr const char* kJobOptions[] = {"--events", "-", "--quiet"};

}  // namespace

std::vector<std::string> TrainerArgs(const RunParams& params) {
  std::vector<std::string> args = RunOptions(params);
  args.insert(args.end(), std::begin(kJobOptions), std::end(kJobOptions));
  return args;
}

std::vector<std::string> TrainerArgs(const std::vector<const RunParams*>& runs) {
  std::vector<std::string> args(std::begin(kJobOptions), std::end(kJobOptions));
  for (const RunParams* run : runs) {
    std::string words;
    for (const std::string& word : RunOptions(*run)) words += (words.empty() ? "" : " ") + word;
    args.push_back("--run=" + words);  // "=": a value that begins with "--" is not read as an option
  }
  return args;
}

}  // namespace dmlbench
