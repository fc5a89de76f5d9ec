// Tests of orchestrator/model/performance_model: the `--fix` arguments as
// FixedParameters, and each way one is refused.
#include "orchestrator/model/performance_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dmlbench {
namespace {

TEST(ParseFixedParametersTest, ANameOrANameAndScopeThenTheLastEqualsSignAndANumber) {
  const FixedParameters fixed =
      ParseFixedParameters({"cpu_while_waiting=0.067", "wire_factor ps k=1=1.0", "cpu_per_byte_s=2e-10"});
  ASSERT_EQ(fixed.size(), 3u);
  EXPECT_EQ(fixed.at("cpu_while_waiting"), 0.067);
  EXPECT_EQ(fixed.at("wire_factor ps k=1"), 1.0);
  EXPECT_EQ(fixed.at("cpu_per_byte_s"), 2e-10);
  EXPECT_TRUE(ParseFixedParameters({}).empty());
}

// ---- error paths of ParseFixedParameters follow ----------------------------

std::string Refusal(const std::vector<std::string>& fixes) {
  try {
    ParseFixedParameters(fixes);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "parsed";
}

TEST(ParseFixedParametersTest, AnArgumentThatIsNotNameEqualsNumberIsRefused) {
  const std::string expected = "\": expected NAME=VALUE or \"NAME SCOPE=VALUE\" with a number, "
                               "e.g. --fix cpu_while_waiting=0.067 or --fix \"wire_factor ps k=1=1.0\"";
  EXPECT_EQ(Refusal({"cpu_per_byte_s"}), "--fix \"cpu_per_byte_s" + expected);
  EXPECT_EQ(Refusal({"cpu_per_byte_s="}), "--fix \"cpu_per_byte_s=" + expected);
  EXPECT_EQ(Refusal({"=1"}), "--fix \"=1" + expected);
  EXPECT_EQ(Refusal({"cpu_per_byte_s=1e-9s"}), "--fix \"cpu_per_byte_s=1e-9s" + expected);
}

TEST(ParseFixedParametersTest, AKeyGivenTwiceIsRefused) {
  EXPECT_EQ(Refusal({"combine_exponent=3", "combine_exponent=4"}), "--fix combine_exponent given twice");
}

}  // namespace
}  // namespace dmlbench
