#include "orchestrator/matrix/matrix.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "orchestrator/core/sha256.h"

namespace dmlbench {
namespace {

// The run parameters an experiment file may set, in expansion order: the
// first varies slowest (schemas/matrix.md, "Expansion order"). Network comes
// first so that runs sharing a link shaping are consecutive.
enum class Param {
  kNetwork,
  kArchitecture,
  kServers,
  kWorkers,
  kBatchSize,
  kLearningRate,
  kHidden,
  kEpochs,
  kMaxIterationsPerEpoch,
  kOverlap,
  kBucketBytes,
  kDataset,
};
constexpr std::array<std::string_view, 12> kParamNames = {
    "network", "architecture", "servers", "workers", "batch_size", "learning_rate",
    "hidden", "epochs", "max_iterations_per_epoch", "overlap", "bucket_bytes", "dataset"};

constexpr std::array<std::string_view, 2> kDatasets = {"fashion-mnist", "synthetic"};

constexpr std::array<std::string_view, 9> kTopLevelKeys = {
    "experiment", "defaults", "matrix", "zip", "include",
    "exclude", "networks", "execution", "split"};
constexpr std::array<std::string_view, 2> kExperimentKeys = {"name", "description"};
constexpr std::array<std::string_view, 7> kExecutionKeys = {
    "provider", "inventory", "repetitions", "seed", "timeout_s", "attempts", "dataset_dir"};
constexpr std::array<std::string_view, 2> kNetworkKeys = {"bandwidth_mbit_per_s", "latency_ms"};
constexpr std::array<std::string_view, 1> kSplitKeys = {"calibration"};

constexpr int kMaxWorkers = 64;
constexpr int kMaxServers = 64;
constexpr int kMaxBatchSize = 65536;
constexpr int kMaxEpochs = 10000;
constexpr int kMaxHiddenLayers = 16;
constexpr int kMaxLayerSize = 65536;
constexpr int kMaxRepetitions = 1000;
constexpr int kMaxAttempts = 100;
constexpr std::size_t kMaxNameLength = 64;
// Far beyond any sweep that can finish (100,000 runs of one minute each take
// ten weeks); the cap keeps a slip such as one list too many from exhausting
// memory.
constexpr std::int64_t kMaxRuns = 100000;

// One parameter value as read from the file. Integers stay 64-bit until they
// are stored into RunParams (after the range check).
using Value = std::variant<std::int64_t, double, bool, std::string, std::vector<int>>;

// The parameter values of one point of a dimension, or of an include,
// exclude or split entry.
using Assignment = std::vector<std::pair<Param, Value>>;

// One axis of the cartesian product: a [matrix] list (one parameter) or a
// [[zip]] group (several parameters varying together).
struct Dimension {
  std::vector<Param> params;
  std::vector<std::vector<Value>> points;  // points[i][j]: value of params[j]
};

struct SplitRule {
  std::vector<std::pair<Param, std::vector<Value>>> allowed;
  toml::source_region where;
};

std::string_view Name(Param param) { return kParamNames[static_cast<std::size_t>(param)]; }

std::optional<Param> FindParam(std::string_view name) {
  for (std::size_t i = 0; i < kParamNames.size(); ++i) {
    if (kParamNames[i] == name) return static_cast<Param>(i);
  }
  return std::nullopt;
}

template <typename Names>
bool Contains(const Names& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known name a mistyped `key` most likely meant, or "" if none is close.
template <typename Names>
std::string ClosestName(std::string_view key, const Names& known) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(key, candidate);
    bool prefix = key.size() >= 3 && (candidate.starts_with(key) || key.starts_with(candidate));
    if (distance <= std::max<std::size_t>(2, key.size() / 3) || prefix) {
      if (prefix) distance = std::min(distance, std::size_t{1});
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
  }
  return best;
}

template <typename Names>
std::string JoinNames(const Names& names) {
  std::string joined;
  for (std::string_view name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

template <typename Names>
std::string QuotedChoices(const Names& names) {
  std::string joined;
  for (std::string_view name : names) {
    if (!joined.empty()) joined += ", ";
    joined += '"' + std::string(name) + '"';
  }
  return joined;
}

// Double-quoted with JSON escapes, so that control characters stay visible.
std::string Quoted(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "integer 4", "string \"4\"", "array [ 1, 2 ]": what was found, for messages.
std::string Found(const toml::node& node) {
  std::string_view type;
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::string: type = "string"; break;
    case toml::node_type::array: type = "array"; break;
    case toml::node_type::integer: type = "integer"; break;
    case toml::node_type::floating_point: type = "float"; break;
    case toml::node_type::boolean: type = "boolean"; break;
    case toml::node_type::date: type = "date"; break;
    case toml::node_type::time: type = "time"; break;
    case toml::node_type::date_time: type = "date-time"; break;
    case toml::node_type::none: type = "nothing"; break;
  }
  std::string repr;
  if (const auto* string = node.as_string()) {
    repr = Quoted(string->get());
  } else {
    std::ostringstream text;
    node.visit([&](const auto& n) { text << n; });
    repr = text.str();
  }
  // Cut long values, never inside a UTF-8 sequence.
  constexpr std::size_t kMaxRepr = 40;
  if (repr.size() > kMaxRepr) {
    std::size_t cut = kMaxRepr - 3;
    while (cut > 0 && (static_cast<unsigned char>(repr[cut]) & 0xC0) == 0x80) --cut;
    repr = repr.substr(0, cut) + "...";
  }
  return std::string(type) + " " + repr;
}

std::string FormatDouble(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::int64_t SaturatingProduct(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<std::int64_t>::max();
  return product;
}

std::string TooManyRuns(std::int64_t runs) {
  return "the matrix must expand to at most " + std::to_string(kMaxRuns) +
         " runs (points x repetitions), got " +
         (runs == std::numeric_limits<std::int64_t>::max() ? "more than " : "") +
         std::to_string(runs);
}

// Orders points by the parameters that identify a run (CanonicalJson's, but
// the seed, which is the same for all points before repetitions).
struct SamePoint {
  bool operator()(const RunParams& a, const RunParams& b) const {
    auto identity = [](const RunParams& p) {
      return std::tie(p.architecture, p.workers, p.servers, p.batch_size, p.epochs, p.hidden,
                      p.learning_rate, p.overlap, p.bucket_bytes, p.max_iterations_per_epoch,
                      p.dataset, p.network.bandwidth_bits_per_s, p.network.latency_s);
    };
    return identity(a) < identity(b);
  }
};

// Reads one experiment file. Every check that can fail knows the source
// region of what it checks, so each message starts with path:line:column.
class ExperimentReader {
 public:
  ExperimentReader(std::string path, const toml::table& root) : path_(std::move(path)), root_(root) {}

  Experiment Read(std::string text) {
    CheckKeys(root_, kTopLevelKeys, "the top level");
    Experiment experiment;
    ReadExperimentTable(experiment);
    ReadNetworks();
    ReadExecution(experiment.execution);
    ReadDefaults();
    ReadDimensions();
    ReadIncludes();
    ReadExcludes();
    ReadSplit();
    Expand(experiment);
    experiment.source_path = path_;
    experiment.source_sha256 = Sha256Hex(text);
    experiment.source_text = std::move(text);
    return experiment;
  }

 private:
  [[noreturn]] void Fail(const toml::source_region& where, const std::string& message) const {
    throw MatrixError(path_ + ":" + std::to_string(where.begin.line) + ":" +
                      std::to_string(where.begin.column) + ": " + message);
  }
  [[noreturn]] void Fail(const toml::node& node, const std::string& message) const {
    Fail(node.source(), message);
  }

  template <typename Names>
  void CheckKeys(const toml::table& table, const Names& known, std::string_view where) const {
    for (const auto& [key, node] : table) {
      if (Contains(known, key.str())) continue;
      std::string message = "unknown key '" + std::string(key.str()) + "' in " + std::string(where);
      std::string closest = ClosestName(key.str(), known);
      message += closest.empty() ? ", expected one of: " + JoinNames(known)
                                 : ", did you mean '" + closest + "'?";
      Fail(key.source(), message);
    }
  }

  // Every key of `table` must be a run parameter; returns them in key order
  // (toml++ keeps a table's keys sorted), never in file order.
  std::vector<std::pair<Param, const toml::node*>> ParamEntries(const toml::table& table,
                                                                std::string_view where) const {
    CheckKeys(table, kParamNames, where);
    std::vector<std::pair<Param, const toml::node*>> entries;
    for (const auto& [key, node] : table) entries.emplace_back(*FindParam(key.str()), &node);
    return entries;
  }

  const toml::table* OptionalTable(const toml::table& parent, std::string_view key) const {
    const toml::node* node = parent.get(key);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) Fail(*node, std::string(key) + " must be a table, got " + Found(*node));
    return node->as_table();
  }

  // [[include]], [[exclude]], [[zip]]: an array of tables (possibly absent).
  std::vector<const toml::table*> TableArray(std::string_view key) const {
    std::vector<const toml::table*> tables;
    const toml::node* node = root_.get(key);
    if (node == nullptr) return tables;
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      Fail(*node, std::string(key) + " must be an array of tables ([[" + std::string(key) +
                      "]]), got " + Found(*node));
    }
    for (const toml::node& element : *array) {
      if (!element.is_table()) {
        Fail(element, std::string(key) + " entries must be tables, got " + Found(element));
      }
      tables.push_back(element.as_table());
    }
    return tables;
  }

  std::int64_t ReadInteger(const toml::node& node, std::string_view name, std::int64_t min,
                           std::int64_t max) const {
    const auto* integer = node.as_integer();
    if (integer == nullptr) {
      Fail(node, std::string(name) + " must be an integer, got " + Found(node));
    }
    std::int64_t value = integer->get();
    if (value < min || value > max) {
      std::string range = max == std::numeric_limits<std::int64_t>::max()
                              ? "at least " + std::to_string(min)
                              : "between " + std::to_string(min) + " and " + std::to_string(max);
      Fail(node, std::string(name) + " must be " + range + ", got " + std::to_string(value));
    }
    return value;
  }

  // A number (integer or float) that is finite and above `min` (or at least
  // `min` when `inclusive`).
  double ReadNumber(const toml::node& node, std::string_view name, double min,
                    bool inclusive) const {
    double value = 0;
    if (const auto* integer = node.as_integer()) {
      value = static_cast<double>(integer->get());
    } else if (const auto* floating = node.as_floating_point()) {
      value = floating->get();
    } else {
      Fail(node, std::string(name) + " must be a number, got " + Found(node));
    }
    if (!std::isfinite(value) || value < min || (!inclusive && value == min)) {
      Fail(node, std::string(name) + " must be a finite number " +
                     (inclusive ? "of at least " : "greater than ") + FormatDouble(min) +
                     ", got " + FormatDouble(value));
    }
    return value;
  }

  std::string ReadString(const toml::node& node, std::string_view name) const {
    const auto* string = node.as_string();
    if (string == nullptr) Fail(node, std::string(name) + " must be a string, got " + Found(node));
    return string->get();
  }

  template <typename Names>
  std::string ReadChoice(const toml::node& node, std::string_view name, const Names& choices) const {
    std::string value = ReadString(node, name);
    if (!Contains(choices, value)) {
      Fail(node, std::string(name) + " must be one of " + QuotedChoices(choices) + ", got " +
                     Quoted(value));
    }
    return value;
  }

  // A path in the file is relative to the file's directory.
  std::string ResolvePath(const std::string& relative) const {
    std::filesystem::path path(relative);
    if (path.is_absolute()) return relative;
    return (std::filesystem::path(path_).parent_path() / path).lexically_normal().string();
  }

  // One value of `param`, type- and range-checked.
  Value ReadParam(Param param, const toml::node& node) const {
    std::string_view name = Name(param);
    switch (param) {
      case Param::kNetwork: {
        std::string profile = ReadString(node, name);
        if (profiles_.find(profile) == profiles_.end()) {
          std::vector<std::string_view> defined;
          for (const auto& [defined_name, unused] : profiles_) defined.push_back(defined_name);
          Fail(node, "network must name a [networks] profile (" +
                         (defined.empty() ? std::string("none defined") : JoinNames(defined)) +
                         "), got " + Quoted(profile));
        }
        if (provider_ != Provider::kCluster) {
          Fail(node, "network profiles need provider \"cluster\" (only the emulated cluster "
                     "shapes links), got provider " + Quoted(Text(provider_)));
        }
        return profile;
      }
      case Param::kArchitecture:
        return ReadChoice(node, name, AllTexts<Architecture>());
      case Param::kServers:
        return ReadInteger(node, name, 1, kMaxServers);
      case Param::kWorkers:
        return ReadInteger(node, name, 1, kMaxWorkers);
      case Param::kBatchSize:
        return ReadInteger(node, name, 1, kMaxBatchSize);
      case Param::kLearningRate:
        return ReadNumber(node, name, 0, /*inclusive=*/false);
      case Param::kHidden: {
        const toml::array* array = node.as_array();
        if (array == nullptr) {
          Fail(node, "hidden must be an array of layer sizes, got " + Found(node));
        }
        if (array->empty() || array->size() > kMaxHiddenLayers) {
          Fail(node, "hidden must have between 1 and " + std::to_string(kMaxHiddenLayers) +
                         " layers, got " + std::to_string(array->size()));
        }
        std::vector<int> sizes;
        for (const toml::node& size : *array) {
          sizes.push_back(static_cast<int>(ReadInteger(size, "hidden layer sizes", 1, kMaxLayerSize)));
        }
        return sizes;
      }
      case Param::kEpochs:
        return ReadInteger(node, name, 1, kMaxEpochs);
      case Param::kMaxIterationsPerEpoch:
        return ReadInteger(node, name, 0, std::numeric_limits<std::int64_t>::max());
      case Param::kOverlap: {
        const auto* boolean = node.as_boolean();
        if (boolean == nullptr) Fail(node, "overlap must be a boolean, got " + Found(node));
        return boolean->get();
      }
      case Param::kBucketBytes:
        return ReadInteger(node, name, 1, std::numeric_limits<std::int64_t>::max());
      case Param::kDataset:
        break;
    }
    return ReadChoice(node, name, kDatasets);
  }

  // A list of values of `param` ([matrix] and [[zip]] entries): a non-empty
  // array whose values are distinct.
  std::vector<Value> ReadParamList(Param param, const toml::node& node,
                                   std::string_view where) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      Fail(node, std::string(Name(param)) + " in " + std::string(where) +
                     " must be an array of values, got " + Found(node));
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
    const toml::table* table = OptionalTable(root_, "experiment");
    if (table == nullptr) {
      Fail(root_.source(), "expected an [experiment] table with a name, got none");
    }
    CheckKeys(*table, kExperimentKeys, "[experiment]");
    const toml::node* name = table->get("name");
    if (name == nullptr) Fail(table->source(), "[experiment] must have a name, got none");
    experiment.name = ReadString(*name, "name");
    bool valid = !experiment.name.empty() && experiment.name.size() <= kMaxNameLength &&
                 std::all_of(experiment.name.begin(), experiment.name.end(), [](char c) {
                   return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                 });
    if (!valid) {
      Fail(*name, "name must be 1 to " + std::to_string(kMaxNameLength) +
                      " letters, digits, '.', '_' or '-', got " + Found(*name));
    }
    if (const toml::node* description = table->get("description")) {
      experiment.description = ReadString(*description, "description");
    }
  }

  void ReadNetworks() {
    const toml::table* networks = OptionalTable(root_, "networks");
    if (networks == nullptr) return;
    for (const auto& [key, node] : *networks) {
      std::string name(key.str());
      if (name.empty()) Fail(key.source(), "network profile names must be non-empty, got \"\"");
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        Fail(node, "networks." + name + " must be a table, got " + Found(node));
      }
      std::string where = "[networks." + name + "]";
      CheckKeys(*table, kNetworkKeys, where);
      const toml::node* bandwidth = table->get("bandwidth_mbit_per_s");
      if (bandwidth == nullptr) {
        Fail(table->source(), where + " must have bandwidth_mbit_per_s, got none");
      }
      NetworkProfile profile;
      profile.name = name;
      profile.bandwidth_bits_per_s = ReadNumber(*bandwidth, "bandwidth_mbit_per_s", 0, false) * 1e6;
      if (const toml::node* latency = table->get("latency_ms")) {
        profile.latency_s = ReadNumber(*latency, "latency_ms", 0, true) * 1e-3;
      }
      for (const auto& [other_name, other] : profiles_) {
        if (other.bandwidth_bits_per_s == profile.bandwidth_bits_per_s &&
            other.latency_s == profile.latency_s) {
          Fail(table->source(), where + " must differ from [networks." + other_name +
                                    "], got the same bandwidth and latency");
        }
      }
      profiles_.emplace(name, profile);
    }
  }

  void ReadExecution(ExecutionOptions& execution) {
    const toml::table* table = OptionalTable(root_, "execution");
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
        Fail(*inventory, "inventory is used only by the ssh and cluster providers, got provider "
                         "\"local\"");
      }
      std::string file = ReadString(*inventory, "inventory");
      if (file.empty()) Fail(*inventory, "inventory must be a file name, got \"\"");
      execution.inventory = ResolvePath(file);
    } else if (execution.provider == Provider::kSsh) {
      Fail(table->source(), "provider \"ssh\" needs an inventory file, got none");
    }
    if (const toml::node* node = table->get("repetitions")) {
      repetitions_ = static_cast<int>(ReadInteger(*node, "repetitions", 1, kMaxRepetitions));
    }
    if (const toml::node* node = table->get("seed")) {
      base_seed_ = static_cast<std::uint64_t>(
          ReadInteger(*node, "seed", 0, std::numeric_limits<std::int64_t>::max()));
    }
    if (const toml::node* node = table->get("timeout_s")) {
      execution.timeout_s = ReadNumber(*node, "timeout_s", 0, false);
    }
    if (const toml::node* node = table->get("attempts")) {
      execution.attempts = static_cast<int>(ReadInteger(*node, "attempts", 1, kMaxAttempts));
    }
    if (const toml::node* node = table->get("dataset_dir")) {
      std::string directory = ReadString(*node, "dataset_dir");
      if (directory.empty()) Fail(*node, "dataset_dir must be a directory name, got \"\"");
      execution.dataset_dir = ResolvePath(directory);
    }
  }

  void ReadDefaults() {
    const toml::table* table = OptionalTable(root_, "defaults");
    if (table == nullptr) return;
    for (const auto& [param, node] : ParamEntries(*table, "[defaults]")) {
      Apply(defaults_, param, ReadParam(param, *node));
    }
  }

  void ReadDimensions() {
    const toml::table* matrix = OptionalTable(root_, "matrix");
    std::vector<const toml::table*> zips = TableArray("zip");
    if (matrix == nullptr && zips.empty()) {
      Fail(root_.source(), "expected a [matrix] table or a [[zip]] group, got neither");
    }
    if (matrix != nullptr && matrix->empty() && zips.empty()) {
      Fail(matrix->source(), "[matrix] must list at least one parameter, got an empty table");
    }
    std::map<Param, std::string> varied_by;  // parameter -> "[matrix]" or "[[zip]] at line N"
    if (matrix != nullptr) {
      for (const auto& [param, node] : ParamEntries(*matrix, "[matrix]")) {
        dimensions_.push_back({{param}, {}});
        for (Value& value : ReadParamList(param, *node, "[matrix]")) {
          dimensions_.back().points.push_back({std::move(value)});
        }
        varied_by[param] = "[matrix]";
      }
    }
    for (const toml::table* zip : zips) {
      if (zip->empty()) {
        Fail(zip->source(), "[[zip]] must list at least one parameter, got an empty table");
      }
      Dimension dimension;
      std::string here = "[[zip]] at line " + std::to_string(zip->source().begin.line);
      std::string first_name;
      std::vector<std::vector<Value>> columns;
      for (const auto& [param, node] : ParamEntries(*zip, "[[zip]]")) {
        if (auto previous = varied_by.find(param); previous != varied_by.end()) {
          Fail(*node, std::string(Name(param)) + " is already varied by " + previous->second +
                          ", expected each parameter in one place only, got it again in [[zip]]");
        }
        varied_by[param] = here;
        std::vector<Value> column = ReadParamList(param, *node, "[[zip]]");
        if (!columns.empty() && column.size() != columns.front().size()) {
          Fail(*node, std::string(Name(param)) + " must have " +
                          std::to_string(columns.front().size()) + " values like " + first_name +
                          " in its [[zip]], got " + std::to_string(column.size()));
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
      dimensions_.push_back(std::move(dimension));
    }
    // Expansion order: by the earliest parameter of each dimension.
    std::stable_sort(dimensions_.begin(), dimensions_.end(),
                     [](const Dimension& a, const Dimension& b) {
                       return *std::min_element(a.params.begin(), a.params.end()) <
                              *std::min_element(b.params.begin(), b.params.end());
                     });
    std::int64_t runs = repetitions_;
    for (const Dimension& dimension : dimensions_) {
      runs = SaturatingProduct(runs, static_cast<std::int64_t>(dimension.points.size()));
    }
    if (runs > kMaxRuns) {
      Fail(matrix != nullptr ? matrix->source() : zips.front()->source(), TooManyRuns(runs));
    }
  }

  Assignment ReadAssignment(const toml::table& table, std::string_view where) const {
    Assignment assignment;
    for (const auto& [param, node] : ParamEntries(table, where)) {
      assignment.emplace_back(param, ReadParam(param, *node));
    }
    return assignment;
  }

  void ReadIncludes() {
    for (const toml::table* table : TableArray("include")) {
      if (table->empty()) {
        Fail(table->source(), "[[include]] must set at least one parameter, got an empty table");
      }
      includes_.emplace_back(ReadAssignment(*table, "[[include]]"), table);
    }
  }

  void ReadExcludes() {
    for (const toml::table* table : TableArray("exclude")) {
      if (table->empty()) {
        Fail(table->source(), "[[exclude]] must name at least one parameter, got an empty table");
      }
      excludes_.push_back(ReadAssignment(*table, "[[exclude]]"));
      exclude_regions_.push_back(table->source());
    }
  }

  void ReadSplit() {
    const toml::table* split = OptionalTable(root_, "split");
    if (split == nullptr) return;
    if (const toml::node* validation = split->get("validation")) {
      Fail(*validation, "[split] takes only a calibration rule (every other run is "
                        "validation), got a validation rule");
    }
    CheckKeys(*split, kSplitKeys, "[split]");
    const toml::node* calibration = split->get("calibration");
    if (calibration == nullptr) {
      Fail(split->source(), "[split] must have a calibration rule, got none");
    }
    const toml::table* rule = calibration->as_table();
    if (rule == nullptr) {
      Fail(*calibration, "calibration must be a table of parameter values, got " +
                             Found(*calibration));
    }
    if (rule->empty()) {
      Fail(*calibration, "calibration must name at least one parameter, got an empty table");
    }
    SplitRule parsed;
    parsed.where = calibration->source();
    for (const auto& [param, node] : ParamEntries(*rule, "split.calibration")) {
      // A value or an array of values; for hidden, whose value is itself an
      // array, an array of arrays.
      const toml::array* array = node->as_array();
      bool is_list = array != nullptr &&
                     (param != Param::kHidden || (!array->empty() && array->front().is_array()));
      std::vector<Value> values;
      if (is_list) {
        values = ReadParamList(param, *node, "split.calibration");
      } else {
        values.push_back(ReadParam(param, *node));
      }
      parsed.allowed.emplace_back(param, std::move(values));
    }
    split_ = std::move(parsed);
  }

  void Apply(RunParams& params, Param param, const Value& value) const {
    switch (param) {
      case Param::kNetwork: params.network = profiles_.at(std::get<std::string>(value)); break;
      case Param::kArchitecture: params.architecture = *FromText<Architecture>(std::get<std::string>(value)); break;
      case Param::kServers: params.servers = static_cast<int>(std::get<std::int64_t>(value)); break;
      case Param::kWorkers: params.workers = static_cast<int>(std::get<std::int64_t>(value)); break;
      case Param::kBatchSize:
        params.batch_size = static_cast<int>(std::get<std::int64_t>(value));
        break;
      case Param::kLearningRate: params.learning_rate = std::get<double>(value); break;
      case Param::kHidden: params.hidden = std::get<std::vector<int>>(value); break;
      case Param::kEpochs: params.epochs = static_cast<int>(std::get<std::int64_t>(value)); break;
      case Param::kMaxIterationsPerEpoch:
        params.max_iterations_per_epoch = std::get<std::int64_t>(value);
        break;
      case Param::kOverlap: params.overlap = std::get<bool>(value); break;
      case Param::kBucketBytes: params.bucket_bytes = std::get<std::int64_t>(value); break;
      case Param::kDataset: params.dataset = std::get<std::string>(value); break;
    }
  }

  static Value Get(const RunParams& params, Param param) {
    switch (param) {
      case Param::kNetwork: return params.network.name;
      case Param::kArchitecture: return std::string(Text(params.architecture));
      case Param::kServers: return std::int64_t{params.servers};
      case Param::kWorkers: return std::int64_t{params.workers};
      case Param::kBatchSize: return std::int64_t{params.batch_size};
      case Param::kLearningRate: return params.learning_rate;
      case Param::kHidden: return params.hidden;
      case Param::kEpochs: return std::int64_t{params.epochs};
      case Param::kMaxIterationsPerEpoch: return params.max_iterations_per_epoch;
      case Param::kOverlap: return params.overlap;
      case Param::kBucketBytes: return params.bucket_bytes;
      case Param::kDataset: break;
    }
    return params.dataset;
  }

  static bool Matches(const RunParams& params, const Assignment& assignment) {
    return std::all_of(assignment.begin(), assignment.end(), [&](const auto& entry) {
      return Get(params, entry.first) == entry.second;
    });
  }

  // Servers belong to ps alone: other architectures get 0, ps without a
  // servers value gets 1.
  static void ResolveServers(RunParams& params) {
    if (params.architecture != Architecture::kPs) {
      params.servers = 0;
    } else if (params.servers == 0) {
      params.servers = 1;
    }
  }

  void Expand(Experiment& experiment) const {
    std::vector<RunParams> points;
    std::set<RunParams, SamePoint> seen;
    std::vector<std::size_t> index(dimensions_.size(), 0);
    for (bool done = false; !done;) {
      RunParams params = defaults_;
      for (std::size_t d = 0; d < dimensions_.size(); ++d) {
        const Dimension& dimension = dimensions_[d];
        for (std::size_t j = 0; j < dimension.params.size(); ++j) {
          Apply(params, dimension.params[j], dimension.points[index[d]][j]);
        }
      }
      ResolveServers(params);
      bool excluded = std::any_of(excludes_.begin(), excludes_.end(),
                                  [&](const Assignment& e) { return Matches(params, e); });
      // Points that differ only in values a parameter does not use (servers
      // of a non-ps architecture) are one point.
      if (!excluded && seen.insert(params).second) points.push_back(params);
      // Advance the odometer: the last dimension varies fastest.
      done = true;
      for (std::size_t d = dimensions_.size(); d-- > 0;) {
        if (++index[d] < dimensions_[d].points.size()) {
          done = false;
          break;
        }
        index[d] = 0;
      }
    }
    if (points.empty() && includes_.empty()) {
      Fail(exclude_regions_.front(),
           "expected at least one run, got none: [[exclude]] removes every point of the matrix");
    }
    for (const auto& [assignment, table] : includes_) {
      RunParams params = defaults_;
      for (const auto& [param, value] : assignment) Apply(params, param, value);
      for (const auto& [param, value] : assignment) {
        if (param == Param::kServers && params.architecture != Architecture::kPs) {
          Fail(*table->get("servers"), "servers applies only to architecture \"ps\", got "
                                       "architecture " + Quoted(Text(params.architecture)));
        }
      }
      ResolveServers(params);
      if (!seen.insert(params).second) {
        Fail(table->source(), "[[include]] must add a new run, got one already in the matrix: " +
                                  Describe(params));
      }
      points.push_back(params);
    }
    std::int64_t runs = static_cast<std::int64_t>(points.size()) * repetitions_;
    if (runs > kMaxRuns) Fail(includes_.back().second->source(), TooManyRuns(runs));
    experiment.runs.reserve(points.size() * repetitions_);
    std::size_t calibration_runs = 0;
    for (int repetition = 0; repetition < repetitions_; ++repetition) {
      for (const RunParams& point : points) {
        PlannedRun run;
        run.params = point;
        run.params.repetition = repetition;
        run.params.seed = base_seed_ + static_cast<std::uint64_t>(repetition);
        bool calibration = split_.has_value() && InSplit(run.params);
        run.split = calibration ? "calibration" : "validation";
        calibration_runs += calibration;
        experiment.runs.push_back(std::move(run));
      }
    }
    if (split_.has_value() && calibration_runs == 0) {
      Fail(split_->where, "calibration must match at least one run, got none of " +
                              std::to_string(experiment.runs.size()));
    }
  }

  bool InSplit(const RunParams& params) const {
    return std::all_of(split_->allowed.begin(), split_->allowed.end(), [&](const auto& entry) {
      Value actual = Get(params, entry.first);
      return std::find(entry.second.begin(), entry.second.end(), actual) != entry.second.end();
    });
  }

  std::string path_;
  const toml::table& root_;
  std::map<std::string, NetworkProfile> profiles_;
  Provider provider_ = Provider::kLocal;
  int repetitions_ = 1;
  std::uint64_t base_seed_ = 1;
  RunParams defaults_;
  std::vector<Dimension> dimensions_;
  std::vector<std::pair<Assignment, const toml::table*>> includes_;
  std::vector<Assignment> excludes_;
  std::vector<toml::source_region> exclude_regions_;
  std::optional<SplitRule> split_;
};

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

}  // namespace

Experiment ParseExperiment(const std::string& text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    throw MatrixError(path + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                      ": " + std::string(error.description()));
  }
  return ExperimentReader(path, root).Read(text);
}

Experiment LoadExperiment(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw MatrixError(path + ": cannot read file: " + std::strerror(errno));
  std::string text;
  char chunk[65536];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) text.append(chunk, got);
  if (std::ferror(file.get())) {
    throw MatrixError(path + ": cannot read file: " + std::strerror(errno));
  }
  return ParseExperiment(text, path);
}

}  // namespace dmlbench
