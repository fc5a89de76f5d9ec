#include "orchestrator/core/enums.h"

#include <array>
#include <utility>

namespace dmlbench {
namespace {

template <typename Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<Architecture, 4> kArchitectures = {{
    {Architecture::kRing, "ring"}, {Architecture::kMpi, "mpi"}, {Architecture::kPs, "ps"}, {Architecture::kP2p, "p2p"}}};
constexpr Names<Provider, 4> kProviders = {{{Provider::kLocal, "local"},
                                            {Provider::kSsh, "ssh"},
                                            {Provider::kCluster, "cluster"},
                                            {Provider::kSlurm, "slurm"}}};
constexpr Names<RunState, 5> kRunStates = {{{RunState::kPending, "pending"},
                                            {RunState::kRunning, "running"},
                                            {RunState::kComplete, "complete"},
                                            {RunState::kFailed, "failed"},
                                            {RunState::kInterrupted, "interrupted"}}};
constexpr Names<AttemptState, 5> kAttemptStates = {{{AttemptState::kRunning, "running"},
                                                    {AttemptState::kOk, "ok"},
                                                    {AttemptState::kFailed, "failed"},
                                                    {AttemptState::kTimedOut, "timed_out"},
                                                    {AttemptState::kInterrupted, "interrupted"}}};

template <typename Enum, std::size_t N>
std::string_view Lookup(const Names<Enum, N>& names, Enum value) {
  for (const auto& [v, text] : names) {
    if (v == value) return text;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> Parse(const Names<Enum, N>& names, std::string_view text) {
  for (const auto& [v, t] : names) {
    if (t == text) return v;
  }
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::vector<std::string_view> Texts(const Names<Enum, N>& names) {
  std::vector<std::string_view> texts;
  for (const auto& entry : names) texts.push_back(entry.second);
  return texts;
}

}  // namespace

std::string_view Text(Architecture value) { return Lookup(kArchitectures, value); }
std::string_view Text(Provider value) { return Lookup(kProviders, value); }
std::string_view Text(RunState value) { return Lookup(kRunStates, value); }
std::string_view Text(AttemptState value) { return Lookup(kAttemptStates, value); }

template <> std::optional<Architecture> FromText<Architecture>(std::string_view text) {
  return Parse(kArchitectures, text);
}
template <> std::optional<Provider> FromText<Provider>(std::string_view text) { return Parse(kProviders, text); }
template <> std::optional<RunState> FromText<RunState>(std::string_view text) { return Parse(kRunStates, text); }
template <> std::optional<AttemptState> FromText<AttemptState>(std::string_view text) {
  return Parse(kAttemptStates, text);
}

template <> std::vector<std::string_view> AllTexts<Architecture>() { return Texts(kArchitectures); }
template <> std::vector<std::string_view> AllTexts<Provider>() { return Texts(kProviders); }
template <> std::vector<std::string_view> AllTexts<RunState>() { return Texts(kRunStates); }
template <> std::vector<std::string_view> AllTexts<AttemptState>() { return Texts(kAttemptStates); }

}  // namespace dmlbench
