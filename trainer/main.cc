// dmlbench-trainer: one MPI rank of the distributed trainer. Parses the
// command line, loads the data, trains (trainer.h) and writes the events
// stream (schemas/trainer-events.md). Bad input gives one line on stderr from
// rank 0 and exit status 1 on every rank, without aborting MPI.
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "trainer/dataset.h"
#include "trainer/events.h"
#include "trainer/poll.h"
#include "trainer/trainer.h"

#ifdef DMLBENCH_SANITIZE_BUILD
// Sanitizer build: no leak report at exit. Open MPI's allocations that
// outlive MPI_Finalize sit in plug-ins it has unloaded, where LeakSanitizer
// can neither attribute nor suppress them; ranks started over ssh get no
// ASAN_OPTIONS from the test, so the default lives in the binary.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace dmlbench {
namespace {

constexpr const char* kProgram = "dmlbench-trainer";

int Fail(int rank, const std::string& message) {
  if (rank == 0) std::cerr << kProgram << ": error: " << message << std::endl;
  return 1;
}

int Run(int argc, char** argv, std::chrono::steady_clock::time_point started) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  TrainerOptions options;
  std::string dataset_dir;
  std::int64_t synthetic = 0;
  std::string events_path;
  bool no_evaluate = false;
  bool quiet = false;

  CLI::App app("One rank of the distributed MLP trainer; run it under mpirun.", kProgram);
  app.add_option("--architecture", options.architecture,
                 "Gradient exchange: ring, mpi, ps or p2p")->capture_default_str();
  app.add_option("--servers", options.servers, "ps: number of server ranks (the last ranks)")
      ->capture_default_str();
  auto* dataset_option =
      app.add_option("--dataset", dataset_dir, "Directory with the MNIST-format IDX files");
  auto* synthetic_option = app.add_option(
      "--synthetic", synthetic, "Use N generated training samples instead of --dataset");
  dataset_option->excludes(synthetic_option);
  app.add_option("--epochs", options.epochs)->capture_default_str();
  app.add_option("--batch-size", options.batch_size, "Local batch per worker")
      ->capture_default_str();
  app.add_option("--hidden", options.hidden, "Hidden layer widths, e.g. 128,32")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--learning-rate", options.learning_rate)->capture_default_str();
  app.add_option("--seed", options.seed, "Seeds the model and every epoch's shuffle")
      ->capture_default_str();
  app.add_option("--max-iterations-per-epoch", options.max_iterations_per_epoch,
                 "Cap on iterations per epoch (0 = none)")->capture_default_str();
  app.add_flag("--overlap", options.overlap, "Exchange layers while the backward pass runs");
  app.add_option("--bucket-bytes", options.bucket_bytes, "Overlap: fuse layers up to this size")
      ->capture_default_str();
  app.add_option("--events", events_path, "JSON Lines events file, - for standard output");
  app.add_option("--timeline", options.timeline_path, "Chrome trace file of every rank");
  app.add_flag("--no-evaluate", no_evaluate, "Skip the test-set evaluation after each epoch");
  app.add_flag("--quiet", quiet, "No progress lines on standard error");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    return Fail(rank, error.what());
  }
  options.evaluate = !no_evaluate;

  // Checks that depend on the command line only: every rank agrees alone.
  if (dataset_dir.empty() && synthetic_option->count() == 0)
    return Fail(rank, "give the training data: --dataset DIR or --synthetic N");
  if (synthetic_option->count() && synthetic < 1)
    return Fail(rank, "--synthetic must be at least 1 sample, got " + std::to_string(synthetic));
  if (std::string problem = ValidateOptions(options); !problem.empty()) return Fail(rank, problem);

  // Each rank reads its own copy of the data: one bad copy stops the job.
  std::optional<Dataset> dataset;
  std::string error;
  try {
    dataset = dataset_dir.empty() ? MakeSyntheticDataset(synthetic, options.seed)
                                  : LoadDataset(dataset_dir);
  } catch (const DatasetError& e) {
    error = e.what();
  }
  if (std::string first = FirstError(error); !first.empty()) return Fail(rank, first);

  std::unique_ptr<EventWriter> events;
  error.clear();
  if (rank == 0 && !events_path.empty()) {
    try {
      events = std::make_unique<EventWriter>(events_path);
    } catch (const EventsError& e) {
      error = e.what();
    }
  }
  if (std::string first = FirstError(error); !first.empty()) return Fail(rank, first);

  auto finish = [&](const std::string& status, const std::string& message,
                    std::optional<std::string> checksum) {
    const std::int64_t peak_rss = PeakRssBytesOverRanks();
    const double total_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (events) {
      RunEndEvent end{status, message, checksum, total_s, peak_rss};
      events->Write(ToJson(end));
    }
    if (rank == 0 && !quiet && status == "ok")
      std::cerr << "  done in " << std::fixed << std::setprecision(1) << total_s
                << " s; parameter checksum " << checksum.value_or("") << "; peak RSS "
                << std::setprecision(1) << double(peak_rss) / 1e6 << " MB (largest rank)"
                << std::endl;
  };

  TrainResult result;
  try {
    TrainerOutputs outputs;
    if (rank == 0) {
      outputs.events = events.get();
      if (!quiet) outputs.progress = &std::cerr;
    }
    result = Train(options, *dataset, outputs);
  } catch (const std::invalid_argument& e) {
    // Thrown identically on every rank before training starts.
    finish("error", e.what(), std::nullopt);
    return Fail(rank, e.what());
  }
  finish("ok", "", rank == 0 ? std::optional(result.parameter_checksum) : std::nullopt);
  return 0;
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  int provided = 0;
  dmlbench::SetTransportDefaults();
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  int status = 1;
  try {
    status = dmlbench::Run(argc, argv, started);
  } catch (const std::exception& e) {
    // A failure on some ranks only: the others may wait for them forever.
    std::cerr << "dmlbench-trainer: error: " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
