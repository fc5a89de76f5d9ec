#include "orchestrator/core/link_text.h"

#include <cstdio>
#include <exception>
#include <sstream>

namespace dmlbench {
namespace {

struct Unit {
  const char* name;
  double scale;
};
constexpr Unit kRates[] = {{"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}, {"bit/s", 1}};
constexpr Unit kTimes[] = {{"s", 1}, {"ms", 1e-3}, {"µs", 1e-6}};

// `value` in the first unit of `units` (largest first) it is at least 1
// of, the last one otherwise: "10 Gbit/s".
template <std::size_t N>
std::string InUnits(double value, const Unit (&units)[N]) {
  const Unit* unit = &units[N - 1];
  for (const Unit& u : units) {
    if (value >= u.scale) {
      unit = &u;
      break;
    }
  }
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.4g %s", value / unit->scale, unit->name);
  return buffer;
}

// A number and one of `units`, the whole of `text`.
template <std::size_t N>
std::optional<double> ReadInUnits(std::string_view text, const Unit (&units)[N]) {
  std::istringstream in{std::string(text)};
  double value = 0;
  std::string name, rest;
  if (!(in >> value >> name) || (in >> rest)) return std::nullopt;
  if (name == "us") name = "µs";
  for (const Unit& u : units) {
    if (name == u.name) return value * u.scale;
  }
  return std::nullopt;
}

}  // namespace

std::string LinkText(double bandwidth_bits_per_s, double latency_s) {
  const std::string rate = bandwidth_bits_per_s == 0 ? "unlimited" : InUnits(bandwidth_bits_per_s, kRates);
  return rate + ", " + (latency_s == 0 ? std::string("0 µs") : InUnits(latency_s, kTimes));
}

std::optional<Link> ParseLinkText(std::string_view text) {
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::string_view rate = text.substr(0, comma);
  const std::optional<double> latency = ReadInUnits(text.substr(comma + 1), kTimes);
  if (!latency) return std::nullopt;
  if (rate == "unlimited") return Link{0, *latency};
  const std::optional<double> bandwidth = ReadInUnits(rate, kRates);
  if (!bandwidth) return std::nullopt;
  return Link{*bandwidth, *latency};
}

std::string ReadableScope(const std::string& scope) {
  // The stored profile is the last two words: "<rate>bit/s" and "<latency>s".
  const std::size_t last = scope.rfind(' ');
  if (last == std::string::npos || !scope.ends_with("s")) return scope;
  const std::size_t before = scope.rfind(' ', last - 1);
  const std::size_t start = before == std::string::npos ? 0 : before + 1;
  const std::string rate = scope.substr(start, last - start), latency = scope.substr(last + 1);
  if (!rate.ends_with("bit/s")) return scope;
  std::size_t used_rate = 0, used_latency = 0;
  double bandwidth = 0, delay = 0;
  try {
    bandwidth = std::stod(rate, &used_rate);
    delay = std::stod(latency, &used_latency);
  } catch (const std::exception&) {
    return scope;
  }
  if (used_rate + 5 != rate.size() || used_latency + 1 != latency.size()) return scope;
  return scope.substr(0, start) + LinkText(bandwidth, delay);
}

}  // namespace dmlbench
