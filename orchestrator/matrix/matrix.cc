#include "orchestrator/matrix/matrix.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "common/sha256.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/matrix/expand.h"
#include "orchestrator/matrix/params.h"

namespace dmlbench {
namespace {

const std::vector<std::string_view> kTopLevelKeys = {"experiment", "defaults", "matrix",    "zip",  "include",
                                                     "exclude",    "networks", "execution", "split",
                                                     "slurm"};
const std::vector<std::string_view> kExperimentKeys = {"name", "description", "tags"};
const std::vector<std::string_view> kExecutionKeys = {
    "provider", "inventory", "repetitions", "max_repetitions", "interval_within", "seed",
    "timeout_s", "attempts", "dataset_dir", "order", "order_seed", "runs_per_job", "system"};
const std::vector<std::string_view> kOrders = {"shuffled", "matrix"};
const std::vector<std::string_view> kSlurmKeys = {"partition",   "account",   "qos",    "constraint", "time_limit_min",
                                                  "allocation",  "ranks",     "launch",     "salloc_args", "srun_args",
                                                  "stage_dir"};
const std::vector<std::string_view> kSlurmAllocations = {"per-sweep", "per-run"};
const std::vector<std::string_view> kSlurmRanks = {"packed", "per-node"};
const std::vector<std::string_view> kSlurmLaunches = {"srun", "mpirun"};
constexpr int kMaxSlurmTimeLimitMin = 525600;  // a year
constexpr int kMaxRunsPerJob = 1000;
const std::vector<std::string_view> kNetworkKeys = {"bandwidth_mbit_per_s", "latency_ms"};
const std::vector<std::string_view> kSplitKeys = {"calibration"};
const std::vector<std::string_view> kParamKeys(kParamNames.begin(), kParamNames.end());
const std::vector<std::string_view> kDatasets = {"fashion-mnist", "synthetic"};

constexpr int kMaxAttempts = 100;

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string joined;
  for (std::string_view name : names) joined += (joined.empty() ? "" : ", ") + std::string(name);
  return joined;
}

std::int64_t SaturatingProduct(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<std::int64_t>::max();
  return product;
}

// A setting's text as the TOML value it spells, for ReadParam to read: the
// whole text as an integer, else a float, else a boolean (true or false,
// and for the boolean parameters on or off), else a string; for hidden an
// array of such values, the text's comma-separated parts. The node has no
// place in a file: failures name the setting instead.
std::unique_ptr<toml::node> SettingValue(std::string_view text, bool boolean) {
  const char* const end = text.data() + text.size();
  std::int64_t integer = 0;
  if (const auto [at, error] = std::from_chars(text.data(), end, integer); error == std::errc() && at == end) {
    return std::make_unique<toml::value<std::int64_t>>(integer);
  }
  double number = 0;
  if (const auto [at, error] = std::from_chars(text.data(), end, number);
      error == std::errc() && at == end && std::isfinite(number)) {
    return std::make_unique<toml::value<double>>(number);
  }
  if (text == "true" || text == "false" || (boolean && (text == "on" || text == "off"))) {
    return std::make_unique<toml::value<bool>>(text == "true" || text == "on");
  }
  return std::make_unique<toml::value<std::string>>(std::string(text));
}

std::unique_ptr<toml::node> SettingNode(Param param, std::string_view text) {
  const bool boolean = param == Param::kOverlap || param == Param::kPullsInTurn || param == Param::kEvaluate;
  if (param != Param::kHidden) return SettingValue(text, boolean);
  auto widths = std::make_unique<toml::array>();
  for (std::size_t begin = 0; !text.empty() && begin <= text.size();) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    std::unique_ptr<toml::node> width = SettingValue(text.substr(begin, comma - begin), false);
    width->visit([&](auto& value) { widths->push_back(std::move(value)); });
    begin = comma + 1;
  }
  return widths;
}

// Reads one experiment file into the experiment's header and a MatrixSpec.
// Every check knows the source region of what it checks, so each message
// starts with path:line:column.
class ExperimentReader : public TomlReader {
 public:
  ExperimentReader(std::string path, std::string text) : TomlReader(std::move(path), std::move(text)) {}

  Experiment Read() {
    const toml::table root = Parse();
    root_ = &root;
    CheckKeys(root, kTopLevelKeys, "the top level");
    Experiment experiment;
    ReadExperimentTable(experiment);
    ReadNetworks();
    ReadExecution(experiment.execution);
    ReadSlurm(experiment.execution);
    ReadDefaults();
    ReadDimensions();
    ReadIncludes();
    ReadExcludes();
    ReadSplit();
    experiment.runs = Expand(spec_, *this);
    experiment.source_path = path();
    experiment.source_sha256 = Sha256Hex(text());
    experiment.source_text = text();
    return experiment;
  }

  // Sets `param` of `params` from a command line's text of its value
  // (ParseRunSettings), read as the file reads it.
  void ApplySetting(Param param, std::string_view text, RunParams& params) const {
    Apply(spec_.profiles, params, param, ReadParam(param, *SettingNode(param, text)));
  }

 protected:
  [[noreturn]] void Throw(const std::string& message, const std::string& excerpt) const override {
    throw MatrixError(message, excerpt);
  }

 private:
  // Every key of `table` must be a run parameter; returns them in key order
  // (toml++ keeps a table's keys sorted), never in file order.
  std::vector<std::pair<Param, const toml::node*>> ParamEntries(const toml::table& table,
                                                                std::string_view where) const {
    CheckKeys(table, kParamKeys, where);
    std::vector<std::pair<Param, const toml::node*>> entries;
    for (const auto& [key, node] : table) entries.emplace_back(*FindParam(key.str()), &node);
    return entries;
  }

  // A path in the file is relative to the file's directory.
  std::string ResolvePath(const std::string& relative) const {
    std::filesystem::path file(relative);
    if (file.is_absolute()) return relative;
    return (std::filesystem::path(path()).parent_path() / file).lexically_normal().string();
  }

  NetworkProfile ReadNetworkName(const toml::node& node) const {
    const std::string profile = ReadString(node, "network");
    if (spec_.profiles.find(profile) == spec_.profiles.end()) {
      std::vector<std::string_view> defined;
      for (const auto& [defined_name, unused] : spec_.profiles) defined.push_back(defined_name);
      Fail(node, "network must name a [networks] profile (" +
                     (defined.empty() ? std::string("none defined") : JoinNames(defined)) + "), got " +
                     Quoted(profile));
    }
    if (provider_ != Provider::kCluster) {
      Fail(node, "network profiles need provider \"cluster\" (only the emulated cluster shapes links), got "
                 "provider " + Quoted(Text(provider_)));
    }
    return spec_.profiles.at(profile);
  }

  std::vector<int> ReadHidden(const toml::node& node) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) Fail(node, "hidden must be an array of layer sizes, got " + Found(node));
    if (array->empty() || array->size() > kMaxHiddenLayers) {
      Fail(node, "hidden must have between 1 and " + std::to_string(kMaxHiddenLayers) + " layers, got " +
                     std::to_string(array->size()));
    }
    std::vector<int> sizes;
    for (const toml::node& size : *array) {
      sizes.push_back(static_cast<int>(ReadInteger(size, "hidden layer sizes", 1, kMaxLayerSize)));
    }
    return sizes;
  }

  // One value of `param`, type- and range-checked.
  Value ReadParam(Param param, const toml::node& node) const {
    const std::string_view name = Name(param);
    constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max();
    switch (param) {
      case Param::kNetwork: return ReadNetworkName(node).name;
      case Param::kArchitecture: return ReadChoice(node, name, AllTexts<Architecture>());
      case Param::kServers: return ReadInteger(node, name, 1, kMaxServers);
      case Param::kWorkers: return ReadInteger(node, name, 1, kMaxWorkers);
      case Param::kBatchSize: return ReadInteger(node, name, 1, kMaxBatchSize);
      case Param::kLearningRate: return ReadNumber(node, name, 0, /*inclusive=*/false);
      case Param::kHidden: return ReadHidden(node);
      case Param::kEpochs: return ReadInteger(node, name, 1, kMaxEpochs);
      case Param::kMaxIterationsPerEpoch: return ReadInteger(node, name, 0, kUnbounded);
      case Param::kWarmupIterations: return ReadInteger(node, name, 0, kUnbounded);
      case Param::kOverlap: return ReadBoolean(node, name);
      case Param::kBucketBytes: return ReadInteger(node, name, 1, kUnbounded);
      case Param::kPartitionBytes: return ReadInteger(node, name, 0, kUnbounded);
      case Param::kPullsInTurn: return ReadBoolean(node, name);
      case Param::kEvaluate: return ReadBoolean(node, name);
      case Param::kDataset: break;
    }
    return ReadChoice(node, name, kDatasets);
  }

  // A list of values of `param` ([matrix] and [[zip]] entries): a non-empty
  // array whose values are distinct.
  std::vector<Value> ReadParamList(Param param, const toml::node& node, std::string_view where) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      Fail(node, std::string(Name(param)) + " in " + std::string(where) + " must be an array of values, got " +
                     Found(node));
    }
    if (array->empty()) {
      Fail(node, std::string(Name(param)) + " in " + std::string(where) +
                     " must list at least one value, got an empty array");
    }
    std::vector<Value> values;
    std::map<Value, toml::source_position> seen;
    for (const toml::node& element : *array) {
      Value value = ReadParam(param, element);
      auto [first, inserted] = seen.emplace(value, element.source().begin);
      if (!inserted) {
        Fail(element, std::string(Name(param)) + " values must be distinct, got " + Found(element) +
                          " again (first at line " + std::to_string(first->second.line) + ")");
      }
      values.push_back(std::move(value));
    }
    return values;
  }

  void ReadExperimentTable(Experiment& experiment) const {
    const toml::table* table = OptionalTable(*root_, "experiment");
    if (table == nullptr) Fail(root_->source(), "expected an [experiment] table with a name, got none");
    CheckKeys(*table, kExperimentKeys, "[experiment]");
    const toml::node* name = table->get("name");
    if (name == nullptr) Fail(table->source(), "[experiment] must have a name, got none");
    experiment.name = ReadString(*name, "name");
    if (!IsValidName(experiment.name)) {
      Fail(*name, "name must be 1 to " + std::to_string(kMaxNameLength) +
                      " letters, digits, '.', '_' or '-', got " + Found(*name));
    }
    if (const toml::node* description = table->get("description")) {
      experiment.description = ReadString(*description, "description");
    }
    if (const toml::node* tags = table->get("tags")) {
      const toml::array* array = tags->as_array();
      if (array == nullptr) Fail(*tags, "tags must be an array of strings, got " + Found(*tags));
      for (const toml::node& element : *array) {
        const std::string tag = ReadString(element, "tags");
        if (!IsValidName(tag)) {
          Fail(element, "a tag must be 1 to " + std::to_string(kMaxNameLength) +
                            " letters, digits, '.', '_' or '-', got " + Found(element));
        }
        if (std::find(experiment.tags.begin(), experiment.tags.end(), tag) != experiment.tags.end()) {
          Fail(element, "tags must be distinct, got " + Quoted(tag) + " twice");
        }
        experiment.tags.push_back(tag);
      }
    }
  }

  void ReadNetworks() {
    const toml::table* networks = OptionalTable(*root_, "networks");
    if (networks == nullptr) return;
    for (const auto& [key, node] : *networks) {
      const std::string name(key.str());
      if (name.empty()) Fail(key.source(), "network profile names must be non-empty, got \"\"");
      const toml::table* table = node.as_table();
      if (table == nullptr) Fail(node, "networks." + name + " must be a table, got " + Found(node));
      const std::string where = "[networks." + name + "]";
      CheckKeys(*table, kNetworkKeys, where);
      const toml::node* bandwidth = table->get("bandwidth_mbit_per_s");
      if (bandwidth == nullptr) Fail(table->source(), where + " must have bandwidth_mbit_per_s, got none");
      NetworkProfile profile;
      profile.name = name;
      profile.bandwidth_bits_per_s = ReadNumber(*bandwidth, "bandwidth_mbit_per_s", 0, false) * 1e6;
      if (const toml::node* latency = table->get("latency_ms")) {
        profile.latency_s = ReadNumber(*latency, "latency_ms", 0, true) * 1e-3;
      }
      for (const auto& [other_name, other] : spec_.profiles) {
        if (other.bandwidth_bits_per_s == profile.bandwidth_bits_per_s && other.latency_s == profile.latency_s) {
          Fail(table->source(), where + " must differ from [networks." + other_name +
                                    "], got the same bandwidth and latency");
        }
      }
      spec_.profiles.emplace(name, profile);
    }
  }

  void ReadExecution(ExecutionOptions& execution) {
    const toml::table* table = OptionalTable(*root_, "execution");
    if (table == nullptr) {
      provider_ = execution.provider;
      return;
    }
    CheckKeys(*table, kExecutionKeys, "[execution]");
    if (const toml::node* node = table->get("provider")) {
      execution.provider = *FromText<Provider>(ReadChoice(*node, "provider", AllTexts<Provider>()));
    }
    provider_ = execution.provider;
    const toml::node* inventory = table->get("inventory");
    if (inventory != nullptr) {
      if (execution.provider == Provider::kLocal) {
        Fail(*inventory, "inventory is used only by the ssh and cluster providers, got provider \"local\"");
      }
      if (execution.provider == Provider::kSlurm) {
        Fail(*inventory, "inventory is not used by provider \"slurm\" (Slurm knows its nodes; name them with "
                         "[slurm] partition or constraint), got an inventory");
      }
      const std::string file = ReadString(*inventory, "inventory");
      if (file.empty()) Fail(*inventory, "inventory must be a file name, got \"\"");
      execution.inventory = ResolvePath(file);
    } else if (execution.provider == Provider::kSsh) {
      Fail(table->source(), "provider \"ssh\" needs an inventory file, got none");
    }
    if (const toml::node* node = table->get("repetitions")) {
      spec_.repetitions = static_cast<int>(ReadInteger(*node, "repetitions", 1, kMaxRepetitions));
    }
    ReadMoreRepetitions(*table, execution);
    if (const toml::node* node = table->get("seed")) {
      // Run seeds are seed + repetition, stored as SQLite's signed 64-bit
      // integers: the last one must fit.
      const std::int64_t last_offset = std::max(spec_.repetitions, execution.max_repetitions) - 1;
      const std::int64_t largest = std::numeric_limits<std::int64_t>::max() - last_offset;
      const std::int64_t seed = ReadInteger(*node, "seed", 0, std::numeric_limits<std::int64_t>::max());
      if (seed > largest) {
        Fail(*node, "seed must be at most " + std::to_string(largest) + " with " + std::to_string(last_offset + 1) +
                        " repetitions (the last repetition runs with seed + " + std::to_string(last_offset) +
                        ", and seeds are stored as 64-bit signed integers), got " + std::to_string(seed));
      }
      spec_.base_seed = static_cast<std::uint64_t>(seed);
    }
    execution.order_seed = spec_.base_seed;
    if (const toml::node* node = table->get("order")) execution.shuffled = ReadChoice(*node, "order", kOrders) == "shuffled";
    if (const toml::node* node = table->get("order_seed")) {
      execution.order_seed =
          static_cast<std::uint64_t>(ReadInteger(*node, "order_seed", 0, std::numeric_limits<std::int64_t>::max()));
    }
    if (const toml::node* node = table->get("timeout_s")) {
      execution.timeout_s = ReadNumber(*node, "timeout_s", 0, false);
    }
    if (const toml::node* node = table->get("attempts")) {
      execution.attempts = static_cast<int>(ReadInteger(*node, "attempts", 1, kMaxAttempts));
    }
    if (const toml::node* node = table->get("runs_per_job")) {
      execution.runs_per_job = static_cast<int>(ReadInteger(*node, "runs_per_job", 1, kMaxRunsPerJob));
    }
    if (const toml::node* node = table->get("system")) {
      execution.system = ReadString(*node, "system");
      if (!IsValidSystemName(execution.system)) {
        Fail(*node, "system must be 1 to " + std::to_string(kMaxSystemNameLength) +
                        " printable characters, not starting or ending with a space (e.g. \"ec2-c5.xlarge-eu\"), "
                        "got " + Quoted(execution.system));
      }
    }
    if (const toml::node* node = table->get("dataset_dir")) {
      const std::string directory = ReadString(*node, "dataset_dir");
      if (directory.empty()) Fail(*node, "dataset_dir must be a directory name, got \"\"");
      execution.dataset_dir = ResolvePath(directory);
    }
  }

  // [slurm]: how the slurm provider asks for nodes. Every string reaches
  // Slurm as one argv word, so only what argv cannot carry is refused.
  void ReadSlurm(ExecutionOptions& execution) const {
    const toml::table* table = OptionalTable(*root_, "slurm");
    if (table == nullptr) return;
    if (execution.provider != Provider::kSlurm) {
      Fail(table->source(), "[slurm] is used only by provider \"slurm\", got provider " + Quoted(Text(execution.provider)));
    }
    CheckKeys(*table, kSlurmKeys, "[slurm]");
    SlurmOptions& slurm = execution.slurm;
    const std::pair<const char*, std::string*> names[] = {{"partition", &slurm.partition},
                                                          {"account", &slurm.account},
                                                          {"qos", &slurm.qos},
                                                          {"constraint", &slurm.constraint}};
    for (const auto& [key, value] : names) {
      if (const toml::node* node = table->get(key)) *value = ReadSlurmWord(*node, key);
    }
    if (const toml::node* node = table->get("time_limit_min")) {
      slurm.time_limit_min = static_cast<int>(ReadInteger(*node, "time_limit_min", 1, kMaxSlurmTimeLimitMin));
    }
    if (const toml::node* node = table->get("allocation")) {
      slurm.allocation_per_run = ReadChoice(*node, "allocation", kSlurmAllocations) == "per-run";
    }
    if (const toml::node* node = table->get("ranks")) {
      slurm.one_rank_per_node = ReadChoice(*node, "ranks", kSlurmRanks) == "per-node";
    }
    if (const toml::node* node = table->get("launch")) {
      slurm.launch_mpirun = ReadChoice(*node, "launch", kSlurmLaunches) == "mpirun";
    }
    if (const toml::node* node = table->get("salloc_args")) slurm.salloc_args = ReadSlurmWords(*node, "salloc_args");
    if (const toml::node* node = table->get("srun_args")) {
      slurm.srun_args = ReadSlurmWords(*node, "srun_args");
      if (slurm.launch_mpirun) {
        Fail(*node, "srun_args are not used with launch = \"mpirun\" (mpirun starts its own srun), got " +
                        std::to_string(slurm.srun_args.size()) + " of them");
      }
    }
    if (const toml::node* node = table->get("stage_dir")) {
      slurm.stage_dir = ReadSlurmWord(*node, "stage_dir");
      if (slurm.stage_dir.front() != '/') {
        Fail(*node, "stage_dir must be an absolute path on the nodes' own disk (e.g. \"/tmp\"), got " +
                        Quoted(slurm.stage_dir));
      }
    }
  }

  // A non-empty string that can be one argv word (no NUL).
  std::string ReadSlurmWord(const toml::node& node, std::string_view name) const {
    const std::string word = ReadString(node, name);
    if (word.empty()) Fail(node, std::string(name) + " must not be empty (leave it out for Slurm's default), got \"\"");
    if (word.find('\0') != std::string::npos) {
      Fail(node, std::string(name) + " must not contain a NUL character (it cannot be passed to a program), got " +
                     Quoted(word));
    }
    return word;
  }

  std::vector<std::string> ReadSlurmWords(const toml::node& node, std::string_view name) const {
    const std::vector<std::string> words = ReadStrings(node, name);
    for (std::size_t i = 0; i < words.size(); ++i) {
      const toml::node& element = *node.as_array()->get(i);
      ReadSlurmWord(element, std::string(name) + " element " + std::to_string(i + 1));
    }
    return words;
  }

  // max_repetitions and interval_within, which come together: a point whose
  // interval is wider than asked gets more repetitions, up to the most.
  void ReadMoreRepetitions(const toml::table& table, ExecutionOptions& execution) {
    const toml::node* most = table.get("max_repetitions");
    const toml::node* within = table.get("interval_within");
    if (most == nullptr && within == nullptr) return;
    if (most == nullptr || within == nullptr) {
      Fail(most != nullptr ? *most : *within,
           std::string(most != nullptr ? "max_repetitions needs interval_within" : "interval_within needs max_repetitions") +
               " beside it: repetitions are added while the 95% interval of a point's median epoch time reaches "
               "further than interval_within times the median (e.g. 0.05), up to max_repetitions runs");
    }
    execution.max_repetitions = static_cast<int>(ReadInteger(*most, "max_repetitions", 1, kMaxRepetitions));
    if (execution.max_repetitions <= spec_.repetitions) {
      Fail(*most, "max_repetitions must be more than repetitions (" + std::to_string(spec_.repetitions) +
                      "), got " + std::to_string(execution.max_repetitions));
    }
    execution.interval_within = ReadNumber(*within, "interval_within", 0, /*inclusive=*/false);
    if (execution.interval_within >= 1) {
      char got[32];
      std::snprintf(got, sizeof got, "%g", execution.interval_within);
      Fail(*within, std::string("interval_within must be a fraction of the median below 1 (e.g. 0.05 for 5%), got ") +
                        got);
    }
  }

  void ReadDefaults() {
    const toml::table* table = OptionalTable(*root_, "defaults");
    if (table == nullptr) return;
    for (const auto& [param, node] : ParamEntries(*table, "[defaults]")) {
      Apply(spec_.profiles, spec_.defaults, param, ReadParam(param, *node));
    }
  }

  // A [[zip]] group: its parameters vary together, so their lists have one length.
  Dimension ReadZip(const toml::table& zip, std::map<Param, std::string>& varied_by) const {
    if (zip.empty()) Fail(zip.source(), "[[zip]] must list at least one parameter, got an empty table");
    Dimension dimension;
    const std::string here = "[[zip]] at line " + std::to_string(zip.source().begin.line);
    std::string first_name;
    std::vector<std::vector<Value>> columns;
    for (const auto& [param, node] : ParamEntries(zip, "[[zip]]")) {
      if (auto previous = varied_by.find(param); previous != varied_by.end()) {
        Fail(*node, std::string(Name(param)) + " is already varied by " + previous->second +
                        ", expected each parameter in one place only, got it again in [[zip]]");
      }
      varied_by[param] = here;
      std::vector<Value> column = ReadParamList(param, *node, "[[zip]]");
      if (!columns.empty() && column.size() != columns.front().size()) {
        Fail(*node, std::string(Name(param)) + " must have " + std::to_string(columns.front().size()) +
                        " values like " + first_name + " in its [[zip]], got " + std::to_string(column.size()));
      }
      if (columns.empty()) first_name = Name(param);
      dimension.params.push_back(param);
      columns.push_back(std::move(column));
    }
    // Each parameter's values are distinct (ReadParamList), so the tuples are.
    for (std::size_t i = 0; i < columns.front().size(); ++i) {
      std::vector<Value> point;
      for (auto& column : columns) point.push_back(std::move(column[i]));
      dimension.points.push_back(std::move(point));
    }
    return dimension;
  }

  void ReadDimensions() {
    const toml::table* matrix = OptionalTable(*root_, "matrix");
    const std::vector<const toml::table*> zips = TableArray(*root_, "zip");
    if (matrix == nullptr && zips.empty()) {
      Fail(root_->source(), "expected a [matrix] table or a [[zip]] group, got neither");
    }
    if (matrix != nullptr && matrix->empty() && zips.empty()) {
      Fail(matrix->source(), "[matrix] must list at least one parameter, got an empty table");
    }
    std::map<Param, std::string> varied_by;  // parameter -> "[matrix]" or "[[zip]] at line N"
    if (matrix != nullptr) {
      for (const auto& [param, node] : ParamEntries(*matrix, "[matrix]")) {
        spec_.dimensions.push_back({{param}, {}});
        for (Value& value : ReadParamList(param, *node, "[matrix]")) {
          spec_.dimensions.back().points.push_back({std::move(value)});
        }
        varied_by[param] = "[matrix]";
      }
    }
    for (const toml::table* zip : zips) spec_.dimensions.push_back(ReadZip(*zip, varied_by));
    // Expansion order: by the earliest parameter of each dimension.
    std::stable_sort(spec_.dimensions.begin(), spec_.dimensions.end(), [](const Dimension& a, const Dimension& b) {
      return *std::min_element(a.params.begin(), a.params.end()) <
             *std::min_element(b.params.begin(), b.params.end());
    });
    std::int64_t runs = spec_.repetitions;
    for (const Dimension& dimension : spec_.dimensions) {
      runs = SaturatingProduct(runs, static_cast<std::int64_t>(dimension.points.size()));
    }
    if (runs > kMaxRuns) Fail(matrix != nullptr ? matrix->source() : zips.front()->source(), TooManyRuns(runs));
  }

  Assignment ReadAssignment(const toml::table& table, std::string_view where) const {
    Assignment assignment;
    for (const auto& [param, node] : ParamEntries(table, where)) {
      assignment.emplace_back(param, ReadParam(param, *node));
    }
    return assignment;
  }

  void ReadIncludes() {
    for (const toml::table* table : TableArray(*root_, "include")) {
      if (table->empty()) Fail(table->source(), "[[include]] must set at least one parameter, got an empty table");
      spec_.includes.emplace_back(ReadAssignment(*table, "[[include]]"), table);
    }
  }

  void ReadExcludes() {
    for (const toml::table* table : TableArray(*root_, "exclude")) {
      if (table->empty()) Fail(table->source(), "[[exclude]] must name at least one parameter, got an empty table");
      spec_.excludes.emplace_back(ReadAssignment(*table, "[[exclude]]"), table->source());
    }
  }

  void ReadSplit() {
    const toml::table* split = OptionalTable(*root_, "split");
    if (split == nullptr) return;
    if (const toml::node* validation = split->get("validation")) {
      Fail(*validation, "[split] takes only a calibration rule (every other run is validation), got a "
                        "validation rule");
    }
    CheckKeys(*split, kSplitKeys, "[split]");
    const toml::node* calibration = split->get("calibration");
    if (calibration == nullptr) Fail(split->source(), "[split] must have a calibration rule, got none");
    const toml::table* rule = calibration->as_table();
    if (rule == nullptr) {
      Fail(*calibration, "calibration must be a table of parameter values, got " + Found(*calibration));
    }
    if (rule->empty()) Fail(*calibration, "calibration must name at least one parameter, got an empty table");
    SplitRule parsed;
    parsed.where = calibration->source();
    for (const auto& [param, node] : ParamEntries(*rule, "split.calibration")) {
      // A value or an array of values; for hidden, whose value is itself an
      // array, an array of arrays.
      const toml::array* array = node->as_array();
      const bool is_list =
          array != nullptr && (param != Param::kHidden || (!array->empty() && array->front().is_array()));
      std::vector<Value> values;
      if (is_list) {
        values = ReadParamList(param, *node, "split.calibration");
      } else {
        values.push_back(ReadParam(param, *node));
      }
      parsed.allowed.emplace_back(param, std::move(values));
    }
    spec_.split = std::move(parsed);
  }

  const toml::table* root_ = nullptr;
  Provider provider_ = Provider::kLocal;
  MatrixSpec spec_;
};

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

}  // namespace

Experiment ParseExperiment(const std::string& text, const std::string& path) {
  return ExperimentReader(path, text).Read();
}

RunParams ParseRunSettings(const std::vector<std::pair<std::string, std::string>>& settings) {
  RunParams params;
  std::vector<std::pair<Param, std::string>> given;  // each with its setting's text
  for (const auto& [key, value] : settings) {
    const std::string setting = key + "=" + value;
    const std::optional<Param> param = FindParam(key);
    if (!param) {
      const std::string closest = ClosestName(key, kParamKeys);
      throw MatrixError(setting + ": unknown run parameter '" + key + "', " +
                        (closest.empty() ? "expected one of: " + JoinNames(kParamKeys)
                                         : "did you mean '" + closest + "'?"));
    }
    if (*param == Param::kNetwork) {
      throw MatrixError(setting + ": network names a profile of an experiment file's [networks], not one here");
    }
    ExperimentReader(setting, "").ApplySetting(*param, value, params);
    given.emplace_back(*param, setting);
  }
  for (const auto& [param, setting] : given) {
    const std::string fault = ScopeFault(params, param);
    if (!fault.empty()) throw MatrixError(setting + ": " + fault);
  }
  ResolveScopedParams(params);
  return params;
}

Experiment LoadExperiment(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw MatrixError(path + ": cannot read file: " + std::strerror(errno));
  std::string text;
  char chunk[65536];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) text.append(chunk, got);
  if (std::ferror(file.get())) throw MatrixError(path + ": cannot read file: " + std::strerror(errno));
  return ParseExperiment(text, path);
}

}  // namespace dmlbench
