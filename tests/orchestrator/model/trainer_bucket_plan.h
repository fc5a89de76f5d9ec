// The trainer's bucket plan (Mlp::SliceGradients, PlanBuckets in
// trainer/bucketed_exchange.h) in plain numbers, for a test that holds it
// beside the model's (Buckets in orchestrator/model/physics.h). A file of
// its own: the trainer's headers and the model's name the same constant
// (kMaxSlicesPerLayer) and may not meet in one translation unit. Pure.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_MODEL_TRAINER_BUCKET_PLAN_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_MODEL_TRAINER_BUCKET_PLAN_H_

#include <cstddef>
#include <vector>

namespace dmlbench::testing {

struct TrainerBucket {
  std::size_t bytes = 0;
  int first_slice = 0;  // its exchange starts when backward has made this gradient slice
};

// What a worker exchanges per iteration, in order, for a network of layer
// widths `sizes` (inputs, hidden..., classes), as the trainer plans it.
std::vector<TrainerBucket> TrainerBucketPlan(const std::vector<int>& sizes, bool overlap, std::size_t bucket_bytes,
                                             std::size_t partition_bytes);

// trainer/mlp.h's kMaxSlicesPerLayer.
int TrainerMaxSlicesPerLayer();

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_MODEL_TRAINER_BUCKET_PLAN_H_
