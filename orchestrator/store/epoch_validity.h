// Epoch validity: the one rule every reader of stored epochs (model, report,
// compare) applies before it uses an epoch's time. Ingest refuses such
// values (schemas/trainer-events.md, "What the orchestrator accepts"), but a
// database written by an older version, edited by hand or imported may
// still hold them. Pure functions; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_STORE_EPOCH_VALIDITY_H_
#define DMLBENCH_ORCHESTRATOR_STORE_EPOCH_VALIDITY_H_

#include <cstdint>
#include <optional>
#include <string>

namespace dmlbench {

// The largest epoch time a reader takes, in seconds (ingest's bound on
// every time).
inline constexpr double kMaxEpochWallS = 1e9;

// Why a stored epoch cannot be used, e.g. "wall_s = -1 is not a positive
// finite time"; nullopt when it can. `wall_s` must be above 0, finite and at
// most kMaxEpochWallS; `iterations` 1 or more; `samples` 0 or more.
std::optional<std::string> EpochFault(double wall_s, std::int64_t iterations, std::int64_t samples);

// "left out N epochs of run KEY12…: WHY" — how a reader names what it left
// out; `run_key` is shortened to its first 12 characters.
std::string LeftOutText(int epochs, const std::string& run_key, const std::string& why);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_STORE_EPOCH_VALIDITY_H_
