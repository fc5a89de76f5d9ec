#include "orchestrator/launch/cluster/measured_start.h"

#include <nlohmann/json.hpp>

namespace dmlbench {
namespace {

std::optional<double> Number(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  if (it == event.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

void MeasuredStart::Observe(std::string_view line) {
  if (line.empty() || line.front() != '{') return;
  const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) return;
  const auto kind = event.find("event");
  if (kind == event.end() || !kind->is_string()) return;
  if (*kind == "run_start") {
    run_start_unix_s_ = Number(event, "time_unix_s");
  } else if (*kind == "epoch" && Number(event, "epoch") == 1.0) {
    const std::optional<double> wall = Number(event, "wall_s");
    if (wall) warmup_s_ = *wall + Number(event, "eval_s").value_or(0.0);
  } else if (*kind == "epoch" && Number(event, "epoch") == 2.0) {
    epoch_2_start_unix_s_ = Number(event, "start_unix_s");
  }
}

std::optional<double> MeasuredStart::unix_s() const {
  if (!run_start_unix_s_ || !warmup_s_) return std::nullopt;
  if (epoch_2_start_unix_s_) return epoch_2_start_unix_s_;
  return *run_start_unix_s_ + *warmup_s_;
}

}  // namespace dmlbench
