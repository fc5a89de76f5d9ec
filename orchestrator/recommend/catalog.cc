#include "orchestrator/recommend/catalog.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <toml++/toml.h>

namespace dmlbench {
namespace {

constexpr int kFormatVersion = 1;

const std::vector<std::string_view> kTopLevelKeys = {"format_version", "currency", "prices", "prices_as_of", "type"};
const std::vector<std::string_view> kTypeKeys = {
    "name",           "cores",     "memory_gib", "bandwidth_mbit_per_s", "latency_us", "price_per_hour",
    "price_per_core_hour", "cpu_share", "compute", "assumed_like"};
const std::vector<std::string_view> kComputeSources = {"calibrated", "quota", "assumed"};

class Reader : public TomlReader {
 public:
  using TomlReader::TomlReader;

  Catalog Read() const {
    const toml::table root = Parse();
    CheckKeys(root, kTopLevelKeys, "the top level");
    CheckFormatVersion(root, kFormatVersion);
    Catalog catalog;
    catalog.source_path = path();
    catalog.currency = ReadName(Required(root, "currency", "the catalog"), "currency");
    catalog.prices = ReadName(Required(root, "prices", "the catalog"), "prices");
    const toml::node& as_of = Required(root, "prices_as_of", "the catalog");
    catalog.prices_as_of = ReadString(as_of, "prices_as_of");
    static const std::regex date(R"(\d{4}-\d{2}-\d{2})");
    if (!std::regex_match(catalog.prices_as_of, date)) {
      Fail(as_of, "prices_as_of must be the date the prices were read, YYYY-MM-DD, got " +
                      Quoted(catalog.prices_as_of));
    }
    std::map<std::string, int> seen;  // name -> line
    std::map<std::string, const toml::node*> likes;
    for (const toml::table* table : TableArray(root, "type")) {
      InstanceType type = Type(*table);
      const auto [first, inserted] = seen.emplace(type.name, type.line);
      if (!inserted) {
        Fail(table->source(), "duplicate type name '" + type.name + "' (first at line " +
                                  std::to_string(first->second) + ")");
      }
      if (type.compute == ComputeSource::kAssumed) likes[type.name] = table->get("assumed_like");
      catalog.types.push_back(std::move(type));
    }
    if (catalog.types.empty()) Fail(root.source(), "no [[type]] entries");
    // An assumption rests on a type the model knows by calibration.
    for (const InstanceType& type : catalog.types) {
      if (type.compute != ComputeSource::kAssumed) continue;
      const InstanceType* like = catalog.Find(type.assumed_like);
      if (like == nullptr) {
        Fail(*likes[type.name], "assumed_like must name a type of this catalog, got " + Quoted(type.assumed_like));
      }
      if (like->compute != ComputeSource::kCalibrated) {
        Fail(*likes[type.name], "assumed_like must name a type whose compute is \"calibrated\", got " +
                                    Quoted(type.assumed_like));
      }
    }
    return catalog;
  }

 protected:
  [[noreturn]] void Throw(const std::string& message, const std::string& excerpt) const override {
    throw CatalogError(message, excerpt);
  }

 private:
  const toml::node& Required(const toml::table& table, std::string_view key, const std::string& what) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) Fail(table.source(), what + " needs '" + std::string(key) + "'");
    return *node;
  }

  InstanceType Type(const toml::table& table) const {
    CheckKeys(table, kTypeKeys, "[[type]]");
    InstanceType type;
    type.line = static_cast<int>(table.source().begin.line);
    type.name = ReadName(Required(table, "name", "[[type]]"), "name");
    const std::string what = "type '" + type.name + "'";
    type.cores = ReadNumber(Required(table, "cores", what), "cores", 0, /*inclusive=*/false);
    type.memory_gib = ReadNumber(Required(table, "memory_gib", what), "memory_gib", 0, /*inclusive=*/false);
    type.bandwidth_bits_per_s =
        1e6 * ReadNumber(Required(table, "bandwidth_mbit_per_s", what), "bandwidth_mbit_per_s", 0, false);
    if (const toml::node* node = table.get("latency_us")) {
      type.latency_s = 1e-6 * ReadNumber(*node, "latency_us", 0, /*inclusive=*/true);
    }
    const toml::node* per_host = table.get("price_per_hour");
    const toml::node* per_core = table.get("price_per_core_hour");
    if ((per_host == nullptr) == (per_core == nullptr)) {
      Fail(table.source(), what + " needs exactly one of 'price_per_hour' and 'price_per_core_hour'");
    }
    type.price_per_hour = per_host != nullptr
                              ? ReadNumber(*per_host, "price_per_hour", 0, /*inclusive=*/true)
                              : type.cores * ReadNumber(*per_core, "price_per_core_hour", 0, /*inclusive=*/true);
    type.price_per_hour += 0.0;  // a price written -0.0 is 0: no cost is printed as "-0"
    if (const toml::node* node = table.get("cpu_share")) {
      type.cpu_share = ReadNumber(*node, "cpu_share", 0, /*inclusive=*/false);
      if (type.cpu_share > 1) {
        Fail(*node, "cpu_share must be at most 1 core (a rank runs on one core), got " + std::to_string(type.cpu_share));
      }
    }
    const toml::node& compute = Required(table, "compute", what);
    const std::string source = ReadChoice(compute, "compute", kComputeSources);
    const toml::node* like = table.get("assumed_like");
    if (source == "calibrated") type.compute = ComputeSource::kCalibrated;
    if (source == "quota") {
      type.compute = ComputeSource::kQuota;
      if (type.cpu_share == 0) Fail(compute, "compute \"quota\" needs the type's cpu_share");
    }
    if (source == "assumed") {
      type.compute = ComputeSource::kAssumed;
      if (like == nullptr) Fail(compute, "compute \"assumed\" needs assumed_like, the calibrated type it computes as");
      type.assumed_like = ReadName(*like, "assumed_like");
    } else if (like != nullptr) {
      Fail(*like, "assumed_like belongs to compute \"assumed\", not " + Quoted(source));
    }
    return type;
  }
};

}  // namespace

const InstanceType* Catalog::Find(const std::string& name) const {
  for (const InstanceType& type : types) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

Catalog ParseCatalog(const std::string& text, const std::string& path) { return Reader(path, text).Read(); }

Catalog LoadCatalog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CatalogError(path + ": cannot open instance catalog");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCatalog(text.str(), path);
}

}  // namespace dmlbench
