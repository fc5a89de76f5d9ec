#include "orchestrator/compare/sides.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "orchestrator/core/toml_reader.h"

namespace dmlbench {
namespace {

std::string Join(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

bool IsHexWord(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

bool IsNameOperand(const std::string& operand) { return operand.find_first_of("=<>!,|'\"") == std::string::npos; }

bool IsDatabaseOperand(const std::string& operand) {
  return IsNameOperand(operand) &&
         (std::filesystem::is_regular_file(operand) || operand.find('/') != std::string::npos ||
          (operand.size() > 3 && operand.ends_with(".db")));
}

std::string FilterOfName(const std::string& side, const std::string& name, const std::vector<RunRecord>& runs,
                         const std::string& db) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::set<std::string> experiments, tags, builds, matching_builds;
  for (const RunRecord& run : runs) {
    experiments.insert(run.experiments.begin(), run.experiments.end());
    tags.insert(run.tags.begin(), run.tags.end());
    builds.insert(run.trainer_sha256.substr(0, 12));
    if (IsHexWord(name) && run.trainer_sha256.starts_with(lower)) matching_builds.insert(run.trainer_sha256);
  }
  std::vector<std::string> kinds;
  if (experiments.contains(name)) kinds.push_back("experiment");
  if (tags.contains(name)) kinds.push_back("tag");
  if (!matching_builds.empty()) kinds.push_back("trainer");
  if (kinds.empty()) {
    throw CompareError(side + ": " + Quoted(name) + " is no experiment, tag or trainer build in " + db +
                       " (experiments: " + Join(experiments) + "; tags: " + Join(tags) + "; trainer builds: " +
                       Join(builds) + ")");
  }
  if (kinds.size() > 1) {
    std::string choices;
    for (size_t i = 0; i < kinds.size(); ++i) {
      choices += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i] + "=" + name;
    }
    throw CompareError(side + ": " + Quoted(name) + " names more than one thing in " + db + "; write " + choices);
  }
  if (kinds.front() == "trainer" && matching_builds.size() > 1) {
    std::set<std::string> shown;
    for (const std::string& sha : matching_builds) shown.insert(sha.substr(0, 12));
    throw CompareError(side + ": trainer build prefix " + name + " matches " +
                       std::to_string(matching_builds.size()) + " builds in " + db + " (" + Join(shown) +
                       "); give more digits");
  }
  return kinds.front() + "=" + (kinds.front() == "trainer" ? lower : name);
}

std::vector<RunSample> CompleteSamples(const std::vector<RunRecord>& runs, const std::vector<SteadyEpoch>& epochs) {
  std::vector<RunSample> samples;
  std::map<std::int64_t, std::size_t> by_id;
  for (const RunRecord& run : runs) {
    if (run.status != RunState::kComplete) continue;
    by_id[run.run_id] = samples.size();
    samples.push_back({run.params, {}, false});
  }
  for (const SteadyEpoch& epoch : epochs) {
    const auto it = by_id.find(epoch.run_id);
    if (it == by_id.end()) continue;
    RunSample& sample = samples[it->second];
    sample.steady_epoch_s.push_back(epoch.wall_s);
    sample.warmup_included = sample.warmup_included || epoch.warmup_included;
  }
  return samples;
}

}  // namespace dmlbench
