// LinkText: a network link as people write it, "10 Gbit/s, 0 µs" — the one
// way the command line, predictions and parameter scopes show a link's rate
// and latency to a reader. It owns the words, not the stored key: a model
// parameter's scope keeps the form the database holds ("1e+10bit/s 0s",
// see ProfileScope in orchestrator/model/fitting.h), and ReadableScope turns
// that into these words only where it is printed. Pure functions;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_LINK_TEXT_H_
#define DMLBENCH_ORCHESTRATOR_CORE_LINK_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

namespace dmlbench {

// "10 Gbit/s, 0 µs", "100 Mbit/s, 50 µs", "1.5 Gbit/s, 2 ms"; the rate in
// the largest of bit/s, kbit/s, Mbit/s and Gbit/s that keeps it at 1 or
// above, the latency in µs, ms or s alike, each to 4 significant digits. A
// rate of 0 (an unshaped link) reads "unlimited".
std::string LinkText(double bandwidth_bits_per_s, double latency_s);

// A link as LinkText writes it, read back (also "us" for "µs"); nullopt
// for any other text.
struct Link {
  double bandwidth_bits_per_s = 0;
  double latency_s = 0;
};
std::optional<Link> ParseLinkText(std::string_view text);

// `scope` with a stored link profile ("<rate>bit/s <latency>s", numbers as
// an iostream writes them) at its end or making all of it rewritten as
// LinkText: "ring b=100 1e+09bit/s 0s" -> "ring b=100 1 Gbit/s, 0 µs".
// Any other scope is returned unchanged.
std::string ReadableScope(const std::string& scope);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_LINK_TEXT_H_
