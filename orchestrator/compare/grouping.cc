#include "orchestrator/compare/grouping.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>

namespace dmlbench {
namespace {

// The value of the `by` key as a filter writes it: "50", "ring", "'128,32'".
std::string FilterValue(const RunParams& params, const std::string& by) {
  if (by == "network") return params.network.name.empty() ? "''" : params.network.name;
  const nlohmann::json json = nlohmann::json::parse(ConfigurationJson(params));
  if (!json.contains(by)) return by == "pulls_in_turn" ? "false" : "0";
  const nlohmann::json& value = json[by];
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) return value.dump();
  std::string list;
  for (const nlohmann::json& element : value) list += (list.empty() ? "" : ",") + element.dump();
  return "'" + list + "'";
}

}  // namespace

std::vector<std::string> ByKeysOf(const std::string& by) {
  std::vector<std::string> keys;
  for (size_t begin = 0; begin < by.size();) {
    const size_t comma = std::min(by.find(',', begin), by.size());
    if (comma > begin) keys.push_back(by.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return keys;
}

std::string PairingKey(const RunParams& params, const std::string& by) {
  if (by.empty()) return ConfigurationJson(params);
  nlohmann::json json = nlohmann::json::parse(ConfigurationJson(params));
  for (const std::string& key : ByKeysOf(by)) json.erase(key);
  return json.dump();
}

std::map<std::string, ConfigurationGroup> GroupRuns(const std::vector<RunSample>& runs, const std::string& by,
                                                    const std::string& side) {
  std::map<std::string, ConfigurationGroup> groups;
  for (const RunSample& run : runs) {
    if (run.steady_epoch_s.empty()) continue;
    auto [it, added] = groups.try_emplace(PairingKey(run.params, by));
    ConfigurationGroup& group = it->second;
    if (added) {
      group.params = run.params;
      group.configuration = ConfigurationJson(run.params);
    } else if (group.configuration != ConfigurationJson(run.params)) {
      const std::vector<std::string> labels = Labels(std::vector<RunParams>{group.params, run.params});
      std::string example;
      for (const std::string& key : ByKeysOf(by)) {
        example += (example.empty() ? "" : ",") + key + "=" + FilterValue(group.params, key);
      }
      throw CompareError("--by " + by + ": " + side + " has two values of " + by + " for one configuration, " +
                         labels[0] + " and " + labels[1] + "; choose one on that side, e.g. " + example);
    }
    ++group.runs;
    group.sample.insert(group.sample.end(), run.steady_epoch_s.begin(), run.steady_epoch_s.end());
    group.run_medians.push_back(Median(run.steady_epoch_s));
    group.warmup_included = group.warmup_included || run.warmup_included;
  }
  return groups;
}

bool ScansBefore(const RunParams& x, const std::string& x_key, const RunParams& y, const std::string& y_key) {
  return std::make_tuple(Text(x.architecture), x.servers, x.workers, x.batch_size, std::cref(x_key)) <
         std::make_tuple(Text(y.architecture), y.servers, y.workers, y.batch_size, std::cref(y_key));
}

}  // namespace dmlbench
