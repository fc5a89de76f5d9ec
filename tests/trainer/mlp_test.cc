#include "trainer/mlp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace dmlbench {
namespace {

struct Batch {
  std::vector<float> x;
  std::vector<std::uint8_t> labels;
};

Batch RandomBatch(int rows, int features, int classes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch batch;
  for (int i = 0; i < rows * features; ++i) batch.x.push_back(float(rng() >> 40) / 16777216.0f);
  for (int i = 0; i < rows; ++i) batch.labels.push_back(static_cast<std::uint8_t>(rng() % classes));
  return batch;
}

TEST(Mlp, PaperNetHas104938ParametersInOneBuffer) {
  Mlp mlp({784, 128, 32, 10}, 100);
  EXPECT_EQ(mlp.parameters().size(), 104938u);
  EXPECT_EQ(mlp.gradients().size(), 104938u);
  ASSERT_EQ(mlp.layers().size(), 3u);
  std::size_t next = 0;
  const int shapes[3][2] = {{784, 128}, {128, 32}, {32, 10}};
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(mlp.layers()[l].offset, next) << "layer " << l;
    EXPECT_EQ(mlp.layers()[l].inputs, shapes[l][0]);
    EXPECT_EQ(mlp.layers()[l].outputs, shapes[l][1]);
    EXPECT_EQ(mlp.layers()[l].count, std::size_t(shapes[l][0] + 1) * shapes[l][1]);
    next += mlp.layers()[l].count;
  }
  EXPECT_EQ(next, 104938u);
}

TEST(Mlp, InitializationDependsOnTheSeedOnly) {
  Mlp a({20, 8, 3}, 4), b({20, 8, 3}, 4), c({20, 8, 3}, 4);
  a.Initialize(7);
  b.Initialize(7);
  c.Initialize(8);
  std::vector<float> pa(a.parameters().begin(), a.parameters().end());
  std::vector<float> pb(b.parameters().begin(), b.parameters().end());
  std::vector<float> pc(c.parameters().begin(), c.parameters().end());
  EXPECT_EQ(pa, pb);
  EXPECT_NE(pa, pc);
  // Glorot-uniform weights within +-sqrt(6 / (in + out)), zero biases.
  const float limit = std::sqrt(6.0f / 28.0f);
  for (int i = 0; i < 160; ++i) EXPECT_LE(std::fabs(pa[i]), limit) << "index " << i;
  for (int i = 160; i < 168; ++i) EXPECT_EQ(pa[i], 0.0f) << "index " << i;
}

TEST(Mlp, LossOfUniformLogitsIsLogClasses) {
  Mlp mlp({4, 3}, 2);  // all-zero parameters: every logit is 0
  Batch batch = RandomBatch(2, 4, 3, 1);
  EXPECT_NEAR(mlp.Forward(batch.x.data(), batch.labels.data(), 2), 2 * std::log(3.0), 1e-6);
}

// The analytic gradient of the mean loss against central differences of the
// loss, for every parameter of a small net (float forward pass: eps = 1e-3
// keeps truncation ~1e-6 and round-off ~1e-4 relative).
TEST(Mlp, GradientMatchesFiniteDifferences) {
  const int rows = 5;
  Mlp mlp({6, 5, 4, 3}, rows);
  mlp.Initialize(3);
  // Non-zero biases, so that bias gradients through the ReLUs are exercised.
  std::mt19937_64 rng(11);
  for (const MlpLayer& layer : mlp.layers())
    for (int j = 0; j < layer.outputs; ++j)
      mlp.parameters()[layer.offset + layer.count - layer.outputs + j] =
          float(rng() >> 40) / 16777216.0f * 0.2f;
  Batch batch = RandomBatch(rows, 6, 3, 5);

  mlp.Forward(batch.x.data(), batch.labels.data(), rows);
  mlp.Backward([](int) {});
  std::vector<float> analytic(mlp.gradients().begin(), mlp.gradients().end());

  const float eps = 1e-3f;
  for (std::size_t i = 0; i < analytic.size(); ++i) {
    float& p = mlp.parameters()[i];
    const float saved = p;
    p = saved + eps;
    double plus = mlp.Forward(batch.x.data(), batch.labels.data(), rows) / rows;
    p = saved - eps;
    double minus = mlp.Forward(batch.x.data(), batch.labels.data(), rows) / rows;
    p = saved;
    double numeric = (plus - minus) / (2.0 * (double(saved + eps) - double(saved)));
    EXPECT_NEAR(analytic[i], numeric, 1e-3 * std::fabs(numeric) + 2e-4) << "parameter " << i;
  }
}

TEST(Mlp, BackwardReportsLayersLastFirstAfterEachIsFinal) {
  Mlp mlp({10, 6, 4, 3}, 2);
  mlp.Initialize(1);
  Batch batch = RandomBatch(2, 10, 3, 2);
  mlp.Forward(batch.x.data(), batch.labels.data(), 2);
  std::vector<int> order;
  std::vector<std::vector<float>> seen;
  // Overwriting a layer's parameters in the callback must not change the
  // gradients of the layers below: the pass no longer reads them.
  mlp.Backward([&](int layer) {
    order.push_back(layer);
    const MlpLayer& shape = mlp.layers()[layer];
    auto grads = mlp.gradients().subspan(shape.offset, shape.count);
    seen.emplace_back(grads.begin(), grads.end());
    auto params = mlp.parameters().subspan(shape.offset, shape.count);
    std::fill(params.begin(), params.end(), 1e6f);
  });
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));

  Mlp fresh({10, 6, 4, 3}, 2);
  fresh.Initialize(1);
  fresh.Forward(batch.x.data(), batch.labels.data(), 2);
  fresh.Backward([](int) {});
  for (int i = 0; i < 3; ++i) {
    const MlpLayer& shape = fresh.layers()[2 - i];
    auto grads = fresh.gradients().subspan(shape.offset, shape.count);
    EXPECT_EQ(seen[i], std::vector<float>(grads.begin(), grads.end())) << "layer " << 2 - i;
  }
}

TEST(Mlp, SlicesCutEachLayersWeightsInRowBlocksOfAtLeastTheSize) {
  Mlp mlp({784, 128, 32, 10}, 1);
  ASSERT_EQ(mlp.gradient_slices().size(), 3u);  // one per layer until sliced
  mlp.SliceGradients(16 * 1024);
  const std::vector<GradientSlice>& slices = mlp.gradient_slices();
  // fc1: rows of 512 bytes, 32 rows per block at least: 24 blocks, at most 4.
  ASSERT_EQ(slices.size(), 4u + 1 + 1);
  std::size_t next = 0;
  for (std::size_t s = 0; s < slices.size(); ++s) {
    EXPECT_EQ(slices[s].offset, next) << "slice " << s;
    next += slices[s].count;
  }
  EXPECT_EQ(next, 104938u);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(slices[b].layer, 0);
    EXPECT_EQ(slices[b].first_row, 196 * b) << "block " << b;
    EXPECT_EQ(slices[b].rows, 196) << "block " << b;
  }
  EXPECT_EQ(slices[3].count, 196u * 128 + 128);  // and fc1's biases
  EXPECT_EQ(slices[4].layer, 1);
  EXPECT_EQ(slices[4].count, 4128u);  // fc2 (16,512 bytes) holds only 16 KiB / 128 = 128 rows
  EXPECT_EQ(slices[5].count, 330u);

  mlp.SliceGradients(200 * 1024);  // 400 rows at least: fc1 in 1 block
  ASSERT_EQ(mlp.gradient_slices().size(), 3u);
  mlp.SliceGradients(100 * 1024);  // 200 rows at least: 3 blocks of 261-262 rows
  ASSERT_EQ(mlp.gradient_slices().size(), 5u);
  EXPECT_EQ(mlp.gradient_slices()[0].rows, 261);
  EXPECT_EQ(mlp.gradient_slices()[2].rows, 262);
  mlp.SliceGradients(1);  // blocks of one row at least, but no more than 4 per layer
  ASSERT_EQ(mlp.gradient_slices().size(), 3u * kMaxSlicesPerLayer);
  mlp.SliceGradients(std::size_t{1} << 20);
  ASSERT_EQ(mlp.gradient_slices().size(), 3u);
  EXPECT_EQ(mlp.gradient_slices()[0].count, 100480u);
}

// In row blocks, backward hands on every block as soon as it is final, last
// first, with the gradient of the whole-layer pass, and no block of a layer
// before the pass has stopped reading that layer's parameters.
TEST(Mlp, BackwardReportsSlicesLastFirstWithTheGradientOfWholeLayers) {
  Mlp mlp({10, 6, 4, 3}, 2);
  mlp.Initialize(1);
  mlp.SliceGradients(48);  // fc1: 4 blocks of 2-3 rows; fc2: 2 blocks of 3 rows; fc3 whole
  ASSERT_EQ(mlp.gradient_slices().size(), 7u);
  Batch batch = RandomBatch(2, 10, 3, 2);
  mlp.Forward(batch.x.data(), batch.labels.data(), 2);
  std::vector<int> order;
  mlp.Backward([&](int s) {
    order.push_back(s);
    const GradientSlice& slice = mlp.gradient_slices()[s];
    auto params = mlp.parameters().subspan(slice.offset, slice.count);
    std::fill(params.begin(), params.end(), 1e6f);
  });
  EXPECT_EQ(order, (std::vector<int>{6, 5, 4, 3, 2, 1, 0}));

  Mlp whole({10, 6, 4, 3}, 2);
  whole.Initialize(1);
  whole.Forward(batch.x.data(), batch.labels.data(), 2);
  whole.Backward([](int) {});
  for (std::size_t i = 0; i < whole.gradients().size(); ++i)
    EXPECT_NEAR(mlp.gradients()[i], whole.gradients()[i], 1e-6f * std::fabs(whole.gradients()[i]))
        << "index " << i;
}

// A layer in row blocks is multiplied block by block, the last first; each
// block is awaited before its parameters are read, so a caller that writes
// them inside await (the exchange installing the new model) gets the
// forward pass of the new model.
TEST(Mlp, ForwardAwaitsEachSliceBeforeReadingItsParameters) {
  const std::vector<int> sizes = {10, 6, 4, 3};
  Mlp sliced(sizes, 2);
  sliced.Initialize(1);
  sliced.SliceGradients(48);  // fc1: 4 blocks, the last with the biases; fc2: 2 blocks; fc3 whole
  Mlp updated(sizes, 2);
  updated.Initialize(7);  // "the new model"
  Batch batch = RandomBatch(2, 10, 3, 2);
  std::vector<int> order;
  const double loss = sliced.Forward(batch.x.data(), batch.labels.data(), 2, [&](int s) {
    order.push_back(s);
    const GradientSlice& slice = sliced.gradient_slices()[s];
    std::copy_n(updated.parameters().begin() + std::ptrdiff_t(slice.offset), slice.count,
                sliced.parameters().begin() + std::ptrdiff_t(slice.offset));
  });
  // Layer by layer, each layer's blocks last first.
  EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 0, 5, 4, 6}));
  const double expected = updated.Forward(batch.x.data(), batch.labels.data(), 2);
  EXPECT_NEAR(loss, expected, 1e-6 * std::fabs(expected));

  // Without await the blocks give the unsliced pass up to rounding.
  Mlp whole(sizes, 2);
  whole.Initialize(1);
  sliced.Initialize(1);
  EXPECT_NEAR(sliced.Forward(batch.x.data(), batch.labels.data(), 2),
              whole.Forward(batch.x.data(), batch.labels.data(), 2), 1e-6);
}

TEST(Mlp, TrainingReducesLossAndCountsCorrect) {
  const int rows = 32;
  Mlp mlp({8, 16, 4}, rows);
  mlp.Initialize(9);
  // Label = index of the largest of the first 4 features: learnable.
  Batch batch = RandomBatch(rows, 8, 4, 13);
  for (int r = 0; r < rows; ++r) {
    const float* x = &batch.x[r * 8];
    batch.labels[r] = static_cast<std::uint8_t>(std::max_element(x, x + 4) - x);
  }
  const double first = mlp.Forward(batch.x.data(), batch.labels.data(), rows);
  for (int step = 0; step < 300; ++step) {
    mlp.Forward(batch.x.data(), batch.labels.data(), rows);
    mlp.Backward([](int) {});
    for (std::size_t i = 0; i < mlp.parameters().size(); ++i)
      mlp.parameters()[i] -= 0.5f * mlp.gradients()[i];
  }
  EXPECT_LT(mlp.Forward(batch.x.data(), batch.labels.data(), rows), 0.5 * first);
  EXPECT_GE(mlp.CountCorrect(batch.x.data(), batch.labels.data(), rows), 28);
}

TEST(Mlp, ProfileTimesEveryStepWithoutChangingTheResult) {
  const int rows = 50;
  Mlp plain({64, 32, 16, 10}, rows), profiled({64, 32, 16, 10}, rows);
  plain.Initialize(4);
  profiled.Initialize(4);
  Batch batch = RandomBatch(rows, 64, 10, 6);
  MlpProfile profile;
  profiled.SetProfile(&profile);
  for (int pass = 0; pass < 20; ++pass) {
    EXPECT_EQ(plain.Forward(batch.x.data(), batch.labels.data(), rows),
              profiled.Forward(batch.x.data(), batch.labels.data(), rows));
    plain.Backward([](int) {});
    profiled.Backward([](int) {});
  }
  EXPECT_TRUE(std::equal(plain.gradients().begin(), plain.gradients().end(),
                         profiled.gradients().begin()));
  for (double MlpProfile::*step :
       {&MlpProfile::gemm_s, &MlpProfile::bias_relu_s, &MlpProfile::softmax_loss_s,
        &MlpProfile::bias_gradient_s, &MlpProfile::relu_derivative_s})
    EXPECT_GT(profile.*step, 0.0);
  // Detached, the passes add nothing.
  const MlpProfile before = profile;
  profiled.SetProfile(nullptr);
  profiled.Forward(batch.x.data(), batch.labels.data(), rows);
  profiled.Backward([](int) {});
  EXPECT_EQ(profile.gemm_s, before.gemm_s);
  EXPECT_EQ(profile.softmax_loss_s, before.softmax_loss_s);
}

// Error paths of mlp.cc follow.

TEST(MlpErrors, BatchLargerThanMaxBatch) {
  Mlp mlp({4, 3}, 2);
  Batch batch = RandomBatch(3, 4, 3, 1);
  try {
    mlp.Forward(batch.x.data(), batch.labels.data(), 3);
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "Mlp: batch of 3 rows outside 1..2");
  }
}

TEST(MlpErrors, BadShape) {
  try {
    Mlp mlp({4, 0, 3}, 2);
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "Mlp: need at least 2 positive layer sizes and max_batch >= 1");
  }
}

}  // namespace
}  // namespace dmlbench
