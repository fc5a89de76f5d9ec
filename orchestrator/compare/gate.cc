#include "orchestrator/compare/gate.h"

#include <algorithm>
#include <limits>

namespace dmlbench {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// "slower", "faster", "changed": what the failing tests are.
std::string What(FailIf fail_if) {
  return fail_if == FailIf::kDifferent ? "changed" : std::string(Text(fail_if));
}

// The smallest change in the gate's direction a test could have seen.
double Detectable(FailIf fail_if, double slower, double faster) {
  switch (fail_if) {
    case FailIf::kSlower: return slower;
    case FailIf::kFaster: return faster;
    case FailIf::kDifferent: return std::max(slower, faster);
  }
  return kInfinity;
}

std::string Configurations(int n) { return std::to_string(n) + (n == 1 ? " configuration" : " configurations"); }

// The throw when nothing can be judged.
void RefuseUnjudged(FailIf fail_if, int compared) {
  throw CompareError("--fail-if " + std::string(Text(fail_if)) + ": no configuration has runs enough to be tested (" +
                     Configurations(compared) + " compared); the gate can neither pass nor fail");
}

}  // namespace

std::string_view Text(FailIf fail_if) {
  switch (fail_if) {
    case FailIf::kSlower: return "slower";
    case FailIf::kFaster: return "faster";
    case FailIf::kDifferent: return "different";
  }
  return "?";
}

std::optional<FailIf> ParseFailIf(std::string_view text) {
  for (FailIf fail_if : {FailIf::kSlower, FailIf::kFaster, FailIf::kDifferent}) {
    if (text == Text(fail_if)) return fail_if;
  }
  return std::nullopt;
}

bool Fails(Change change, FailIf fail_if) {
  switch (fail_if) {
    case FailIf::kSlower: return change == Change::kSlower;
    case FailIf::kFaster: return change == Change::kFaster;
    case FailIf::kDifferent: return change == Change::kSlower || change == Change::kFaster;
  }
  return false;
}

GateOutcome DecideGate(const Comparison& comparison, const std::vector<std::string>& labels, FailIf fail_if,
                       double factor, Underpowered underpowered) {
  GateOutcome gate;
  gate.fail_if = fail_if;
  gate.factor = factor;
  gate.compared = static_cast<int>(comparison.both.size());
  Resolution resolution{kInfinity, "", kInfinity, 0, "", ""};
  for (size_t i = 0; i < comparison.both.size(); ++i) {
    const RunTest& test = comparison.both[i].test;
    if (Fails(test.change, fail_if)) gate.failed.push_back(labels[i]);
    if (!test.enough_runs) continue;
    ++gate.judged;
    const double detectable = Detectable(fail_if, test.detectable_slower, test.detectable_faster);
    if (detectable < resolution.one_low) resolution.one_low = detectable, resolution.one_low_label = labels[i];
    if (detectable >= resolution.one_high) resolution.one_high = detectable, resolution.one_high_label = labels[i];
  }
  const StudyTest& study = comparison.study;
  gate.study_judged = study.enough_configurations;
  gate.study_failed = study.enough_configurations && Fails(study.change, fail_if);
  if (gate.judged == 0 && !gate.study_judged) RefuseUnjudged(fail_if, gate.compared);
  if (gate.study_judged) {
    resolution.every = Detectable(fail_if, study.detectable_slower, study.detectable_faster);
    resolution.every_by = "the signed-rank test over " + Configurations(study.configurations);
  }
  if (resolution.one_low < resolution.every) {
    resolution.every = resolution.one_low;
    resolution.every_by = "the U test of " + resolution.one_low_label;
  }
  gate.resolution = resolution;
  const bool fails = gate.study_failed || !gate.failed.empty();
  gate.underpowered = !fails && resolution.every > factor;
  gate.exit_status = fails ? 1 : gate.underpowered && underpowered == Underpowered::kError ? 2 : 0;
  return gate;
}

GateOutcome DecideGate(const std::vector<std::string>& labels, const std::vector<Change>& changes, FailIf fail_if,
                       double factor) {
  GateOutcome gate;
  gate.fail_if = fail_if;
  gate.factor = factor;
  gate.compared = static_cast<int>(changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i] != Change::kTooFewRuns) ++gate.judged;
    if (Fails(changes[i], fail_if)) gate.failed.push_back(labels[i]);
  }
  if (gate.judged == 0) RefuseUnjudged(fail_if, gate.compared);
  gate.exit_status = gate.failed.empty() ? 0 : 1;
  return gate;
}

std::string GateText(const GateOutcome& gate, const Comparison* comparison) {
  std::string text = "gate --fail-if " + std::string(Text(gate.fail_if)) + " --factor " + Format(gate.factor, "%g") +
                     ": ";
  const std::string what = What(gate.fail_if);
  const std::string failed = std::to_string(gate.failed.size()) + " of " + std::to_string(gate.compared) +
                             " configurations " + what;
  std::string listed;
  for (const std::string& label : gate.failed) listed += "  " + label + "\n";
  if (!gate.study_failed) {
    if (!gate.failed.empty()) return text + "FAIL, " + failed + ":\n" + listed;
    const std::string none = "no configuration " + what + " (" + std::to_string(gate.judged) + " of " +
                             std::to_string(gate.compared) + " tested" +
                             (gate.study_judged ? " alone, and the study as a whole" : "") + ")";
    if (!gate.underpowered) return text + "pass, " + none + "\n";
    return text + (gate.exit_status == 2 ? "no verdict, " : "pass, ") + none + ", but it could not have seen " +
           Format(gate.factor, "%g") + "\n";
  }
  const StudyTest& study = comparison->study;
  text += "FAIL, the study as a whole is " + what + "\n  B/A " + Format(study.ratio, "%.3f") + " [" +
          Format(study.ratio_ci_low, "%.3f") + ", " + Format(study.ratio_ci_high, "%.3f") +
          "], the geometric mean over " + Configurations(study.configurations) + "; signed-rank p (Holm) " +
          PValue(study.p_holm) + "\n";
  if (!gate.failed.empty()) return text + "and " + failed + " on their own:\n" + listed;
  return text + "  no configuration is " + what + " on its own (" + std::to_string(gate.judged) + " of " +
         std::to_string(gate.compared) + " had runs enough to be tested alone)\n";
}

std::string ResolutionText(const GateOutcome& gate) {
  if (!gate.resolution) return "";
  const Resolution& r = *gate.resolution;
  const std::string direction = gate.fail_if == FailIf::kDifferent ? "slower or faster" : What(gate.fail_if);
  std::string text = "resolution: the smallest change it could have seen at p < " + Format(kGateAlpha, "%g") +
                     ":\n  every configuration " + direction + " by " + Format(r.every, "%.3f") + " (" + r.every_by +
                     ")\n  one configuration alone: ";
  if (r.one_low_label.empty()) return text + "none had runs enough\n";
  text += Format(r.one_low, "%.3f") + " (" + r.one_low_label + ")";
  if (r.one_high_label != r.one_low_label) text += " to " + Format(r.one_high, "%.3f") + " (" + r.one_high_label + ")";
  return text + "\n";
}

std::string UnderpoweredMessage(const GateOutcome& gate, bool hint) {
  const std::string direction = gate.fail_if == FailIf::kDifferent ? "slower or faster" : What(gate.fail_if);
  return "--fail-if " + std::string(Text(gate.fail_if)) + ": the gate could not have seen every configuration " +
         direction + " by --factor " + Format(gate.factor, "%g") + ": the smallest change it could see at p < " +
         Format(kGateAlpha, "%g") + " is " + Format(gate.resolution->every, "%.3f") + " (" +
         gate.resolution->every_by + ")" + (hint ? "; add runs, raise --factor, or pass --underpowered warn" : "");
}

}  // namespace dmlbench
