// Tests of orchestrator/filter: what each key and operator matches, and the
// located message of every way a filter can fail to parse.
#include "orchestrator/filter/filter.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

// A stored or planned run as the filter sees it.
struct Candidate {
  RunParams params;
  std::string run_key = "3fa9c2" + std::string(58, '0');
  RunState state = RunState::kComplete;
  std::string split = "validation";
  std::vector<std::string> tags;
  std::vector<std::string> experiments = {"sweep"};
  std::string trainer_sha256 = "77b1" + std::string(60, 'e');

  RunFacts Facts() const { return {params, run_key, state, split, tags, experiments, trainer_sha256}; }
};

bool Matches(const std::string& filter, const Candidate& run) {
  return Filter::Parse(filter, "--only").Matches(run.Facts());
}

Candidate Ps(int servers, int workers) {
  Candidate run;
  run.params.architecture = Architecture::kPs;
  run.params.servers = servers;
  run.params.workers = workers;
  return run;
}

TEST(FilterTest, TheEmptyFilterMatchesEveryRun) {
  EXPECT_TRUE(Filter().Matches(Candidate().Facts()));
  EXPECT_TRUE(Filter().empty());
}

TEST(FilterTest, CommasJoinTermsThatMustAllHold) {
  const Candidate run = Ps(2, 4);
  EXPECT_TRUE(Matches("architecture=ps,workers>=4", run));
  EXPECT_TRUE(Matches(" architecture = ps , workers >= 4 ", run));
  EXPECT_FALSE(Matches("architecture=ps,workers>4", run));
  EXPECT_FALSE(Matches("architecture=ring,workers>=4", run));
}

TEST(FilterTest, NumbersCompareWithEveryOperator) {
  const Candidate run = Ps(2, 4);
  EXPECT_TRUE(Matches("workers=4", run));
  EXPECT_TRUE(Matches("workers!=3", run));
  EXPECT_TRUE(Matches("workers<5", run));
  EXPECT_TRUE(Matches("workers<=4", run));
  EXPECT_TRUE(Matches("workers>3", run));
  EXPECT_TRUE(Matches("workers>=4", run));
  EXPECT_FALSE(Matches("workers<4", run));
  EXPECT_FALSE(Matches("workers!=4", run));
  EXPECT_TRUE(Matches("servers=2", run));
  EXPECT_TRUE(Matches("learning_rate<0.1", run));
  EXPECT_TRUE(Matches("learning_rate=0.05", run));
  EXPECT_TRUE(Matches("batch_size=100,epochs=1,repetition=0,seed=1,bucket_bytes=1048576", run));
  EXPECT_TRUE(Matches("max_iterations_per_epoch=0", run));
}

TEST(FilterTest, ServersOfOtherArchitecturesAreZero) {
  Candidate ring;
  ring.params.servers = 3;  // ignored: ring has no servers
  EXPECT_TRUE(Matches("servers=0", ring));
}

TEST(FilterTest, BarsListValuesAnyOfWhichMatches) {
  Candidate run;
  EXPECT_TRUE(Matches("architecture=ps|ring", run));
  EXPECT_FALSE(Matches("architecture!=ps|ring", run));
  EXPECT_TRUE(Matches("architecture!=ps|mpi", run));
  EXPECT_TRUE(Matches("workers=1|2|4", run));
  EXPECT_FALSE(Matches("workers!=1|2", run));
}

TEST(FilterTest, StatusSplitDatasetAndOverlap) {
  Candidate run;
  run.state = RunState::kFailed;
  EXPECT_TRUE(Matches("status=failed", run));
  EXPECT_FALSE(Matches("status=complete", run));
  EXPECT_TRUE(Matches("split=validation,dataset=fashion-mnist,overlap=off", run));
  run.params.overlap = true;
  EXPECT_TRUE(Matches("overlap=true", run));
  EXPECT_TRUE(Matches("overlap=on", run));
  EXPECT_FALSE(Matches("overlap=false", run));
}

TEST(FilterTest, PullsInTurn) {
  Candidate run = Ps(1, 4);
  EXPECT_TRUE(Matches("pulls_in_turn=false", run));
  EXPECT_FALSE(Matches("pulls_in_turn=on", run));
  run.params.pulls_in_turn = true;
  EXPECT_TRUE(Matches("architecture=ps,pulls_in_turn=true", run));
  EXPECT_FALSE(Matches("pulls_in_turn=off", run));
}

TEST(FilterTest, HiddenAndNetworkAreTextQuotedWhenTheyHoldCommas) {
  Candidate run;
  run.params.network.name = "1gbit";
  EXPECT_TRUE(Matches("hidden=\"128,32\"", run));
  EXPECT_TRUE(Matches("hidden='128,32',network=1gbit", run));
  EXPECT_FALSE(Matches("hidden='128'", run));
  Candidate unshaped;
  EXPECT_TRUE(Matches("network=''", unshaped));
}

TEST(FilterTest, TagsMatchWhenTheRunHasOne) {
  Candidate run;
  run.tags = {"baseline", "nightly"};
  EXPECT_TRUE(Matches("tag=nightly", run));
  EXPECT_TRUE(Matches("tag=candidate|baseline", run));
  EXPECT_FALSE(Matches("tag=candidate", run));
  EXPECT_TRUE(Matches("tag!=candidate", run));
  EXPECT_FALSE(Matches("tag!=baseline", run));
  EXPECT_FALSE(Matches("tag=nightly", Candidate()));
}

TEST(FilterTest, ExperimentRunKeyAndTrainerPrefixes) {
  Candidate run;
  EXPECT_TRUE(Matches("experiment=sweep", run));
  EXPECT_FALSE(Matches("experiment=swee", run));
  EXPECT_TRUE(Matches("3fa9", run));
  EXPECT_TRUE(Matches("3FA9C2", run));
  EXPECT_TRUE(Matches("key=3fa9", run));
  EXPECT_FALSE(Matches("3fa8", run));
  EXPECT_TRUE(Matches("key!=3fa8", run));
  EXPECT_TRUE(Matches("trainer=77b1", run));
  EXPECT_FALSE(Matches("trainer=77b2", run));
  EXPECT_TRUE(Matches("3fa9,architecture=ring", run));
}

TEST(FilterTest, ExperimentMatchesEveryExperimentThatPlannedTheRun) {
  Candidate run;
  run.experiments = {"sweep", "sweep-edited"};
  EXPECT_TRUE(Matches("experiment=sweep", run));
  EXPECT_TRUE(Matches("experiment=sweep-edited", run));
  EXPECT_FALSE(Matches("experiment=other", run));
  EXPECT_FALSE(Matches("experiment!=sweep-edited", run));
  EXPECT_TRUE(Matches("experiment!=other", run));
}

TEST(FilterTest, NoMatchNamesTheFilterAndWhatItSearched) {
  EXPECT_EQ(Filter::Parse("workers>=64", "--only").NoMatch("the 12 runs of quickstart"),
            "--only workers>=64 matches none of the 12 runs of quickstart");
}

// ---- error paths of filter.cc follow: each names the column and shows a caret

struct BadFilter {
  std::string text;
  std::string message;
  std::string caret;
};

// Test names show the filter text.
void PrintTo(const BadFilter& bad, std::ostream* out) { *out << "'" << bad.text << "'"; }

class FilterErrorTest : public ::testing::TestWithParam<BadFilter> {};

TEST_P(FilterErrorTest, NamesTheColumnAndPointsAtIt) {
  const BadFilter& bad = GetParam();
  try {
    Filter::Parse(bad.text, "--only");
    FAIL() << "parsed " << bad.text;
  } catch (const FilterError& e) {
    EXPECT_EQ(std::string(e.what()), "--only: " + bad.message);
    EXPECT_EQ(e.excerpt(), bad.text + "\n" + bad.caret + "\n");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Filter, FilterErrorTest,
    ::testing::Values(
        BadFilter{"architecture=ps,workers>=", "column 26: expected a value after '>='",
                  "                         ^"},
        BadFilter{"workers>=,status=failed", "column 10: expected a value after '>='", "         ^"},
        BadFilter{"", "column 1: expected a filter term, got nothing", "^"},
        BadFilter{"workers=1,", "column 11: expected a filter term after ','", "          ^"},
        BadFilter{"worker=1", "column 1: unknown key 'worker', did you mean 'workers'?", "^"},
        BadFilter{"workers~1", "column 8: expected '=', '!=', '<', '<=', '>' or '>=' after 'workers', got '~'",
                  "       ^"},
        BadFilter{"ring", "column 1: expected KEY=VALUE or a run-key prefix (hexadecimal digits), got 'ring'",
                  "^"},
        BadFilter{"workers=four", "column 9: workers must be an integer, got \"four\"", "        ^"},
        BadFilter{"learning_rate>fast", "column 15: learning_rate must be a number, got \"fast\"",
                  "              ^"},
        BadFilter{"architecture=rnig", "column 14: architecture must be one of \"ring\", \"mpi\", \"ps\", \"p2p\", "
                                       "got \"rnig\"",
                  "             ^"},
        BadFilter{"status=done", "column 8: status must be one of \"pending\", \"running\", \"complete\", "
                                 "\"failed\", \"interrupted\", got \"done\"",
                  "       ^"},
        BadFilter{"overlap=yes", "column 9: overlap must be true, false, on or off, got \"yes\"", "        ^"},
        BadFilter{"architecture<ps", "column 13: architecture takes '=' or '!=', got '<'", "            ^"},
        BadFilter{"workers>=2|4", "column 11: '|' lists values for '=' and '!=' only", "          ^"},
        BadFilter{"hidden='128,32", "column 8: this quote is never closed", "       ^"},
        BadFilter{"hidden='128' x", "column 14: expected ',' between terms, got 'x'", "             ^"},
        BadFilter{"key=3fz", "column 5: key must be a prefix of hexadecimal digits, got \"3fz\"", "    ^"},
        BadFilter{"=ps", "column 1: expected a key or a run-key prefix, got '='", "^"}));

}  // namespace
}  // namespace dmlbench
