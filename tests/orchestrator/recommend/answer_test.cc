// Tests of orchestrator/recommend/answer: money for people, equivalent
// candidates merged into one row that says what it stands for, the one line
// when every candidate meets the goal, and the answer's parts around them,
// on recommendations built by hand (no model, no database).
#include "orchestrator/recommend/answer.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

Catalog TwoTypes() {
  Catalog catalog;
  catalog.source_path = "types.toml";
  catalog.currency = "USD";
  catalog.prices = "made up";
  catalog.prices_as_of = "2026-12-05";
  catalog.types.resize(2);
  catalog.types[0].name = "cpu0.15-100mbit";
  catalog.types[1].name = "cpu0.15-1gbit";
  return catalog;
}

Estimate Candidate(const Catalog& catalog, int type, Architecture architecture, int workers, double total_s,
                   double cost) {
  Estimate e;
  e.config.architecture = architecture;
  e.config.workers = workers;
  e.config.batch_size = 100;
  e.type = &catalog.types[type];
  e.hosts = workers;
  e.epoch_s = total_s / 10;
  e.total_s = e.total_low_s = e.total_high_s = total_s;
  e.cost = e.cost_low = e.cost_high = cost;
  return e;
}

AnswerContext Context(const Catalog& catalog) {
  AnswerContext context;
  context.catalog = &catalog;
  context.goal.deadline_s = 1800;
  context.model = "corrected";
  context.fit_id = 7;
  context.samples = 60000;
  context.epochs = 10;
  return context;
}

// Six one-worker candidates (three allreduce schemes on two links) predict
// the same, and one two-worker candidate costs more.
Recommendation SixAlikeAndOne(const Catalog& catalog) {
  Recommendation result;
  for (int type = 0; type < 2; ++type) {
    for (Architecture a : {Architecture::kRing, Architecture::kMpi, Architecture::kP2p}) {
      result.ranked.push_back(Candidate(catalog, type, a, 1, 60.5, 4.675e-05));
    }
  }
  result.ranked.push_back(Candidate(catalog, 1, Architecture::kRing, 2, 40, 6.2e-05));
  result.candidates = 7;
  return result;
}

TEST(MoneyTest, KeepsTheDigitsThatMatterInTheCatalogsCurrency) {
  EXPECT_EQ(Money(4.675e-05, "USD"), "0.000047 USD");
  EXPECT_EQ(Money(0.0000996, "EUR"), "0.0001 EUR");
  EXPECT_EQ(Money(0.0471, "USD"), "0.047 USD");
  EXPECT_EQ(Money(0.5, "USD"), "0.5 USD");
  EXPECT_EQ(Money(12.346, "USD"), "12.35 USD");
  EXPECT_EQ(Money(1234.5, "USD"), "1234.50 USD");
  EXPECT_EQ(Money(0, "USD"), "0 USD");
  EXPECT_EQ(Amount(0.00012345), "0.00012");
}

TEST(MergeEquivalentTest, CandidatesOfTheSameTimeAndCostAreOneGroup) {
  const Catalog catalog = TwoTypes();
  const Recommendation result = SixAlikeAndOne(catalog);
  const std::vector<std::vector<std::size_t>> groups = MergeEquivalent(result);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(groups[1], (std::vector<std::size_t>{6}));
}

TEST(MergeEquivalentTest, ADifferentCostIsAnotherRow) {
  const Catalog catalog = TwoTypes();
  Recommendation result;
  result.ranked = {Candidate(catalog, 0, Architecture::kRing, 1, 60, 1.0),
                   Candidate(catalog, 1, Architecture::kRing, 1, 60, 1.0 + 1e-6)};
  EXPECT_EQ(MergeEquivalent(result).size(), 2u);
  // The same total and cost, but an interval of their own (scaled per scheme).
  result.ranked[1].cost = 1.0;
  result.ranked[1].total_high_s = 66;
  EXPECT_EQ(MergeEquivalent(result).size(), 2u);
}

TEST(EveryCandidateLineTest, SaysSoOnceWhenNoCandidateIsRuledOut) {
  const Catalog catalog = TwoTypes();
  Recommendation result = SixAlikeAndOne(catalog);
  Goal goal;
  goal.deadline_s = 1800;
  EXPECT_EQ(EveryCandidateLine(result, goal),
            "every one of the 7 candidates meets the deadline at its point estimate: the ranking is by cost alone");
  for (Estimate& e : result.ranked) e.meets_at_upper_end = true;
  EXPECT_EQ(EveryCandidateLine(result, goal),
            "every one of the 7 candidates meets the deadline at its point estimate and at its interval's upper "
            "end: the ranking is by cost alone");
  result.candidates = 8;  // one ruled out
  EXPECT_EQ(EveryCandidateLine(result, goal), "");
}

TEST(AnswerTest, OneRowStandsForTheSixAlikeAndSaysWhichTheyAre) {
  const Catalog catalog = TwoTypes();
  const std::vector<AnswerPart> parts = Answer(SixAlikeAndOne(catalog), Context(catalog));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].text,
            "fit 7 of corrected; catalog types.toml: prices in USD, made up, as of 2026-12-05\n"
            "7 candidates (configurations x instance types), 10 epochs of 60000 samples; goal: finish within 1800 s "
            "for the least cost; total = epochs x the steady epoch time (start-up and the first epoch's warm-up not "
            "counted), cost = hosts x price per hour x total\n\n");
  EXPECT_EQ(parts[1].text,
            "every one of the 7 candidates meets the deadline at its point estimate: the ranking is by cost alone\n");
  ASSERT_TRUE(parts[1].table);
  const TextTable& table = *parts[1].table;
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.headers.back(), "stands for");
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"1", "ring w=1 b=100", "cpu0.15-100mbit", "1", "6.05", "",
                                                     "60.5", "", "0.000047 USD", "", "no interval", "calibrated",
                                                     "6 candidates alike"}));
  EXPECT_EQ(table.rows[1][0], "7") << "ranked as its first candidate";
  EXPECT_EQ(table.rows[1][8], "0.000062 USD");
  EXPECT_EQ(table.rows[1].back(), "");
  EXPECT_EQ(parts[2].text.substr(0, parts[2].text.find("\n\n")),
            "  #1 stands for 6 candidates of the same predicted time and cost: ring w=1 b=100 on cpu0.15-100mbit, "
            "cpu0.15-1gbit; mpi w=1 b=100 on cpu0.15-100mbit, cpu0.15-1gbit; p2p w=1 b=100 on cpu0.15-100mbit, "
            "cpu0.15-1gbit");
  EXPECT_NE(parts[2].text.find("at the point estimate: #1 ring w=1 b=100 on cpu0.15-100mbit, 60.5 s, 0.000047 USD\n"),
            std::string::npos);
  EXPECT_NE(parts[2].text.find("at the interval's upper end: no candidate meets the goal (fit 7 has no interval)\n"),
            std::string::npos);
}

TEST(AnswerTest, TopCountsRowsNotCandidates) {
  const Catalog catalog = TwoTypes();
  AnswerContext context = Context(catalog);
  context.top = 1;
  const std::vector<AnswerPart> parts = Answer(SixAlikeAndOne(catalog), context);
  ASSERT_TRUE(parts[1].table);
  EXPECT_EQ(parts[1].table->rows.size(), 1u);
  EXPECT_NE(parts[2].text.find("  and 1 more rows that meet the goal (--top, --json)\n"), std::string::npos);
}

TEST(AnswerTest, RuledOutCandidatesAreCountedByReason) {
  const Catalog catalog = TwoTypes();
  Recommendation result = SixAlikeAndOne(catalog);
  ModelConfig missed;
  missed.architecture = Architecture::kPs;
  missed.servers = 1;
  missed.workers = 4;
  missed.batch_size = 100;
  result.ruled_out = {{std::nullopt, &catalog.types[0], "not calibrated: no run of fit 7 on it", 0},
                      {missed, &catalog.types[1], "misses the deadline: 2000 s predicted, 1800 s allowed", 1.1}};
  result.candidates = 9;
  const std::vector<AnswerPart> parts = Answer(result, Context(catalog));
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[1].text, "");
  EXPECT_EQ(parts[3].text, "\nruled out: 2 (misses the deadline 1, type not usable 1); whole types first, then near "
                           "misses:\n");
  ASSERT_TRUE(parts[3].table);
  EXPECT_EQ(parts[3].table->rows[1],
            (std::vector<std::string>{"ps k=1 w=4 b=100", "cpu0.15-1gbit",
                                      "misses the deadline: 2000 s predicted, 1800 s allowed"}));
}

}  // namespace
}  // namespace dmlbench
