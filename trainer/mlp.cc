#include "trainer/mlp.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>

#include "trainer/avx2_clone.h"

namespace dmlbench {
namespace {

// The elementwise steps of the passes, on row-major batch x width blocks.

// out[r][j] = max(0, out[r][j] + bias[j]), or without the max when !relu.
DMLBENCH_AVX2_CLONE void AddBias(float* out, const float* bias, int rows, int width, bool relu) {
  for (int row = 0; row < rows; ++row) {
    float* y = out + std::size_t(row) * width;
    if (relu) {
      for (int j = 0; j < width; ++j) y[j] = std::max(0.0f, y[j] + bias[j]);
    } else {
      for (int j = 0; j < width; ++j) y[j] += bias[j];
    }
  }
}

// sums[j] = the sum over the rows of delta[r][j], row 0 first.
DMLBENCH_AVX2_CLONE void ColumnSums(const float* delta, int rows, int width, float* sums) {
  std::fill_n(sums, width, 0.0f);
  for (int row = 0; row < rows; ++row) {
    const float* d = delta + std::size_t(row) * width;
    for (int j = 0; j < width; ++j) sums[j] += d[j];
  }
}

// delta[i] = 0 where the ReLU's output was not positive.
DMLBENCH_AVX2_CLONE void ReluMask(float* delta, const float* activations, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) delta[i] = activations[i] > 0.0f ? delta[i] : 0.0f;
}

}  // namespace

Mlp::Mlp(const std::vector<int>& sizes, int max_batch) : max_batch_(max_batch) {
  if (sizes.size() < 2 || max_batch < 1 ||
      std::any_of(sizes.begin(), sizes.end(), [](int size) { return size < 1; }))
    throw std::invalid_argument("Mlp: need at least 2 positive layer sizes and max_batch >= 1");
  openblas_set_num_threads(1);
  std::size_t offset = 0;
  int widest = 0;   // of the layers' outputs: the input's delta is never formed
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    MlpLayer layer;
    layer.inputs = sizes[l];
    layer.outputs = sizes[l + 1];
    layer.offset = offset;
    layer.count = std::size_t(layer.inputs) * layer.outputs + layer.outputs;
    offset += layer.count;
    layers_.push_back(layer);
    activations_.emplace_back(std::size_t(max_batch) * layer.outputs);
    widest = std::max(widest, layer.outputs);
  }
  parameters_.assign(offset, 0.0f);
  gradients_.assign(offset, 0.0f);
  for (std::size_t l = 0; l < layers_.size(); ++l)
    slices_.push_back(GradientSlice{int(l), 0, layers_[l].inputs, layers_[l].offset,
                                    layers_[l].count});
  delta_.resize(std::size_t(max_batch) * widest);
  delta_next_.resize(delta_.size());
}

void Mlp::SliceGradients(std::size_t min_bytes) {
  slices_.clear();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const MlpLayer& layer = layers_[l];
    const std::size_t row_bytes = sizeof(float) * std::size_t(layer.outputs);
    const std::size_t min_rows = std::max<std::size_t>(1, (min_bytes + row_bytes - 1) / row_bytes);
    const std::size_t rows = std::size_t(layer.inputs);
    const std::size_t blocks =
        std::clamp<std::size_t>(rows / min_rows, 1, std::size_t(kMaxSlicesPerLayer));
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t begin = rows * b / blocks, end = rows * (b + 1) / blocks;
      GradientSlice slice;
      slice.layer = int(l);
      slice.first_row = int(begin);
      slice.rows = int(end - begin);
      slice.offset = layer.offset + begin * std::size_t(layer.outputs);
      slice.count = (end - begin) * std::size_t(layer.outputs) +
                    (b + 1 == blocks ? std::size_t(layer.outputs) : 0);
      slices_.push_back(slice);
    }
  }
}

void Mlp::Initialize(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (const MlpLayer& layer : layers_) {
    const float limit = std::sqrt(6.0f / float(layer.inputs + layer.outputs));
    float* weights = &parameters_[layer.offset];
    const std::size_t weight_count = std::size_t(layer.inputs) * layer.outputs;
    for (std::size_t i = 0; i < weight_count; ++i) {
      // 24 random bits -> [0, 1): exact in fp32 and the same on every platform.
      float unit = float(rng() >> 40) * (1.0f / 16777216.0f);
      weights[i] = (2.0f * unit - 1.0f) * limit;
    }
    std::fill_n(weights + weight_count, layer.outputs, 0.0f);
  }
}

void Mlp::Lap(double MlpProfile::*step) {
  if (!profile_) return;
  const double now_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (step) profile_->*step += now_s - lap_start_s_;
  lap_start_s_ = now_s;
}

void Mlp::Propagate(const float* x, int batch, const std::function<void(int slice)>& await) {
  if (batch < 1 || batch > max_batch_)
    throw std::invalid_argument("Mlp: batch of " + std::to_string(batch) +
                                " rows outside 1.." + std::to_string(max_batch_));
  Lap(nullptr);
  const float* input = x;
  std::size_t first = 0;  // the layer's first slice: slices_ tile the buffer in order
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const MlpLayer& layer = layers_[l];
    const float* weights = &parameters_[layer.offset];
    const float* bias = weights + std::size_t(layer.inputs) * layer.outputs;
    float* out = activations_[l].data();
    std::size_t end = first;
    while (end < slices_.size() && slices_[end].layer == int(l)) ++end;
    // out (batch x outputs) = input (batch x inputs) . weights (inputs x outputs),
    // as the sum over the layer's row blocks b of input[:, rows b] . weights[rows b, :].
    float beta = 0.0f;
    for (std::size_t s = end; s-- > first;) {
      const GradientSlice& block = slices_[s];
      if (await) {
        Lap(&MlpProfile::gemm_s);
        await(int(s));
        Lap(nullptr);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, layer.outputs, block.rows, 1.0f,
                  input + block.first_row, layer.inputs,
                  weights + std::size_t(block.first_row) * layer.outputs, layer.outputs, beta, out,
                  layer.outputs);
      beta = 1.0f;
    }
    first = end;
    Lap(&MlpProfile::gemm_s);
    AddBias(out, bias, batch, layer.outputs, /*relu=*/l + 1 < layers_.size());
    Lap(&MlpProfile::bias_relu_s);
    input = out;
  }
}

double Mlp::Forward(const float* x, const std::uint8_t* labels, int batch,
                    const std::function<void(int slice)>& await) {
  Propagate(x, batch, await);
  input_ = x;
  batch_ = batch;
  // Softmax cross-entropy; delta_ = (softmax - one_hot) / batch, the
  // gradient of the mean loss with respect to the logits.
  const int classes = layers_.back().outputs;
  const float* logits = activations_.back().data();
  const float inverse_batch = 1.0f / float(batch);
  double loss = 0;
  for (int row = 0; row < batch; ++row) {
    const float* z = logits + std::size_t(row) * classes;
    float* d = &delta_[std::size_t(row) * classes];
    const float peak = *std::max_element(z, z + classes);
    float sum = 0;
    for (int j = 0; j < classes; ++j) {
      d[j] = std::exp(z[j] - peak);
      sum += d[j];
    }
    const int label = labels[row];
    loss += double(std::log(sum)) + double(peak) - double(z[label]);
    const float scale = inverse_batch / sum;
    for (int j = 0; j < classes; ++j) d[j] *= scale;
    d[label] -= inverse_batch;
  }
  Lap(&MlpProfile::softmax_loss_s);
  return loss;
}

void Mlp::Backward(const std::function<void(int slice)>& slice_done) {
  const int batch = batch_;
  Lap(nullptr);
  int s = int(slices_.size()) - 1;
  for (int l = int(layers_.size()) - 1; l >= 0; --l) {
    const MlpLayer& layer = layers_[l];
    const float* input = l == 0 ? input_ : activations_[l - 1].data();
    const float* weights = &parameters_[layer.offset];
    float* weight_grad = &gradients_[layer.offset];
    float* bias_grad = weight_grad + std::size_t(layer.inputs) * layer.outputs;

    if (l > 0) {
      // delta for the layer below: (delta . W^T), through the ReLU's mask.
      // First, so that no block of this layer is handed on while W is read.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, layer.inputs, layer.outputs,
                  1.0f, delta_.data(), layer.outputs, weights, layer.outputs, 0.0f,
                  delta_next_.data(), layer.inputs);
      Lap(&MlpProfile::gemm_s);
      ReluMask(delta_next_.data(), input, std::size_t(batch) * layer.inputs);
      Lap(&MlpProfile::relu_derivative_s);
    }
    // db = column sums of delta
    ColumnSums(delta_.data(), batch, layer.outputs, bias_grad);
    Lap(&MlpProfile::bias_gradient_s);
    // dW (inputs x outputs) = input^T (inputs x batch) . delta (batch x outputs),
    // one block of rows at a time, the last block (with the biases) first.
    for (; s >= 0 && slices_[s].layer == l; --s) {
      const GradientSlice& slice = slices_[s];
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, slice.rows, layer.outputs, batch,
                  1.0f, input + slice.first_row, layer.inputs, delta_.data(), layer.outputs, 0.0f,
                  weight_grad + std::size_t(slice.first_row) * layer.outputs, layer.outputs);
      Lap(&MlpProfile::gemm_s);
      slice_done(s);
      Lap(nullptr);   // the callee's time is not the pass's
    }
    if (l > 0) delta_.swap(delta_next_);
  }
}

std::int64_t Mlp::CountCorrect(const float* x, const std::uint8_t* labels, int batch) {
  Propagate(x, batch, nullptr);
  const int classes = layers_.back().outputs;
  std::int64_t correct = 0;
  for (int row = 0; row < batch; ++row) {
    const float* z = &activations_.back()[std::size_t(row) * classes];
    correct += (std::max_element(z, z + classes) - z) == labels[row];
  }
  return correct;
}

}  // namespace dmlbench
