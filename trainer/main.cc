// dmlbench-trainer: one MPI rank of the distributed trainer. Parses the
// command line, loads the data, trains (trainer.h) and writes the events
// stream (schemas/trainer-events.md). With `--run "OPTIONS"` given several
// times, one job trains several runs one after the other, each with the
// options outside any --run and its own, each its own run_start ... run_end;
// a run that fails ends the job. Bad input gives one line on stderr from
// rank 0 and exit status 1 on every rank, without aborting MPI. Alone, with
// --dataset-sha256 DIR, it prints a dataset's checksum without starting MPI.
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/dataset.h"
#include "trainer/dataset_cache.h"
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
constexpr std::string_view kDatasetSha256Option = "--dataset-sha256";
constexpr std::string_view kRunOption = "--run";
using Clock = std::chrono::steady_clock;

// Prints the message as the program's error; returns exit status 1.
int Fail(const std::string& message) {
  std::cerr << kProgram << ": error: " << message << std::endl;
  return 1;
}

// In an MPI job: rank 0 alone prints the message; every rank returns 1.
int Fail(int rank, const std::string& message) {
  if (rank == 0) Fail(message);
  return 1;
}

// What the command line asks for.
struct CommandLine {
  TrainerOptions options;
  std::string dataset_dir;                  // --dataset; "" with --synthetic
  std::string dataset_cache;                // --dataset-cache; "" = decode the files every run
  std::optional<std::int64_t> synthetic;    // --synthetic: generated training samples
  std::string events_path;                  // "" = no events, "-" = standard output
  bool quiet = false;                       // no progress lines
};

// Declares the options of `app`; parsing writes them into `line`, and each
// --run's value into `runs`.
void AddOptions(CLI::App& app, CommandLine& line, std::vector<std::string>& runs) {
  TrainerOptions& options = line.options;
  app.add_option("--architecture", options.architecture,
                 "Gradient exchange: ring, mpi, ps or p2p")->capture_default_str();
  app.add_option("--servers", options.servers, "ps: number of server ranks (the last ranks)")
      ->capture_default_str();
  auto* dataset_option =
      app.add_option("--dataset", line.dataset_dir, "Directory with the MNIST-format IDX files");
  auto* synthetic_option = app.add_option(
      "--synthetic", line.synthetic, "Use N generated training samples instead of --dataset");
  dataset_option->excludes(synthetic_option);
  app.add_option("--dataset-cache", line.dataset_cache,
                 "Directory where the --dataset files are kept decoded, once per host, for the next runs")
      ->needs(dataset_option);
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
  app.add_option("--warmup-iterations", options.warmup_iterations,
                 "Cap on the iterations of epoch 1, the warm-up, with 2 or more epochs (0 = none)")
      ->capture_default_str();
  app.add_option("--await-cpu-quota-s", options.await_cpu_quota_s,
                 "Before epoch 2, wait at most this long until every rank's cgroup has a CPU quota "
                 "in force, and fail if one has not (0 = no wait)")
      ->capture_default_str();
  app.add_flag("--overlap", options.overlap,
               "Exchange layers while the backward pass runs, and start the next forward pass "
               "while the exchange ends");
  app.add_option("--bucket-bytes", options.bucket_bytes, "Overlap: fuse layers up to this size")
      ->capture_default_str();
  app.add_option("--partition-bytes", options.partition_bytes,
                 "Cut every exchange larger than this into parts sent one after the other "
                 "(a parameter server returns a part while the next comes in; 0 = never)")
      ->capture_default_str();
  app.add_flag("--pulls-in-turn", options.pulls_in_turn,
               "ps with 1 server, whole exchange: the server sends the new model to one worker at a "
               "time, so the first workers compute and push while it still sends to the rest");
  app.add_option("--events", line.events_path, "JSON Lines events file, - for standard output");
  app.add_option("--timeline", options.timeline_path, "Chrome trace file of every rank");
  app.add_flag_callback("--no-evaluate", [&options] { options.evaluate = false; },
                        "Skip the test-set evaluation after each epoch");
  app.add_flag("--quiet", line.quiet, "No progress lines on standard error");
  app.add_option(std::string(kRunOption), runs,
                 "Options of one run (\"--architecture ring --epochs 3 ...\"); given several times, the job "
                 "trains each run in turn, with the options outside --run and its own")
      ->take_all()
      ->allow_extra_args(false);
}

// The problem with `line` in one line ("" if none). Depends on the command
// line only, so every rank reaches the same verdict without communicating.
std::string CheckCommandLine(const CommandLine& line) {
  if (line.dataset_dir.empty() && !line.synthetic)
    return "give the training data: --dataset DIR or --synthetic N";
  if (line.synthetic && *line.synthetic < 1)
    return "--synthetic must be at least 1 sample, got " + std::to_string(*line.synthetic);
  return ValidateOptions(line.options);
}

// This rank's copy of the training data into `dataset`; the reason it could
// not be loaded, or "".
std::string LoadData(const CommandLine& line, std::optional<Dataset>* dataset) {
  try {
    if (line.synthetic)
      *dataset = MakeSyntheticDataset(*line.synthetic, line.options.seed);
    else if (!line.dataset_cache.empty())
      *dataset = LoadDatasetCached(line.dataset_dir, line.dataset_cache);
    else
      *dataset = LoadDataset(line.dataset_dir);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

// Opens the events file at `path` ("" = none) into `events`; the reason it
// could not be opened, or "".
std::string OpenEvents(const std::string& path, std::unique_ptr<EventWriter>* events) {
  if (path.empty()) return "";
  try {
    *events = std::make_unique<EventWriter>(path);
  } catch (const EventsError& e) {
    return e.what();
  }
  return "";
}

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// When rank 0 passed the steps before training (run_end's phases).
struct StartTimes {
  Clock::time_point started;      // the process's start, before MPI_Init
  Clock::time_point initialised;  // MPI_Init returned
  Clock::time_point loaded;       // every rank has its data
  Clock::time_point training;     // Train was called (the events file is open)
};

// The phases of a successful run, the last one the rest of `total_wall_s`.
RunPhases PhasesOf(const StartTimes& times, const TrainResult& result, double total_wall_s) {
  RunPhases phases;
  phases.mpi_init_s = Seconds(times.started, times.initialised);
  phases.dataset_load_s = Seconds(times.initialised, times.loaded);
  phases.setup_s = Seconds(times.loaded, times.training) + result.setup_s;
  phases.epochs_s = result.epochs_s;
  phases.teardown_s = std::max(0.0, total_wall_s - phases.mpi_init_s - phases.dataset_load_s -
                                        phases.setup_s - phases.epochs_s);
  return phases;
}

// Collective: completes `end` with the run's wall time since `times.started`,
// its phases after a successful `result` (null = none) and the peak memory
// over ranks, writes it to `events` (null = none) and, after a successful
// run, the one-line summary to `summary` (null = none).
void Finish(RunEndEvent end, const StartTimes& times, const TrainResult* result,
            EventWriter* events, std::ostream* summary) {
  end.peak_rss_bytes = PeakRssBytesOverRanks();
  end.total_wall_s = Seconds(times.started, Clock::now());
  if (result) end.phases = PhasesOf(times, *result, end.total_wall_s);
  if (events) events->Write(ToJson(end));
  if (summary && end.status == "ok")
    *summary << "  done in " << std::fixed << std::setprecision(1) << end.total_wall_s
             << " s; parameter checksum " << end.parameter_checksum.value_or("") << "; peak RSS "
             << std::setprecision(1) << double(end.peak_rss_bytes) / 1e6 << " MB (largest rank)"
             << std::endl;
}

// The command line without its --run options ("--run X" and "--run=X").
std::vector<std::string> WithoutRuns(int argc, char** argv) {
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kRunOption) {
      ++i;
    } else if (!(arg.starts_with(kRunOption) && arg.size() > kRunOption.size() &&
                 arg[kRunOption.size()] == '=')) {
      words.emplace_back(arg);
    }
  }
  return words;
}

// A --run value's words, split at blanks.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t at = 0;
  while ((at = text.find_first_not_of(" \t\n", at)) != std::string_view::npos) {
    const std::size_t end = std::min(text.find_first_of(" \t\n", at), text.size());
    words.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return words;
}

// Parses `words` (the program name first) with the trainer's options into
// `line`; the problem in one line, or "".
std::string ParseRun(const std::vector<std::string>& words, CommandLine* line) {
  CLI::App app("", kProgram);
  std::vector<std::string> nested;
  AddOptions(app, *line, nested);
  std::vector<char*> argv;
  for (const std::string& word : words) argv.push_back(const_cast<char*>(word.c_str()));
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    return "--help is the job's option, not a run's";
  } catch (const CLI::ParseError& error) {
    return error.what();
  }
  if (!nested.empty()) return std::string(kRunOption) + " cannot hold another " + std::string(kRunOption);
  return CheckCommandLine(*line);
}

// The runs the command line asks for, into `runs`: one, or one per --run.
// Returns the exit status when the process stops here (help printed: 0; bad
// input: 1, after rank 0 said why).
std::optional<int> ParseRuns(int argc, char** argv, int rank, std::vector<CommandLine>* runs) {
  CLI::App app("One rank of the distributed MLP trainer; run it under mpirun.", kProgram);
  app.footer("Alone, without mpirun: " + std::string(kProgram) + " " +
             std::string(kDatasetSha256Option) +
             " DIR prints the dataset checksum a run with --dataset DIR reports.");
  CommandLine line;
  std::vector<std::string> values;
  AddOptions(app, line, values);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    return Fail(rank, error.what());
  }
  if (values.empty()) {
    if (std::string problem = CheckCommandLine(line); !problem.empty()) return Fail(rank, problem);
    runs->push_back(std::move(line));
    return std::nullopt;
  }
  const std::vector<std::string> common = WithoutRuns(argc, argv);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::vector<std::string> words = common;
    for (std::string& word : Words(values[i])) words.push_back(std::move(word));
    CommandLine run;
    std::string problem = ParseRun(words, &run);
    if (problem.empty() && run.events_path != line.events_path)
      problem = "--events is the job's option, not a run's: give it outside --run";
    if (!problem.empty())
      return Fail(rank, std::string(kRunOption) + " " + std::to_string(i + 1) + ": " + problem);
    runs->push_back(std::move(run));
  }
  return std::nullopt;
}

// What the data of `line` is: runs with the same key share one copy.
std::string DataKey(const CommandLine& line) {
  if (line.synthetic)
    return "synthetic " + std::to_string(*line.synthetic) + " " + std::to_string(line.options.seed);
  return line.dataset_dir + "\n" + line.dataset_cache;
}

int Run(int argc, char** argv, StartTimes times) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<CommandLine> runs;
  if (std::optional<int> status = ParseRuns(argc, argv, rank, &runs)) return *status;

  // Each rank reads its own copy of the data: one bad copy stops the job.
  // Runs of the same data after the first use the copy loaded already.
  std::optional<Dataset> dataset;
  std::string dataset_key;
  std::unique_ptr<EventWriter> events;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CommandLine& line = runs[i];
    if (i > 0) times.started = times.initialised = Clock::now();  // a later run has no MPI_Init
    if (!dataset || DataKey(line) != dataset_key) {
      dataset.reset();
      if (std::string first = FirstError(LoadData(line, &dataset)); !first.empty())
        return Fail(rank, first);
      dataset_key = DataKey(line);
    }
    times.loaded = Clock::now();
    if (i == 0) {
      if (std::string first = FirstError(rank == 0 ? OpenEvents(line.events_path, &events) : "");
          !first.empty())
        return Fail(rank, first);
    }

    TrainerOutputs outputs;
    if (rank == 0) {
      outputs.events = events.get();
      if (!line.quiet) outputs.progress = &std::cerr;
    }
    TrainResult result;
    times.training = Clock::now();
    // Thrown identically on every rank: std::invalid_argument before training
    // starts, QuotaWaitError before epoch 2. It ends the job: the runs after
    // it are not trained.
    const auto failed = [&](const std::exception& e) {
      Finish({"error", e.what(), std::nullopt}, times, nullptr, events.get(), nullptr);
      return Fail(rank, e.what());
    };
    try {
      result = Train(line.options, *dataset, outputs);
    } catch (const std::invalid_argument& e) {
      return failed(e);
    } catch (const QuotaWaitError& e) {
      return failed(e);
    }
    Finish({"ok", "", rank == 0 ? std::optional(result.parameter_checksum) : std::nullopt}, times,
           &result, events.get(), outputs.progress);
  }
  return 0;
}

// Whether the command line asks for the dataset checksum mode: decided before
// MPI is initialised, because that mode must run where no MPI job is started.
bool AsksForDatasetSha256(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kDatasetSha256Option ||
        (arg.starts_with(kDatasetSha256Option) && arg[kDatasetSha256Option.size()] == '='))
      return true;
  }
  return false;
}

// `--dataset-sha256 DIR` and nothing else: prints DatasetSha256(DIR), the
// run_start.dataset_sha256 of a run with `--dataset DIR`, as one line on
// standard output. Never touches MPI.
int PrintDatasetSha256(int argc, char** argv) {
  CLI::App app("Prints the dataset checksum a run with --dataset DIR reports; needs no MPI.",
               kProgram);
  std::string directory;
  app.add_option(std::string(kDatasetSha256Option), directory,
                 "Directory with the MNIST-format IDX files")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    return Fail(error.what());
  }
  try {
    std::cout << DatasetSha256(directory) << std::endl;
  } catch (const std::exception& e) {   // DatasetError, or the file system's own
    return Fail(e.what());
  }
  if (!std::cout) return Fail("cannot write to standard output");
  return 0;
}

}  // namespace
}  // namespace dmlbench

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  if (dmlbench::AsksForDatasetSha256(argc, argv)) return dmlbench::PrintDatasetSha256(argc, argv);
  int provided = 0;
  dmlbench::SetTransportDefaults();
  MPI_Init_thread(&argc, &argv, dmlbench::RequiredMpiThreadLevel(), &provided);
  const auto initialised = std::chrono::steady_clock::now();
  int status = 1;
  try {
    status = dmlbench::Run(argc, argv, {started, initialised, {}, {}});
  } catch (const std::exception& e) {
    // A failure on some ranks only: the others may wait for them forever.
    std::cerr << "dmlbench-trainer: error: " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
