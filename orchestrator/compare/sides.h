// Sides: what an operand of `compare` stands for — a database, a filter or
// a name (an experiment, a tag or a trainer build) — and a side's complete
// runs as the samples Compare reads. It owns the reading of operands and of
// stored runs into samples, not the opening of the database nor the
// filter's matching (the command line, filter/). Pure functions;
// thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_COMPARE_SIDES_H_
#define DMLBENCH_ORCHESTRATOR_COMPARE_SIDES_H_

#include <string>
#include <vector>

#include "orchestrator/compare/compare.h"
#include "orchestrator/store/records.h"

namespace dmlbench {

// A name operand: no operator, no list, no quote; a filter otherwise.
bool IsNameOperand(const std::string& operand);
// A database operand: a name that is an existing file, or reads as a path
// (holds a '/', or ends in ".db").
bool IsDatabaseOperand(const std::string& operand);

// The filter a name stands for among `runs` (those of the database `db`):
// experiment=NAME, tag=NAME or trainer=PREFIX, whichever is the only one
// that exists there. Throws CompareError naming `side` ("A", "B") when it
// is none, several, or a prefix of several builds.
std::string FilterOfName(const std::string& side, const std::string& name, const std::vector<RunRecord>& runs,
                         const std::string& db);

// The complete runs of `runs` with their steady epochs (from `epochs`, the
// store's SteadyEpochs()), in the order of `runs`.
std::vector<RunSample> CompleteSamples(const std::vector<RunRecord>& runs, const std::vector<SteadyEpoch>& epochs);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_COMPARE_SIDES_H_
