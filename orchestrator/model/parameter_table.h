// ParameterTable: a model's parameters as one table — name, unit, scope,
// how each is fitted (the transform that keeps it in its physical range) —
// that drives, each in one loop, the packing of the coefficients a
// nonlinear fit moves, holding parameters at a value (`model fit --fix`),
// their 95 % intervals, and the rows a fit stores and `model fit` prints.
// Holds no equation and fits nothing itself. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_PARAMETER_TABLE_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_PARAMETER_TABLE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/model/least_squares.h"
#include "orchestrator/model/performance_model.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

// How a parameter's value maps to the coordinate a fit moves, x, and so
// the range a value must lie in to be held:
//   kLog          value = scale e^x            (a positive cost)
//   kLogAboveOne  value = 1 + e^x              (an exponent above 1)
//   kLogit        value = 1 / (1 + e^-x)       (a share between 0 and 1)
enum class Transform { kLog, kLogAboveOne, kLogit };

// How a parameter is identified: measured by a stage of its own (a probe,
// the runs' CPU reports) before the nonlinear fit, or fitted by it.
enum class Identified { kMeasured, kFitted };

struct ParameterSpec {
  std::string name;
  std::string unit;
  std::string scope;   // "" or what the value applies to, as the fit stores it
  Identified identified = Identified::kFitted;
  Transform transform = Transform::kLog;
  double scale = 1;    // kLog: the unit it is fitted in, so that x is of order one
};

// Throws ModelError, naming `model`, the key and the range, unless `value`
// lies in the range of `spec`'s transform.
void CheckHoldable(std::string_view model, const ParameterSpec& spec, std::string_view key, double value);

// Throws ModelError unless `value`, which fit `fit_id` stores for `spec`
// (of `scope`), lies in the range of the spec's transform (its ends
// included), where the spec is fitted: a fitted value cannot leave it and a
// held one was checked by CheckHoldable, so one outside was edited into the
// database since ("fit 7 holds combine_exponent = -1, outside its range (1
// or more): refit it (dmlbench model fit)"). A NaN never reaches it (the
// store refuses what is not a finite number); measured parameters are not
// bounded by a transform and pass.
void CheckStored(std::int64_t fit_id, const ParameterSpec& spec, std::string_view scope, double value);

// Per parameter, in table order, its row once it is settled before the
// nonlinear fit (held at a value, or measured), else nullopt (fitted).
using SettledRows = std::vector<std::optional<ModelParameterRow>>;
// The value of parameter j once settled, else nullopt.
std::optional<double> SettledValue(const SettledRows& settled, std::size_t j);

class ParameterTable {
 public:
  // `model` names the model in error messages.
  ParameterTable(std::string model, std::vector<ParameterSpec> specs);

  std::size_t size() const { return specs_.size(); }
  const ParameterSpec& spec(std::size_t j) const { return specs_[j]; }
  // As FixedParameters keys it: "name" or "name scope".
  std::string Key(std::size_t j) const;
  // The index of the parameter of that name and scope; size() when none has them.
  std::size_t Index(std::string_view name, std::string_view scope = "") const;

  // A fitted parameter's value at coordinate x, and its inverse.
  double Value(std::size_t j, double x) const;
  double Coordinate(std::size_t j, double value) const;

  // Holding: the parameters `fixed` holds, as rows of source "fixed", the
  // others nullopt. Throws ModelError for a key no parameter has, naming
  // those the model has, and for a value outside the parameter's range.
  SettledRows Held(const FixedParameters& fixed) const;

  // Packing: every parameter's value, the settled ones' from `settled` and
  // the others', in table order, at the coordinates `free_x`.
  std::vector<double> Values(const SettledRows& settled, const std::vector<double>& free_x) const;
  // The keys of the parameters left to fit, in table order.
  std::vector<std::string> FreeKeys(const SettledRows& settled) const;

  // Intervals and rows: every parameter as the fit stores it, the settled
  // ones as they are, the fitted ones (`fit`, over the free parameters in
  // table order) with the interval of their coordinate mapped to values.
  std::vector<ModelParameterRow> Rows(const SettledRows& settled, const LeastSquaresFit& fit) const;

  // Each parameter's value from a stored fit, in table order. Throws
  // ModelError naming one the fit lacks or holds outside its range
  // (CheckStored).
  std::vector<double> ValuesOf(const ModelFitRecord& fit) const;

 private:
  std::string model_;
  std::vector<ParameterSpec> specs_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_PARAMETER_TABLE_H_
