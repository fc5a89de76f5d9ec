// Catalog: an instance catalog (TOML, format in schemas/instance-catalog.md)
// read into typed structs — the one place catalog TOML becomes options: per
// instance type its cores, memory, link, hourly price and how the model
// knows its compute speed (calibrated on hosts of the type, the CPU quota
// term of a capped share, or assumed to be a calibrated type's). Checks the
// file alone; whether a type said to be calibrated is, is the database's to
// say (recommend.h). Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RECOMMEND_CATALOG_H_
#define DMLBENCH_ORCHESTRATOR_RECOMMEND_CATALOG_H_

#include <string>
#include <vector>

#include "orchestrator/core/toml_reader.h"

namespace dmlbench {

// Any invalid catalog. what() is the whole message, located:
// "ec2.toml:9:11: cores must be a number above 0, got string \"2\"".
class CatalogError : public LocatedError {
 public:
  explicit CatalogError(const std::string& message, std::string excerpt = "")
      : LocatedError(message, std::move(excerpt)) {}
};

// How the model knows a type's compute speed.
enum class ComputeSource {
  kCalibrated,  // one-worker calibration runs of the fit ran on hosts of this type
  kQuota,       // the model's CPU-quota term scales the calibrated compute to cpu_share
  kAssumed,     // assumed to compute as `assumed_like` does: an assumption every answer states
};

struct InstanceType {
  std::string name;                  // unique; an EC2 type is matched to its hosts' instance_type tag
  double cores = 0;                  // vCPUs (on the emulated cluster, the host's share)
  double memory_gib = 0;             // shown; the trainer's MLP fits in any
  double bandwidth_bits_per_s = 0;   // the link rate the model is given (EC2: the type's baseline)
  double latency_s = 0;              // extra one-way delay as the emulated cluster sets it; 0 = none
  double price_per_hour = 0;         // per host, in the catalog's currency
  double cpu_share = 0;              // CPU quota in cores (the emulated cluster's); 0 = uncapped
  ComputeSource compute = ComputeSource::kCalibrated;
  std::string assumed_like;          // kAssumed: a type of the catalog whose compute is kCalibrated
  int line = 0;                      // where the type's table starts, for messages
};

struct Catalog {
  std::string source_path;           // as given
  std::string currency;              // "USD"
  std::string prices;                // where the prices come from, e.g. "as published by AWS, ..."
  std::string prices_as_of;          // YYYY-MM-DD
  std::vector<InstanceType> types;   // in file order, at least one

  // The type named `name`, or nullptr.
  const InstanceType* Find(const std::string& name) const;
};

// Reads and validates. Throws CatalogError.
Catalog LoadCatalog(const std::string& path);
// Same, from text in memory; `path` names the file in messages.
Catalog ParseCatalog(const std::string& text, const std::string& path);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RECOMMEND_CATALOG_H_
