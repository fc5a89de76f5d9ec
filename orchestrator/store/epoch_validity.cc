#include "orchestrator/store/epoch_validity.h"

#include <cmath>
#include <cstdio>

namespace dmlbench {

std::optional<std::string> EpochFault(double wall_s, std::int64_t iterations, std::int64_t samples) {
  if (!(wall_s > 0) || !std::isfinite(wall_s) || wall_s > kMaxEpochWallS) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", wall_s);
    return "wall_s = " + std::string(value) + " is not a positive finite time of at most 1e9 s";
  }
  if (iterations < 1) return "iterations = " + std::to_string(iterations) + " is not 1 or more";
  if (samples < 0) return "samples = " + std::to_string(samples) + " is negative";
  return std::nullopt;
}

std::string LeftOutText(int epochs, const std::string& run_key, const std::string& why) {
  return "left out " + std::to_string(epochs) + (epochs == 1 ? " epoch" : " epochs") + " of run " +
         run_key.substr(0, 12) + "…: " + why;
}

}  // namespace dmlbench
