// The 1-worker trainer against the sgemm bound, side by side in one process,
// for the paper's net (784-128-32-10, batch 100, one BLAS thread) on
// Fashion-MNIST. Each repetition measures, one after the other:
//  (a) the bound: exactly the sgemm calls of one training iteration (3
//      forward, 5 backward: the first layer needs no input gradient), with
//      Mlp's shapes, transposes and buffer layout, OpenBLAS, one thread, run
//      back to back as the iteration runs them, and nothing else;
//  (b) the trainer: the real training loop (Train(), one MPI rank, `ring`),
//      2 epochs, of which the second is timed;
//  (c) where the trainer's time beyond the bound goes: an epoch of the same
//      steps in place (gather, Mlp::Forward/Backward with a profile attached,
//      the SGD update), over the same batches.
// The first repetition is warm-up; the figures are medians of the others, per
// iteration, wall clock and (for the ratio) CPU time too, since on a shared
// machine the wall clock also counts other processes' time slices.
// With --dataset-cache DIR the data comes as a sweep's runs get it: the
// decoded copy mapped from the cache (filled first if empty), not decoded
// into this process's memory.
//   bench_trainer_throughput [--reps 8] [--dataset DIR] [--dataset-cache DIR]
#include <cblas.h>
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "trainer/bucketed_exchange.h"
#include "trainer/dataset.h"
#include "trainer/dataset_cache.h"
#include "trainer/mlp.h"
#include "trainer/poll.h"
#include "trainer/trainer.h"

namespace dmlbench {
namespace {

constexpr int kBatch = 100;
constexpr float kLearningRate = 0.1f;   // the run behind bench/README.md's throughput figure
constexpr std::uint64_t kSeed = 1;
const std::vector<int> kSizes = {784, 128, 32, 10};

using bench::WallSeconds;
double ThreadCpuSeconds() { return bench::CpuSeconds(bench::CpuOf::kThisThread); }

// The sgemm calls of one Mlp iteration, exactly as Mlp::Forward and
// Mlp::Backward make them (beta = 0), on buffers laid out as Mlp's: one flat
// parameter and one flat gradient buffer, an activation buffer per layer.
// Each layer's delta has a buffer of its own, and the last layer's never
// changes, so that no value feeds back into itself over the iterations (and
// drifts towards denormals, which would slow the sgemm).
class GemmIteration {
 public:
  GemmIteration(const Mlp& model, const float* x) : layers_(model.layers()), x_(x) {
    parameters_.assign(model.parameters().begin(), model.parameters().end());
    gradients_.assign(parameters_.size(), 0.0f);
    for (const MlpLayer& layer : layers_) {
      activations_.emplace_back(std::size_t(kBatch) * layer.outputs, 0.0f);
      deltas_.emplace_back(std::size_t(kBatch) * layer.outputs, 0.01f);
    }
  }

  double Flops() const {
    double flops = 0;
    for (std::size_t l = 0; l < layers_.size(); ++l)
      flops += 2.0 * kBatch * layers_[l].inputs * layers_[l].outputs * (l == 0 ? 2 : 3);
    return flops;
  }

  void Run() {
    const float* input = x_;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const MlpLayer& layer = layers_[l];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBatch, layer.outputs, layer.inputs,
                  1.0f, input, layer.inputs, &parameters_[layer.offset], layer.outputs, 0.0f,
                  activations_[l].data(), layer.outputs);
      input = activations_[l].data();
    }
    for (int l = int(layers_.size()) - 1; l >= 0; --l) {
      const MlpLayer& layer = layers_[l];
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, layer.inputs, layer.outputs, kBatch,
                  1.0f, l == 0 ? x_ : activations_[l - 1].data(), layer.inputs,
                  deltas_[l].data(), layer.outputs, 0.0f, &gradients_[layer.offset],
                  layer.outputs);
      if (l > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kBatch, layer.inputs, layer.outputs,
                    1.0f, deltas_[l].data(), layer.outputs, &parameters_[layer.offset],
                    layer.outputs, 0.0f, deltas_[l - 1].data(), layer.inputs);
    }
  }

 private:
  const std::vector<MlpLayer>& layers_;
  const float* x_;
  std::vector<float> parameters_, gradients_;
  std::vector<std::vector<float>> activations_, deltas_;
};

// One repetition's figures, seconds per iteration.
struct Repetition {
  double bound_wall = 0, bound_cpu = 0;
  double trainer_wall = 0, trainer_cpu = 0;
  double gather = 0, sgd_update = 0, in_place_total = 0;
  MlpProfile mlp;
};

// (a) `iterations` runs of one iteration's sgemm calls.
void MeasureBound(const Mlp& model, const float* x, std::int64_t iterations, Repetition& rep) {
  GemmIteration gemms(model, x);
  const double wall = WallSeconds(), cpu = ThreadCpuSeconds();
  for (std::int64_t i = 0; i < iterations; ++i) gemms.Run();
  rep.bound_cpu = (ThreadCpuSeconds() - cpu) / double(iterations);
  rep.bound_wall = (WallSeconds() - wall) / double(iterations);
}

// (b) the trainer's second epoch (the first is warm-up).
void MeasureTrainer(const Dataset& dataset, Repetition& rep) {
  TrainerOptions options;   // ring, batch 100, 128,32
  options.learning_rate = kLearningRate;
  options.seed = kSeed;
  options.epochs = 2;
  options.evaluate = false;
  const TrainResult result = Train(options, dataset, {});
  const EpochEvent& epoch = result.epochs.back();
  rep.trainer_wall = epoch.wall_s / double(epoch.iterations);
  rep.trainer_cpu = epoch.ranks[0].cpu_s / double(epoch.iterations);
}

// (c) an epoch of the trainer's steps in place, each timed where it runs.
void MeasureSteps(const Dataset& dataset, Mlp& model, std::int64_t epoch, Repetition& rep) {
  const std::vector<std::uint32_t> permutation =
      EpochPermutation(dataset.train.count, kSeed, epoch);
  const std::int64_t iterations = IterationsPerEpoch(dataset.train.count, kBatch, 1, 0);
  std::vector<float> pixels(std::size_t(kBatch) * dataset.features);
  std::vector<std::uint8_t> labels(kBatch);
  model.SetProfile(&rep.mlp);
  double gather = 0, update = 0;
  const double start = WallSeconds();
  for (std::int64_t i = 0; i < iterations; ++i) {
    const double t0 = WallSeconds();
    GatherBatch(dataset.train, dataset.features, WorkerShard(permutation, i, kBatch, 1, 0),
                pixels.data(), labels.data());
    const double t1 = WallSeconds();
    model.Forward(pixels.data(), labels.data(), kBatch);
    model.Backward([](int) {});
    const double t2 = WallSeconds();
    ApplySgd(model.parameters(), model.gradients(), 1, kLearningRate);
    update += WallSeconds() - t2;
    gather += t1 - t0;
  }
  rep.in_place_total = (WallSeconds() - start) / double(iterations);
  model.SetProfile(nullptr);
  const double n = double(iterations);
  rep.gather = gather / n;
  rep.sgd_update = update / n;
  for (double* step : {&rep.mlp.gemm_s, &rep.mlp.bias_relu_s, &rep.mlp.softmax_loss_s,
                       &rep.mlp.bias_gradient_s, &rep.mlp.relu_derivative_s})
    *step /= n;
}

template <typename Field>
double MedianOf(const std::vector<Repetition>& reps, Field field) {
  std::vector<double> values;
  for (const Repetition& rep : reps) values.push_back(field(rep));
  return bench::Summarize(values).median;
}

int Run(int reps, const std::string& dataset_dir, const std::string& cache_dir) {
  if (!cache_dir.empty()) LoadDatasetCached(dataset_dir, cache_dir);   // fills an empty cache
  const Dataset dataset = cache_dir.empty() ? LoadDataset(dataset_dir) : LoadDatasetCached(dataset_dir, cache_dir);
  const std::int64_t iterations = IterationsPerEpoch(dataset.train.count, kBatch, 1, 0);
  Mlp model(kSizes, kBatch);   // (c)'s model; (a) borrows its initial parameters
  model.Initialize(kSeed);
  std::vector<float> x(std::size_t(kBatch) * dataset.features);
  std::vector<std::uint8_t> labels(kBatch);
  GatherBatch(dataset.train, dataset.features,
              WorkerShard(EpochPermutation(dataset.train.count, kSeed, 1), 0, kBatch, 1, 0),
              x.data(), labels.data());
  const double flops = GemmIteration(model, x.data()).Flops();

  std::vector<Repetition> measured;
  for (int r = 0; r <= reps; ++r) {
    Repetition rep;
    MeasureBound(model, x.data(), iterations, rep);
    MeasureTrainer(dataset, rep);
    MeasureSteps(dataset, model, r + 1, rep);
    std::printf("rep %d%s: bound %.1f us, trainer %.1f us, steps in place %.1f us\n", r,
                r == 0 ? " (warm-up)" : "", rep.bound_wall * 1e6, rep.trainer_wall * 1e6,
                rep.in_place_total * 1e6);
    if (r > 0) measured.push_back(rep);
  }

  auto median = [&](double Repetition::*field) {
    return MedianOf(measured, [field](const Repetition& rep) { return rep.*field; });
  };
  auto median_mlp = [&](double MlpProfile::*field) {
    return MedianOf(measured, [field](const Repetition& rep) { return rep.mlp.*field; });
  };
  const double bound = median(&Repetition::bound_wall);
  const double trainer = median(&Repetition::trainer_wall);
  const double bound_cpu = median(&Repetition::bound_cpu);
  const double trainer_cpu = median(&Repetition::trainer_cpu);
  std::printf("\n%s, batch %d, %lld iterations per epoch; medians of %d repetitions, "
              "microseconds per iteration\n",
              "784-128-32-10", kBatch, static_cast<long long>(iterations), reps);
  std::printf("%-44s %9s %9s %12s\n", "", "wall us", "CPU us", "samples/s");
  std::printf("%-44s %9.1f %9.1f %12.0f   (%.1f GFLOP/s)\n", "(a) sgemm bound: the iteration's 8 sgemm",
              bound * 1e6, bound_cpu * 1e6, kBatch / bound, flops / bound / 1e9);
  std::printf("%-44s %9.1f %9.1f %12.0f\n", "(b) trainer, 1 worker (ring)", trainer * 1e6,
              trainer_cpu * 1e6, kBatch / trainer);
  std::printf("%-44s %9.3f %9.3f\n", "bound / trainer", bound / trainer, bound_cpu / trainer_cpu);

  // (c): the trainer's iteration = bound + what the same steps took in place
  // beyond it + the rest of the training loop (the exchange's bookkeeping,
  // clock reads, the loop), which is what the trainer took beyond the steps.
  const double gemm = median_mlp(&MlpProfile::gemm_s);
  struct Row {
    const char* what;
    double s;
  };
  const Row rows[] = {
      {"sgemm bound", bound},
      {"sgemm in the pass, beyond the bound", gemm - bound},
      {"gather batch (uint8 -> float)", median(&Repetition::gather)},
      {"bias + ReLU (forward)", median_mlp(&MlpProfile::bias_relu_s)},
      {"softmax + loss + logits' gradient", median_mlp(&MlpProfile::softmax_loss_s)},
      {"bias gradients", median_mlp(&MlpProfile::bias_gradient_s)},
      {"ReLU derivative (backward)", median_mlp(&MlpProfile::relu_derivative_s)},
      {"SGD update", median(&Repetition::sgd_update)},
  };
  double steps = 0;
  for (const Row& row : rows) steps += row.s;
  std::printf("\n(c) breakdown of the trainer's iteration%30s %9s\n", "us", "share");
  for (const Row& row : rows)
    std::printf("  %-64s %9.1f %8.1f%%\n", row.what, row.s * 1e6, 100 * row.s / trainer);
  std::printf("  %-64s %9.1f %8.1f%%\n", "other: the loop, the exchange (trainer - steps above)",
              (trainer - steps) * 1e6, 100 * (trainer - steps) / trainer);
  std::printf("  %-64s %9.1f\n", "(the steps above, run as one loop, took)",
              median(&Repetition::in_place_total) * 1e6);
  return 0;
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) {
  int reps = 8;
  std::string dataset_dir = DMLBENCH_DATASET_DIR;
  std::string cache_dir;
  CLI::App app("1-worker trainer vs the sgemm bound, with the breakdown of the rest");
  dmlbench::bench::AddRepetitions(app, &reps, 5, "--reps", "measured repetitions, after one of warm-up");
  app.add_option("--dataset", dataset_dir)->capture_default_str();
  app.add_option("--dataset-cache", cache_dir, "Map the decoded copy from this cache, as a sweep's runs do");
  CLI11_PARSE(app, argc, argv);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  const int status = dmlbench::Run(reps, dataset_dir, cache_dir);
  MPI_Finalize();
  return status;
}
