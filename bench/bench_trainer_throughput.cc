// Single-worker training throughput against the GEMM bound. Trains the
// paper's net (784-128-32-10, batch 100, one BLAS thread) on Fashion-MNIST
// through the real training loop (one MPI rank, `ring`) and prints samples/s
// per epoch and their median; then times the 8 sgemm calls of one iteration
// (3 forward, 5 backward: the first layer needs no input gradient) with
// OpenBLAS and with Eigen, and reports the bound "every FLOP at the measured
// sgemm rate" and the ratio of the median to it. On a shared machine the
// wall clock also counts other processes' time slices, so the training
// thread's CPU time is reported beside it.
//   bench_trainer_throughput [--epochs 7] [--dataset DIR]
#include <cblas.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <eigen3/Eigen/Dense>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "trainer/dataset.h"
#include "trainer/poll.h"
#include "trainer/trainer.h"

namespace {

// CPU time of the calling thread, seconds: unlike the wall clock, it does not
// count the time slices other processes take on a shared machine.
double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

struct Gemm {
  int m, n, k;
  bool transpose_a, transpose_b;
};

// Row-major C (m x n) = op(A) op(B), the shapes Mlp uses for batch 100.
const Gemm kIteration[] = {
    {100, 128, 784, false, false}, {100, 32, 128, false, false}, {100, 10, 32, false, false},
    {32, 10, 100, true, false},    {100, 32, 10, false, true},   {128, 32, 100, true, false},
    {100, 128, 32, false, true},   {784, 128, 100, true, false},
};

template <typename F>
double MedianSeconds(F&& run, int repeats) {
  for (int i = 0; i < repeats / 4 + 1; ++i) run();  // warm up
  std::vector<double> samples;
  for (int trial = 0; trial < 15; ++trial) {
    const double start = ThreadCpuSeconds();
    for (int i = 0; i < repeats; ++i) run();
    samples.push_back((ThreadCpuSeconds() - start) / repeats);
  }
  std::nth_element(samples.begin(), samples.begin() + 7, samples.end());
  return samples[7];
}

struct GemmTotals {
  double openblas_s = 0, eigen_s = 0, flops = 0;
};

GemmTotals TimeGemms() {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  GemmTotals totals;
  std::printf("%-22s %12s %10s %12s %10s\n", "sgemm m x n x k", "OpenBLAS us", "GFLOP/s",
              "Eigen us", "GFLOP/s");
  for (const Gemm& g : kIteration) {
    std::vector<float> a(std::size_t(g.m) * g.k, 0.5f), b(std::size_t(g.k) * g.n, 0.25f),
        c(std::size_t(g.m) * g.n);
    const double flops = 2.0 * g.m * g.n * g.k;
    const double blas = MedianSeconds(
        [&] {
          cblas_sgemm(CblasRowMajor, g.transpose_a ? CblasTrans : CblasNoTrans,
                      g.transpose_b ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.0f, a.data(),
                      g.transpose_a ? g.m : g.k, b.data(), g.transpose_b ? g.k : g.n, 0.0f,
                      c.data(), g.n);
        },
        200);
    Eigen::Map<Matrix> ma(a.data(), g.transpose_a ? g.k : g.m, g.transpose_a ? g.m : g.k);
    Eigen::Map<Matrix> mb(b.data(), g.transpose_b ? g.n : g.k, g.transpose_b ? g.k : g.n);
    Eigen::Map<Matrix> mc(c.data(), g.m, g.n);
    const double eigen = MedianSeconds(
        [&] {
          if (g.transpose_a)
            mc.noalias() = ma.transpose() * mb;
          else if (g.transpose_b)
            mc.noalias() = ma * mb.transpose();
          else
            mc.noalias() = ma * mb;
        },
        200);
    char shape[64];
    std::snprintf(shape, sizeof shape, "%d x %d x %d%s%s", g.m, g.n, g.k, g.transpose_a ? " (A^T)" : "",
                  g.transpose_b ? " (B^T)" : "");
    std::printf("%-22s %12.2f %10.1f %12.2f %10.1f\n", shape, blas * 1e6, flops / blas / 1e9,
                eigen * 1e6, flops / eigen / 1e9);
    totals.openblas_s += blas;
    totals.eigen_s += eigen;
    totals.flops += flops;
  }
  return totals;
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = 7;
  std::string dataset_dir = DMLBENCH_DATASET_DIR;
  CLI::App app("Single-worker trainer throughput vs the sgemm bound");
  app.add_option("--epochs", epochs)->capture_default_str();
  app.add_option("--dataset", dataset_dir)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  int provided = 0;
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  const dmlbench::Dataset dataset = dmlbench::LoadDataset(dataset_dir);
  dmlbench::TrainerOptions options;   // ring, batch 100, 128,32
  options.learning_rate = 0.1f;       // the run behind README.md's throughput figure
  options.epochs = epochs;
  options.evaluate = false;
  const double cpu_start = ThreadCpuSeconds();
  dmlbench::TrainResult result = dmlbench::Train(options, dataset, {});
  const double cpu_s = ThreadCpuSeconds() - cpu_start;

  std::vector<double> throughput;
  std::printf("epoch  wall_s  samples/s  forward_s  backward_s  update_s\n");
  for (const dmlbench::EpochEvent& e : result.epochs) {
    throughput.push_back(double(e.samples) / e.wall_s);
    std::printf("%5d %7.3f %10.0f %10.3f %11.3f %9.3f\n", e.epoch, e.wall_s, throughput.back(),
                e.ranks[0].forward_s, e.ranks[0].backward_s, e.ranks[0].update_s);
  }
  std::sort(throughput.begin(), throughput.end());
  const double median = throughput[throughput.size() / 2];
  double wall_s = 0;
  std::int64_t samples = 0;
  for (const dmlbench::EpochEvent& e : result.epochs) wall_s += e.wall_s, samples += e.samples;
  const double cpu_throughput = double(samples) / cpu_s;
  std::printf("training thread: %.3f s CPU for %.3f s wall (%.0f samples per CPU second)\n",
              cpu_s, wall_s, cpu_throughput);

  const GemmTotals gemm = TimeGemms();
  const double bound = 100 / gemm.openblas_s;
  std::printf("sgemm per iteration (thread CPU time): OpenBLAS %.1f us (%.1f GFLOP/s), "
              "Eigen %.1f us (%.1f GFLOP/s)\n",
              gemm.openblas_s * 1e6, gemm.flops / gemm.openblas_s / 1e9, gemm.eigen_s * 1e6,
              gemm.flops / gemm.eigen_s / 1e9);
  std::printf("GEMM bound (OpenBLAS) %.0f samples/s\n", bound);
  std::printf("wall clock: median of %d epochs %.0f samples/s, ratio to the bound %.2f\n", epochs,
              median, median / bound);
  std::printf("CPU time:   %.0f samples per CPU second, ratio to the bound %.2f\n", cpu_throughput,
              cpu_throughput / bound);
  MPI_Finalize();
  return 0;
}
