// Enums: the closed sets of words the orchestrator deals in — architecture,
// provider, the state of a run and of an attempt — and their text, converted
// in exactly one place (enums.cc). The text is what the database, the matrix
// files and the trainer's command line use. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_ENUMS_H_
#define DMLBENCH_ORCHESTRATOR_CORE_ENUMS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dmlbench {

// How gradients are exchanged (DESIGN.md section 1).
enum class Architecture { kRing, kMpi, kPs, kP2p };
// Where ranks run.
enum class Provider { kLocal, kSsh, kCluster, kSlurm };
// A run in the database (runs.status).
enum class RunState { kPending, kRunning, kComplete, kFailed, kInterrupted };
// One try of a run (attempts.status).
enum class AttemptState { kRunning, kOk, kFailed, kTimedOut, kInterrupted };

// "ring", "mpi", "ps", "p2p"; "local", "ssh", "cluster", "slurm"; "pending",
// "running", "complete", "failed", "interrupted"; "running", "ok", "failed",
// "timed_out", "interrupted".
std::string_view Text(Architecture value);
std::string_view Text(Provider value);
std::string_view Text(RunState value);
std::string_view Text(AttemptState value);

// The value whose Text() is `text`, or nullopt.
template <typename Enum>
std::optional<Enum> FromText(std::string_view text);
template <> std::optional<Architecture> FromText<Architecture>(std::string_view text);
template <> std::optional<Provider> FromText<Provider>(std::string_view text);
template <> std::optional<RunState> FromText<RunState>(std::string_view text);
template <> std::optional<AttemptState> FromText<AttemptState>(std::string_view text);

// Every text of an enum, in declaration order (for messages and choices).
template <typename Enum>
std::vector<std::string_view> AllTexts();
template <> std::vector<std::string_view> AllTexts<Architecture>();
template <> std::vector<std::string_view> AllTexts<Provider>();
template <> std::vector<std::string_view> AllTexts<RunState>();
template <> std::vector<std::string_view> AllTexts<AttemptState>();

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_ENUMS_H_
