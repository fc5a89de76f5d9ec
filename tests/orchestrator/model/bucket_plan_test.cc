// The model's bucket plan (Buckets in physics.h) against the trainer's own
// (Mlp::SliceGradients and PlanBuckets, trainer/): two implementations of
// one set of rules, held side by side across layer widths, bucket sizes and
// partition sizes, overlap on and off. The same buckets in the same order,
// of the same bytes (a part to within a float: the trainer's parts differ
// by one float, the model's are equal), each ready with the same slice: the
// buckets the trainer starts on one slice are ready at one share of the
// backward pass in the model, a lower slice later, slice 0 at its end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/model/physics.h"
#include "tests/orchestrator/model/trainer_bucket_plan.h"

namespace dmlbench {
namespace {

using testing::TrainerBucket;
using testing::TrainerBucketPlan;

std::string Label(const ModelConfig& config) {
  std::string label = "hidden=";
  for (int width : config.hidden) label += std::to_string(width) + ",";
  label.back() = ' ';
  return label + (config.overlap ? "overlap" : "whole") + " bucket_bytes=" + std::to_string(config.bucket_bytes) +
         " partition_bytes=" + std::to_string(config.partition_bytes);
}

TEST(BucketPlanTest, TheModelCutsTheGradientAsTheTrainerDoes) {
  EXPECT_EQ(static_cast<int>(kMaxSlicesPerLayer), testing::TrainerMaxSlicesPerLayer());
  int plans = 0;
  for (const std::vector<int>& hidden : std::vector<std::vector<int>>{{128, 32}, {256, 64}, {64}, {512, 256, 128},
                                                                       {100, 37, 5}, {2}}) {
    for (bool overlap : {false, true}) {
      for (std::int64_t bucket_bytes : {1, 48, 1000, 16 * 1024, 64 * 1024, 128 * 1024, 1 << 20, 1 << 30}) {
        for (std::int64_t partition_bytes : {0, 1000, 4098, 32 * 1024, 100 * 1024}) {
          ModelConfig config;
          config.hidden = hidden;
          config.overlap = overlap;
          config.bucket_bytes = bucket_bytes;
          config.partition_bytes = partition_bytes;
          std::vector<int> sizes = {kInputFeatures};
          sizes.insert(sizes.end(), hidden.begin(), hidden.end());
          sizes.push_back(kClassCount);
          const std::vector<TrainerBucket> trainer =
              TrainerBucketPlan(sizes, overlap, static_cast<std::size_t>(bucket_bytes),
                                static_cast<std::size_t>(partition_bytes));
          const std::vector<GradientBucket> model = Buckets(config);
          ++plans;
          ASSERT_EQ(model.size(), trainer.size()) << Label(config);
          const double tolerance = partition_bytes > 0 ? 4 : 0;
          for (std::size_t i = 0; i < model.size(); ++i) {
            EXPECT_NEAR(model[i].bytes, static_cast<double>(trainer[i].bytes), tolerance)
                << "mismatch at bucket " << i << " of " << Label(config);
            EXPECT_EQ(model[i].ready_fraction == 1.0, trainer[i].first_slice == 0)
                << "bucket " << i << " of " << Label(config) << ": ready at " << model[i].ready_fraction
                << " of backward, the trainer starts it with slice " << trainer[i].first_slice;
            if (i == 0) continue;
            if (trainer[i].first_slice == trainer[i - 1].first_slice) {
              EXPECT_EQ(model[i].ready_fraction, model[i - 1].ready_fraction)
                  << "buckets " << i - 1 << " and " << i << " of " << Label(config) << " start with one slice";
            } else {
              EXPECT_LT(trainer[i].first_slice, trainer[i - 1].first_slice) << Label(config);
              EXPECT_GT(model[i].ready_fraction, model[i - 1].ready_fraction)
                  << "bucket " << i << " of " << Label(config) << " starts with a lower slice than bucket " << i - 1;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(plans, 6 * 2 * 8 * 5);
}

}  // namespace
}  // namespace dmlbench
