#include "tests/orchestrator/model/trainer_bucket_plan.h"

#include "trainer/bucketed_exchange.h"
#include "trainer/mlp.h"

namespace dmlbench::testing {

std::vector<TrainerBucket> TrainerBucketPlan(const std::vector<int>& sizes, bool overlap, std::size_t bucket_bytes,
                                             std::size_t partition_bytes) {
  // As the trainer sets up a worker (trainer.cc): the gradient cut into row
  // blocks only with overlap, then the buckets over those slices.
  Mlp mlp(sizes, 1);
  if (overlap) mlp.SliceGradients(bucket_bytes);
  std::vector<Slice> slices;
  for (const GradientSlice& slice : mlp.gradient_slices()) slices.push_back({slice.offset, slice.count});
  std::vector<TrainerBucket> plan;
  for (const Bucket& bucket : PlanBuckets(slices, overlap, bucket_bytes, partition_bytes)) {
    plan.push_back({bucket.slice.count * sizeof(float), bucket.first_slice});
  }
  return plan;
}

int TrainerMaxSlicesPerLayer() { return kMaxSlicesPerLayer; }

}  // namespace dmlbench::testing
