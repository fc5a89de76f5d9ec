#include "orchestrator/model/parameter_table.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "orchestrator/model/fitting.h"

namespace dmlbench {

ParameterTable::ParameterTable(std::string model, std::vector<ParameterSpec> specs)
    : model_(std::move(model)), specs_(std::move(specs)) {}

std::string ParameterTable::Key(std::size_t j) const { return HeldKey(specs_[j].name, specs_[j].scope); }

std::size_t ParameterTable::Index(std::string_view name, std::string_view scope) const {
  std::size_t j = 0;
  while (j < specs_.size() && (specs_[j].name != name || specs_[j].scope != scope)) ++j;
  return j;
}

std::optional<double> SettledValue(const SettledRows& settled, std::size_t j) {
  return settled[j] ? std::optional<double>(settled[j]->value) : std::nullopt;
}

double ParameterTable::Value(std::size_t j, double x) const {
  switch (specs_[j].transform) {
    case Transform::kLogAboveOne:
      return 1 + std::exp(x);
    case Transform::kLogit:
      return 1 / (1 + std::exp(-x));
    case Transform::kLog:
      break;
  }
  return specs_[j].scale * std::exp(x);
}

double ParameterTable::Coordinate(std::size_t j, double value) const {
  switch (specs_[j].transform) {
    case Transform::kLogAboveOne:
      return std::log(value - 1);
    case Transform::kLogit:
      return std::log(value / (1 - value));
    case Transform::kLog:
      break;
  }
  return std::log(value / specs_[j].scale);
}

namespace {

// Whether `value` lies in the range of `spec`'s transform; its words.
bool InRange(const ParameterSpec& spec, double value) {
  const double floor = spec.transform == Transform::kLogAboveOne ? 1 : 0;
  return std::isfinite(value) && value > floor && (spec.transform != Transform::kLogit || value < 1);
}
std::string RangeText(const ParameterSpec& spec) {
  if (spec.transform == Transform::kLogit) return "above 0 and below 1";
  return spec.transform == Transform::kLogAboveOne ? "above 1" : "above 0";
}

}  // namespace

void CheckHoldable(std::string_view model, const ParameterSpec& spec, std::string_view key, double value) {
  if (!InRange(spec, value)) {
    std::ostringstream text;
    text << model << ": cannot hold " << key << " at " << value << ": it must be " << RangeText(spec);
    throw ModelError(text.str());
  }
}

void CheckStored(std::int64_t fit_id, const ParameterSpec& spec, std::string_view scope, double value) {
  // The range's ends included: a fitted value may round onto one.
  const double floor = spec.transform == Transform::kLogAboveOne ? 1 : 0;
  const bool fraction = spec.transform == Transform::kLogit;
  if (spec.identified != Identified::kFitted || (value >= floor && (!fraction || value <= 1))) return;
  std::ostringstream text;
  text << "fit " << fit_id << " holds " << HeldKey(spec.name, scope) << " = " << value << ", outside its range ("
       << (fraction ? "0 to 1" : floor == 1 ? "1 or more" : "0 or more") << "): refit it (dmlbench model fit)";
  throw ModelError(text.str());
}

SettledRows ParameterTable::Held(const FixedParameters& fixed) const {
  SettledRows held(specs_.size());
  for (const auto& [key, value] : fixed) {
    std::size_t j = 0;
    while (j < specs_.size() && Key(j) != key) ++j;
    if (j == specs_.size()) {
      std::string names;
      for (std::size_t i = 0; i < specs_.size(); ++i) names += (i == 0 ? "" : ", ") + Key(i);
      throw ModelError(model_ + " has no parameter \"" + key + "\" to hold; it has " + names);
    }
    CheckHoldable(model_, specs_[j], key, value);
    held[j] = dmlbench::Held(specs_[j].name, value, specs_[j].unit, specs_[j].scope);
  }
  return held;
}

std::vector<double> ParameterTable::Values(const SettledRows& settled, const std::vector<double>& free_x) const {
  std::vector<double> values(specs_.size());
  std::size_t next = 0;
  for (std::size_t j = 0; j < specs_.size(); ++j) values[j] = settled[j] ? settled[j]->value : Value(j, free_x[next++]);
  return values;
}

std::vector<std::string> ParameterTable::FreeKeys(const SettledRows& settled) const {
  std::vector<std::string> keys;
  for (std::size_t j = 0; j < specs_.size(); ++j) {
    if (!settled[j]) keys.push_back(Key(j));
  }
  return keys;
}

std::vector<ModelParameterRow> ParameterTable::Rows(const SettledRows& settled, const LeastSquaresFit& fit) const {
  std::vector<ModelParameterRow> rows;
  std::size_t next = 0;
  for (std::size_t j = 0; j < specs_.size(); ++j) {
    if (settled[j]) {
      rows.push_back(*settled[j]);
      continue;
    }
    const Coefficient& x = fit.coefficients[next++];
    rows.push_back(Fitted(Coefficient{specs_[j].name, Value(j, x.value), 0, Value(j, x.ci_low), Value(j, x.ci_high)},
                          specs_[j].unit, specs_[j].scope));
  }
  return rows;
}

std::vector<double> ParameterTable::ValuesOf(const ModelFitRecord& fit) const {
  std::vector<double> values;
  for (const ParameterSpec& s : specs_) {
    values.push_back(Parameter(fit, s.name, s.scope));
    CheckStored(fit.fit_id, s, s.scope, values.back());
  }
  return values;
}

}  // namespace dmlbench
