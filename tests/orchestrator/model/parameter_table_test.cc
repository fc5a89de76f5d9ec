// Tests of orchestrator/model/parameter_table: each transform and its
// inverse, packing the free coordinates among the settled parameters, the
// intervals mapped to values, reading a stored fit back, and the refusals
// of holding.
#include "orchestrator/model/parameter_table.h"

#include <gtest/gtest.h>

#include <cmath>

#include "orchestrator/model/fitting.h"

namespace dmlbench {
namespace {

ParameterTable Table() {
  return ParameterTable("toy", {{"cost_s", "s", "", Identified::kMeasured},
                                {"per_byte_s", "s/byte", "", Identified::kFitted, Transform::kLog, 1e-9},
                                {"exponent", "1", "", Identified::kFitted, Transform::kLogAboveOne}});
}

// A table with a share and a parameter per scope.
ParameterTable Scoped() {
  return ParameterTable("toy", {{"share", "1", "fast", Identified::kFitted, Transform::kLogit},
                                {"share", "1", "slow", Identified::kFitted, Transform::kLogit},
                                {"factor", "1", "", Identified::kFitted, Transform::kLog}});
}

TEST(ParameterTableTest, EachTransformAndItsInverse) {
  const ParameterTable table = Table();
  EXPECT_DOUBLE_EQ(table.Value(1, 0), 1e-9);
  EXPECT_DOUBLE_EQ(table.Value(1, std::log(3.0)), 3e-9);
  EXPECT_DOUBLE_EQ(table.Value(2, 0), 2);
  for (std::size_t j : {1u, 2u}) {
    for (double value : {1.5, 7.0, 40.0}) {
      const double v = j == 1 ? value * 1e-9 : value;
      EXPECT_NEAR(table.Value(j, table.Coordinate(j, v)), v, 1e-12 * v) << j;
    }
  }
}

TEST(ParameterTableTest, AShareIsTheLogisticOfItsCoordinate) {
  const ParameterTable table = Scoped();
  EXPECT_EQ(table.Value(0, 0), 0.5);
  EXPECT_DOUBLE_EQ(table.Value(0, std::log(3.0)), 0.75);
  for (double share : {0.01, 0.3, 0.99}) EXPECT_NEAR(table.Value(1, table.Coordinate(1, share)), share, 1e-12);
}

TEST(ParameterTableTest, FindsAParameterByNameAndScope) {
  const ParameterTable table = Scoped();
  EXPECT_EQ(table.Index("share", "slow"), 1u);
  EXPECT_EQ(table.Index("factor"), 2u);
  EXPECT_EQ(table.Index("share"), table.size());
  EXPECT_EQ(table.Key(1), "share slow");
  SettledRows settled = table.Held({{"share slow", 0.25}});
  EXPECT_EQ(SettledValue(settled, 1), 0.25);
  EXPECT_FALSE(SettledValue(settled, 0).has_value());
}

TEST(ParameterTableTest, PacksTheFreeCoordinatesAmongTheSettledParameters) {
  const ParameterTable table = Table();
  SettledRows settled = table.Held({{"exponent", 3}});
  settled[0] = ModelParameterRow{"cost_s", 0.25, 0.2, 0.3, "s", "fitted", ""};
  EXPECT_EQ(table.FreeKeys(settled), std::vector<std::string>{"per_byte_s"});
  const std::vector<double> values = table.Values(settled, {std::log(2.0)});
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0], 0.25);
  EXPECT_DOUBLE_EQ(values[1], 2e-9);
  EXPECT_EQ(values[2], 3);
}

TEST(ParameterTableTest, RowsMapEachIntervalToValuesAndKeepTheSettledRows) {
  const ParameterTable table = Table();
  SettledRows settled = table.Held({{"cost_s", 0.5}});
  LeastSquaresFit fit;
  fit.coefficients = {{"per_byte_s", 0, 0.1, -0.2, 0.2}, {"exponent", std::log(2.0), 0.1, 0, std::log(4.0)}};
  const std::vector<ModelParameterRow> rows = table.Rows(settled, fit);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].source, "fixed");
  EXPECT_EQ(rows[0].value, 0.5);
  EXPECT_FALSE(rows[0].ci_low.has_value());
  EXPECT_EQ(rows[1].name, "per_byte_s");
  EXPECT_EQ(rows[1].unit, "s/byte");
  EXPECT_EQ(rows[1].source, "fitted");
  EXPECT_DOUBLE_EQ(rows[1].value, 1e-9);
  EXPECT_DOUBLE_EQ(*rows[1].ci_low, 1e-9 * std::exp(-0.2));
  EXPECT_DOUBLE_EQ(*rows[1].ci_high, 1e-9 * std::exp(0.2));
  EXPECT_DOUBLE_EQ(rows[2].value, 3);
  EXPECT_DOUBLE_EQ(*rows[2].ci_low, 2);
  EXPECT_DOUBLE_EQ(*rows[2].ci_high, 5);

  ModelFitRecord stored;
  stored.parameters = rows;
  const std::vector<double> values = table.ValuesOf(stored);
  EXPECT_EQ(values, (std::vector<double>{0.5, rows[1].value, 3}));
}

// ---- error paths of parameter_table.cc follow ------------------------------------

TEST(ParameterTableTest, HoldingAnUnknownParameterNamesThoseTheModelHas) {
  try {
    Table().Held({{"wire_factor ring", 1}});
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "toy has no parameter \"wire_factor ring\" to hold; it has cost_s, per_byte_s, exponent");
  }
}

TEST(ParameterTableTest, HoldingAValueOutsideItsRangeIsRefused) {
  try {
    Table().Held({{"per_byte_s", -1}});
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "toy: cannot hold per_byte_s at -1: it must be above 0");
  }
  try {
    Table().Held({{"exponent", 1}});
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "toy: cannot hold exponent at 1: it must be above 1");
  }
}

TEST(ParameterTableTest, HoldingAShareOutsideZeroToOneIsRefused) {
  for (double share : {0.0, 1.0}) {
    try {
      Scoped().Held({{"share fast", share}});
      FAIL() << share;
    } catch (const ModelError& e) {
      EXPECT_EQ(std::string(e.what()), "toy: cannot hold share fast at " + std::string(share == 0 ? "0" : "1") +
                                           ": it must be above 0 and below 1");
    }
  }
}

TEST(ParameterTableTest, ReadingAFitWithoutTheParameterNamesIt) {
  ModelFitRecord fit;
  fit.model = "toy";
  fit.fit_id = 7;
  EXPECT_THROW(Table().ValuesOf(fit), ModelError);
}

}  // namespace
}  // namespace dmlbench
