#include "orchestrator/launch/slurm/slurm_queries.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/core/toml_reader.h"

namespace dmlbench {
namespace {

constexpr double kQueryTimeoutS = 30;  // answered by the controller at once

// Whether `word` starts a `Key=Value` pair: letters, digits and ":/_" before
// its first '='.
bool StartsPair(std::string_view word) {
  const size_t equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(equals), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '/' || c == '_';
  });
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string Value(const std::map<std::string, std::string>& values, const std::string& key) {
  const auto found = values.find(key);
  return found == values.end() || found->second == "(null)" ? "" : found->second;
}

// 0-3,6 -> 5 CPUs.
int CountIds(std::string_view ids) {
  int count = 0;
  std::istringstream ranges{std::string(ids)};
  std::string range;
  while (std::getline(ranges, range, ',')) {
    const size_t dash = range.find('-');
    count += dash == std::string::npos ? 1 : std::atoi(range.c_str() + dash + 1) - std::atoi(range.c_str()) + 1;
  }
  return count;
}

}  // namespace

std::map<std::string, std::string> ReadKeyValues(std::string_view line) {
  std::map<std::string, std::string> values;
  std::string* last = nullptr;
  std::istringstream words{std::string(line)};
  std::string word;
  while (words >> word) {
    if (StartsPair(word)) {
      const size_t equals = word.find('=');
      last = &values[word.substr(0, equals)];
      *last = word.substr(equals + 1);
    } else if (last != nullptr) {
      *last += " " + word;
    }
  }
  return values;
}

std::vector<SlurmNode> ReadNodes(std::string_view scontrol_output) {
  std::vector<SlurmNode> nodes;
  for (const std::string& line : Lines(scontrol_output)) {
    const std::map<std::string, std::string> values = ReadKeyValues(line);
    SlurmNode node;
    node.facts.name = Value(values, "NodeName");
    if (node.facts.name.empty()) continue;
    node.facts.provider = "slurm";
    node.facts.address = Value(values, "NodeAddr");
    node.facts.cores = std::atoi(Value(values, "CPUTot").c_str());
    node.facts.memory_bytes = std::atoll(Value(values, "RealMemory").c_str()) * 1024 * 1024;
    node.facts.kernel = Value(values, "OS");
    node.facts.tags_json = "{\"features\": " + Quoted(Value(values, "AvailableFeatures")) + "}";
    node.state = Value(values, "State");
    node.reason = Value(values, "Reason");
    nodes.push_back(node);
  }
  return nodes;
}

bool NodeUnusable(std::string_view state) {
  for (std::string_view word : {"DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "MAINT", "*"}) {
    if (state.find(word) != std::string_view::npos) return true;
  }
  return false;
}

std::optional<SlurmJob> ReadJob(std::string_view scontrol_output) {
  const std::vector<std::string> lines = Lines(scontrol_output);
  if (lines.empty()) return std::nullopt;
  const std::map<std::string, std::string> values = ReadKeyValues(lines.front());
  SlurmJob job;
  job.state = Value(values, "JobState");
  if (job.state.empty()) return std::nullopt;
  job.reason = Value(values, "Reason");
  job.exit_code = Value(values, "ExitCode");
  job.node_list = Value(values, "NodeList");
  // --details: "... Nodes=n[1-2] CPU_IDs=0-1 Mem=0 GRES= ..." once per group of nodes.
  std::istringstream words(lines.front());
  std::string word, nodes;
  while (words >> word) {
    if (word.rfind("Nodes=", 0) == 0) nodes = word.substr(6);
    if (word.rfind("CPU_IDs=", 0) == 0 && !nodes.empty()) {
      job.cpus_per_nodes.emplace_back(nodes, CountIds(word.substr(8)));
      nodes.clear();
    }
  }
  return job;
}

std::optional<AccountedStep> ReadAccountedStep(std::string_view sacct_output, std::string_view step_id) {
  for (const std::string& line : Lines(sacct_output)) {
    std::istringstream fields(line);
    std::string id, state, exit_code;
    std::getline(fields, id, '|');
    std::getline(fields, state, '|');
    std::getline(fields, exit_code, '|');
    if (id != step_id || state.empty()) continue;
    return AccountedStep{state.substr(0, state.find(' ')), exit_code};
  }
  return std::nullopt;
}

std::optional<std::vector<SlurmNode>> ShowNodes(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ",") + name;
  const CommandOutput output = RunCommand({"scontrol", "--oneliner", "show", "node", list}, kQueryTimeoutS);
  if (output.exit_code != 0) return std::nullopt;
  return ReadNodes(output.out);
}

std::optional<SlurmJob> ShowJob(const std::string& job_id) {
  const CommandOutput output =
      RunCommand({"scontrol", "--details", "--oneliner", "show", "job", job_id}, kQueryTimeoutS);
  if (output.exit_code != 0) return std::nullopt;
  return ReadJob(output.out);
}

std::optional<AccountedStep> AccountStep(const std::string& step_id) {
  const CommandOutput output = RunCommand(
      {"sacct", "--noheader", "--parsable2", "--jobs=" + step_id, "--format=JobID,State,ExitCode"}, kQueryTimeoutS);
  if (output.exit_code != 0) return std::nullopt;
  return ReadAccountedStep(output.out, step_id);
}

std::vector<std::string> ExpandHostnames(const std::string& expression) {
  const CommandOutput output = RunCommand({"scontrol", "show", "hostnames", expression}, kQueryTimeoutS);
  if (output.exit_code != 0) return {};
  return Lines(output.out);
}

std::vector<std::string> JobsNamed(const std::string& name) {
  const CommandOutput output =
      RunCommand({"squeue", "--noheader", "--me", "--name=" + name, "--format=%i"}, kQueryTimeoutS);
  if (output.exit_code != 0) return {};
  return Lines(output.out);
}

}  // namespace dmlbench
