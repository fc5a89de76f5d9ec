// Answer: a Recommendation (recommend.h) as a person reads it — candidates
// of the same predicted total time and cost merged into one row that says
// how many it stands for, one line when every candidate meets the goal,
// money in the catalog's currency with the digits that matter, and the
// lines around the tables: the two answers, what the shown rows rest on,
// what was ruled out. Text and tables only; the command line prints them
// (cli/recommend_command.cc) and --json prints every candidate unmerged.
// Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_RECOMMEND_ANSWER_H_
#define DMLBENCH_ORCHESTRATOR_RECOMMEND_ANSWER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/core/text_table.h"
#include "orchestrator/model/validation.h"
#include "orchestrator/recommend/recommend.h"

namespace dmlbench {

// An amount of money for people: two decimals from 1 on ("12.35"), two
// significant digits below, in fixed notation and without trailing zeros
// ("0.047", "0.000047", "0.5"), "0" for nothing; never an exponent. Money
// adds the catalog's currency ("0.000047 USD").
std::string Amount(double amount);
std::string Money(double amount, const std::string& currency);

// Estimates of one predicted total time, cost and interval (equal to a
// relative 1e-9), as indices into Recommendation::ranked, best first: runs
// of neighbours in its order. A group holds the candidates a reader could
// not choose between on these numbers: one-worker runs of any allreduce
// exchange nothing, and types of one CPU share and price differ only in a
// link no exchange uses. The answer shows a group as one row, ranked as
// its first candidate (--json's rank), saying how many it stands for.
std::vector<std::vector<std::size_t>> MergeEquivalent(const Recommendation& result);

// "every one of the 24 candidates meets the deadline at its point estimate
// (and at its interval's upper end)"; "" when some candidate does not.
std::string EveryCandidateLine(const Recommendation& result, const Goal& goal);

// Text (printed as it is), then a table when there is one.
struct AnswerPart {
  std::string text;
  std::optional<TextTable> table;
};

// What the answer is about, beyond the recommendation itself.
struct AnswerContext {
  const Catalog* catalog = nullptr;
  Goal goal;
  std::string model;          // the fit's model
  std::int64_t fit_id = 0;
  bool fit_has_interval = false;
  std::int64_t samples = 0;   // per epoch
  int epochs = 0;
  std::size_t top = 10;       // rows of each table
  // The fit's errors on held-out configurations (Validate's summaries).
  std::vector<ErrorSummary> held_out;
};

// The whole answer, in order.
std::vector<AnswerPart> Answer(const Recommendation& result, const AnswerContext& context);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_RECOMMEND_ANSWER_H_
