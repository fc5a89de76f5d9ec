// Gate: the regression gate's decision (`compare --fail-if`) from the tests
// a comparison or a history made — which of them fail it, whether it could
// judge at all, and how small a change it could have seen. It owns the
// decision and its messages, not the tests (compare.h, history.h) nor the
// printing (the command line). Pure functions; thread-safe. docs/ci.md is
// the manual.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_GATE_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_GATE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/compare/compare.h"

namespace dmlbench {

// What a gate fails on (`compare --fail-if`).
enum class FailIf { kSlower, kFaster, kDifferent };
// "slower", "faster", "different".
std::string_view Text(FailIf fail_if);
// The FailIf a word names; nullopt for anything else (a number included).
std::optional<FailIf> ParseFailIf(std::string_view text);
// Whether `change` is one the gate fails on.
bool Fails(Change change, FailIf fail_if);

// What a gate does when it could not have seen a change of the factor
// (`compare --underpowered`): end with an error (status 2), or warn and
// decide as usual.
enum class Underpowered { kError, kWarn };

// The smallest change every configuration at once could have had for the
// gate to see it, and the test that would: the study's or one
// configuration's (RunTest::detectable_*). Infinity when no test could.
struct Resolution {
  double every = 0;
  std::string every_by;          // "the signed-rank test over 106 configurations", "the U test of ring w=1 b=100"
  // Of one configuration alone, over those with runs enough: the smallest
  // and the largest, with their labels (an empty label: none had runs enough).
  double one_low = 0, one_high = 0;
  std::string one_low_label, one_high_label;
};

// What the gate decided.
struct GateOutcome {
  FailIf fail_if = FailIf::kSlower;
  double factor = kDefaultFactor;
  std::vector<std::string> failed;  // labels of the configurations it fails on, in their order
  bool study_failed = false;        // the study's test fails it
  int judged = 0;                   // configurations with runs enough to judge
  int compared = 0;
  bool study_judged = false;
  std::optional<Resolution> resolution;  // comparisons only, not histories
  // It passes, but could not have seen a change of the factor in every
  // configuration at once: resolution->every > factor.
  bool underpowered = false;
  int exit_status = 0;              // 0 pass, 1 fail, 2 underpowered (Underpowered::kError)
};

// The gate over `comparison` (its labels from Labels(comparison)). Throws
// CompareError when neither the study nor any configuration could be
// tested: a gate that cannot judge must not read as a pass. An underpowered
// pass ends with exit status 2 under Underpowered::kError, 0 under kWarn.
GateOutcome DecideGate(const Comparison& comparison, const std::vector<std::string>& labels, FailIf fail_if,
                       double factor, Underpowered underpowered = Underpowered::kError);
// The gate over a history's drifts (one change per configuration, by
// `labels`); the same error when none had runs enough.
GateOutcome DecideGate(const std::vector<std::string>& labels, const std::vector<Change>& changes, FailIf fail_if,
                       double factor);

// The gate's verdict in words, the lines the text output ends with
// (without the resolution).
std::string GateText(const GateOutcome& gate, const Comparison* comparison);
// "resolution: ..." — how small a change the gate could have seen; "" for
// a history.
std::string ResolutionText(const GateOutcome& gate);
// The message of an underpowered gate, for the error (or the warning);
// `hint` adds what to do about it.
std::string UnderpoweredMessage(const GateOutcome& gate, bool hint);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_GATE_H_
