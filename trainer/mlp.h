// Mlp: fully connected layers, ReLU, softmax cross-entropy, with ALL
// parameters in one contiguous fp32 buffer (layer l = weights then biases) and
// the gradient likewise, so communication moves the buffer or slices of it
// (whole layers, or row blocks of a layer's weights). Owns buffers and scratch
// (sized once); not thread-safe; one BLAS thread.
#ifndef DMLBENCH_TRAINER_MLP_H_
#define DMLBENCH_TRAINER_MLP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace dmlbench {

// Where Forward() and Backward() spend their time, seconds summed over the
// calls made while attached (Mlp::SetProfile), for the throughput benchmark's
// breakdown. Each step is timed where it runs, in the real pass.
struct MlpProfile {
  double gemm_s = 0;              // every cblas_sgemm, forward and backward
  double bias_relu_s = 0;         // forward: add the bias, ReLU on hidden layers
  double softmax_loss_s = 0;      // softmax, the loss and the logits' gradient
  double bias_gradient_s = 0;     // backward: column sums of delta
  double relu_derivative_s = 0;   // backward: delta through the ReLU's mask
};

struct MlpLayer {
  int inputs = 0;
  int outputs = 0;
  std::size_t offset = 0;   // into the flat buffers: weights (inputs x outputs, row-major), then biases
  std::size_t count = 0;    // inputs * outputs + outputs
};

// A run of the gradient buffer that Backward() finishes at once: rows
// [first_row, first_row + rows) of layer `layer`'s weight gradient (inputs x
// outputs, row-major, so the rows are contiguous), followed by the layer's
// bias gradient when the block holds the layer's last row.
struct GradientSlice {
  int layer = 0;
  int first_row = 0;
  int rows = 0;
  std::size_t offset = 0;   // into the flat buffers
  std::size_t count = 0;    // rows * outputs (+ outputs for the layer's last block)
};

// Most row blocks one layer is cut into. A block is a bucket of its own, a
// round of messages; on the emulated cluster (1 Gbit/s, 0.4 core) each
// message cost its sender 10-20 us of CPU, and with fc1 in 24 blocks the
// ring's ranks ran into their quota (12.1 ms per iteration against 5.9 ms
// with overlap off; 3 blocks: 6.0 ms).
constexpr int kMaxSlicesPerLayer = 4;

class Mlp {
 public:
  // `sizes` = inputs, hidden sizes..., classes (784,128,32,10: W = 104,938).
  // Forward/Backward accept batches of up to `max_batch` rows. Pins OpenBLAS
  // to one thread (process-wide).
  Mlp(const std::vector<int>& sizes, int max_batch);

  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  const std::vector<MlpLayer>& layers() const { return layers_; }
  // In buffer order; they tile it. One per layer until SliceGradients().
  const std::vector<GradientSlice>& gradient_slices() const { return slices_; }
  std::span<float> parameters() { return parameters_; }
  std::span<const float> parameters() const { return parameters_; }
  std::span<float> gradients() { return gradients_; }
  int max_batch() const { return max_batch_; }

  // Glorot-uniform weights and zero biases, a function of `seed` alone.
  void Initialize(std::uint64_t seed);

  // Runs `batch` rows of `x` (batch x inputs, row-major) through the net and
  // returns the SUM over the rows of the cross-entropy loss. Keeps the
  // activations for Backward() and borrows `x` until then.
  //
  // A layer cut into row blocks (SliceGradients) is multiplied block by
  // block, the last block first (the order their exchanges end), each
  // block's rows of the weights against the same columns of the input,
  // summed into the output. When `await` is given, Forward calls await(s)
  // (an index into gradient_slices()) before it first reads the parameters
  // under slice s: the caller may still be updating them until it returns.
  // That lets the next forward pass start while the last blocks of the
  // previous exchange are still on the wire.
  double Forward(const float* x, const std::uint8_t* labels, int batch,
                 const std::function<void(int slice)>& await = nullptr);

  // Cuts each layer's weight gradient into row blocks of at least
  // `min_bytes` each: r = ceil(min_bytes / (4 * outputs)) rows, so
  // n = clamp(inputs / r, 1, kMaxSlicesPerLayer) blocks whose row counts
  // differ by at most one; a layer smaller than min_bytes stays whole.
  // 784-128-32-10 with 16 KiB: fc1 in 4 blocks of 196 rows (100 KB), fc2
  // and fc3 whole; with 128 KiB, fc1 in 3 blocks of 261-262 rows.
  // Gradients are the same up to the GEMM's rounding.
  void SliceGradients(std::size_t min_bytes);

  // Gradient of the MEAN loss of the last Forward() into gradients(). Calls
  // slice_done(s) for s = last..0 (indexes into gradient_slices()) as soon as
  // slice s is final AND this pass no longer reads the parameters under it,
  // so the callee may start sending the gradient and may overwrite those
  // parameters.
  void Backward(const std::function<void(int slice)>& slice_done);

  // How many of the `batch` rows the net classifies as their label.
  // Overwrites the activations kept by Forward().
  std::int64_t CountCorrect(const float* x, const std::uint8_t* labels, int batch);

  // Forward() and Backward() add their steps' times to `profile` (borrowed;
  // null, the default, detaches: then no clock is read).
  void SetProfile(MlpProfile* profile) { profile_ = profile; }

 private:
  // Forward through every layer; the logits end in activations_.back().
  void Propagate(const float* x, int batch, const std::function<void(int slice)>& await);
  // With a profile attached: adds the time since the previous lap to `step`.
  void Lap(double MlpProfile::*step);

  std::vector<MlpLayer> layers_;
  std::vector<GradientSlice> slices_;
  int max_batch_;
  std::vector<float> parameters_;
  std::vector<float> gradients_;
  std::vector<std::vector<float>> activations_;   // per layer, batch x outputs (after ReLU)
  std::vector<float> delta_;                      // batch x widest output: dLoss/d(pre-activation)
  std::vector<float> delta_next_;
  const float* input_ = nullptr;
  int batch_ = 0;
  MlpProfile* profile_ = nullptr;
  double lap_start_s_ = 0;
};

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_MLP_H_
