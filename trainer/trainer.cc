#include "trainer/trainer.h"

#include <cblas.h>
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "trainer/exchange.h"
#include "trainer/mlp.h"
#include "trainer/poll.h"
#include "trainer/sha256.h"
#include "trainer/timeline.h"

namespace dmlbench {
namespace {

using Clock = std::chrono::steady_clock;

// Rows per forward pass when evaluating (and the model's smallest max_batch).
constexpr int kEvalChunk = 500;
constexpr std::size_t kHostBytes = 256;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Every collective of the training loop waits by polling with a short sleep
// (poll.h): a blocking MPI call busy-polls and steals the cores of ranks
// that still work (DESIGN.md section 4).
void Wait(MPI_Request* request) {
  double ignored = 0;
  PollUntil(
      [request] {
        int done = 0;
        MPI_Test(request, &done, MPI_STATUS_IGNORE);
        return done ? Progress::kDone : Progress::kIdle;
      },
      &ignored);
}

void Barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  Wait(&request);
}

// One rank's epoch, as sent to rank 0; counters travel as doubles (exact below 2^53).
enum Field {
  kForward, kBackward, kExchange, kUpdate, kExposedComm, kComm, kWaitS,
  kBytesSent, kBytesReceived, kMessagesSent, kWall, kLossSum, kEval, kCorrect,
  kFieldCount
};
using EpochRecord = std::array<double, kFieldCount>;

std::string MpiLibraryVersion() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ' || text.back() == ','))
    text.pop_back();
  return text;
}

std::string WithCommas(std::int64_t value) {
  const std::string digits = std::to_string(value);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string ShapeText(const std::vector<int>& sizes) {
  std::string text;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) text += '-';
    text += std::to_string(sizes[i]);
  }
  return text;
}

}  // namespace

std::string ValidateOptions(const TrainerOptions& options) {
  if (options.batch_size < 1)
    return "--batch-size must be at least 1, got " + std::to_string(options.batch_size);
  if (options.epochs < 1)
    return "--epochs must be at least 1, got " + std::to_string(options.epochs);
  if (options.hidden.empty() ||
      std::any_of(options.hidden.begin(), options.hidden.end(), [](int h) { return h < 1; })) {
    std::string list;
    for (int h : options.hidden) {
      if (!list.empty()) list += ',';
      list += std::to_string(h);
    }
    return "--hidden needs one or more layer widths of at least 1, got \"" + list + "\"";
  }
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate))
    return "--learning-rate must be a positive number, got " +
           Format("%g", options.learning_rate);
  if (options.max_iterations_per_epoch < 0)
    return "--max-iterations-per-epoch must be 0 (no cap) or more, got " +
           std::to_string(options.max_iterations_per_epoch);
  if (options.servers < 0)
    return "--servers must be 0 or more, got " + std::to_string(options.servers);
  if (options.servers > 0 && options.architecture != "ps")
    return "--servers is only for the ps architecture, got " + std::to_string(options.servers) +
           " with " + options.architecture;
  return "";
}

std::string FirstError(const std::string& local_error) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int candidate = local_error.empty() ? world : rank;
  int first = world;
  MPI_Request request;
  MPI_Iallreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
  Wait(&request);
  if (first == world) return "";
  int length = rank == first ? static_cast<int>(local_error.size()) : 0;
  MPI_Ibcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD, &request);
  Wait(&request);
  std::string message = rank == first ? local_error : std::string(std::size_t(length), ' ');
  MPI_Ibcast(message.data(), length, MPI_CHAR, first, MPI_COMM_WORLD, &request);
  Wait(&request);
  return message;
}

std::int64_t PeakRssBytesOverRanks() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::int64_t mine = std::int64_t{usage.ru_maxrss} * 1024;  // Linux reports KiB
  std::int64_t peak = 0;
  MPI_Request request;
  MPI_Iallreduce(&mine, &peak, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &request);
  Wait(&request);
  return peak;
}

TrainResult Train(const TrainerOptions& options, const Dataset& dataset,
                  const TrainerOutputs& outputs) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int b = options.batch_size;

  std::vector<int> sizes = {dataset.features};
  sizes.insert(sizes.end(), options.hidden.begin(), options.hidden.end());
  sizes.push_back(kClasses);
  Mlp mlp(sizes, std::max(b, kEvalChunk));
  mlp.Initialize(options.seed);

  ExchangeOptions exchange_options;
  exchange_options.architecture = options.architecture;
  exchange_options.servers = options.servers;
  exchange_options.overlap = options.overlap;
  exchange_options.bucket_bytes = options.bucket_bytes;
  exchange_options.learning_rate = options.learning_rate;
  for (const MlpLayer& layer : mlp.layers()) exchange_options.layers.push_back({layer.offset, layer.count});
  Timeline timeline(!options.timeline_path.empty());
  std::unique_ptr<Exchange> exchange =
      MakeExchange(exchange_options, mlp.parameters(), mlp.gradients(), &timeline);
  const bool worker = exchange->role() == Role::kWorker;
  const int workers = exchange->workers();
  const int worker_index = exchange->worker_index();

  const std::int64_t n = dataset.train.count;
  const std::int64_t iterations =
      IterationsPerEpoch(n, b, workers, options.max_iterations_per_epoch);
  if (iterations == 0)
    throw std::invalid_argument(
        "the training set has " + std::to_string(n) + " samples, fewer than one global batch of " +
        std::to_string(std::int64_t{b} * workers) + " (batch size " + std::to_string(b) + " x " +
        std::to_string(workers) + (workers == 1 ? " worker)" : " workers)"));

  // Hosts and roles of every rank, for run_start and the timeline's labels.
  std::vector<char> host(kHostBytes + 1, '\0');
  gethostname(host.data(), kHostBytes - 1);
  host[kHostBytes] = worker ? 'w' : 's';
  std::vector<char> all_hosts(rank == 0 ? host.size() * world : 0);
  MPI_Request request;
  MPI_Igather(host.data(), int(host.size()), MPI_CHAR, all_hosts.data(), int(host.size()), MPI_CHAR,
              0, MPI_COMM_WORLD, &request);
  Wait(&request);
  std::vector<std::string> hosts, roles, labels;
  for (int r = 0; rank == 0 && r < world; ++r) {
    const char* record = &all_hosts[std::size_t(r) * host.size()];
    hosts.emplace_back(record);
    roles.emplace_back(record[kHostBytes] == 'w' ? "worker" : "server");
    labels.push_back("rank " + std::to_string(r) + " " + roles.back() + " (" + hosts.back() + ")");
  }

  const std::vector<LayerInfo> layer_info = [&] {
    std::vector<LayerInfo> info;
    for (std::size_t l = 0; l < mlp.layers().size(); ++l) {
      const MlpLayer& layer = mlp.layers()[l];
      info.push_back({"fc" + std::to_string(l + 1), layer.inputs, layer.outputs, layer.offset,
                      layer.count});
    }
    return info;
  }();
  if (outputs.events) {
    RunStartEvent start;
    start.time_unix_s = std::chrono::duration<double>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    start.config = {options.architecture, options.servers, b, options.epochs, options.hidden,
                    options.learning_rate, options.seed, options.max_iterations_per_epoch,
                    options.overlap, options.bucket_bytes, dataset.source, options.evaluate};
    start.parameters = mlp.parameters().size();
    start.layers = layer_info;
    start.world_size = world;
    start.workers = workers;
    start.servers = world - workers;
    start.iterations_per_epoch = iterations;
    start.train_samples = n;
    start.test_samples = dataset.test.count;
    start.dataset_sha256 = dataset.sha256;
    start.mpi_library_version = MpiLibraryVersion();
    start.hosts = hosts;
    start.roles = roles;
    start.threads = openblas_get_num_threads();
    outputs.events->Write(ToJson(start));
  }
  if (outputs.progress) {
    std::ostream& out = *outputs.progress;
    out << "dmlbench-trainer: " << options.architecture << (options.overlap ? " (overlap)" : "")
        << ", " << workers << (workers == 1 ? " worker" : " workers");
    if (world > workers) out << " + " << world - workers << " servers";
    out << ", local batch " << b << ", " << ShapeText(sizes) << " (W = "
        << WithCommas(std::int64_t(mlp.parameters().size())) << ", "
        << Format("%.2f", mlp.parameters().size() * 4 / 1e6) << " MB)\n"
        << "  data " << dataset.source << ": " << WithCommas(n) << " train, "
        << WithCommas(dataset.test.count) << " test; " << iterations << " iterations/epoch, lr "
        << options.learning_rate << ", seed " << options.seed << "\n"
        << "  epoch   time_s   samples/s     loss  test_acc   forward  backward  exchange    update"
           "  (s, max over workers)\n";
  }

  std::vector<float> batch_pixels(std::size_t(mlp.max_batch()) * dataset.features);
  std::vector<std::uint8_t> batch_labels(std::size_t(mlp.max_batch()));
  std::vector<std::uint32_t> test_indices(std::size_t(dataset.test.count));
  std::iota(test_indices.begin(), test_indices.end(), 0u);
  std::vector<double> gathered(rank == 0 ? std::size_t(kFieldCount) * world : 0);

  TrainResult result;
  Barrier();
  timeline.SetOrigin();
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    EpochRecord record{};
    const std::vector<std::uint32_t> permutation = EpochPermutation(n, options.seed, epoch);
    Barrier();
    const Clock::time_point epoch_start = Clock::now();
    if (worker) {
      for (std::int64_t i = 0; i < iterations; ++i) {
        const Clock::time_point t0 = Clock::now();
        {
          ScopedSpan span(&timeline, "forward", "compute");
          GatherBatch(dataset.train, dataset.features,
                      WorkerShard(permutation, i, b, workers, worker_index), batch_pixels.data(),
                      batch_labels.data());
          record[kLossSum] += mlp.Forward(batch_pixels.data(), batch_labels.data(), b);
        }
        const Clock::time_point t1 = Clock::now();
        exchange->BeginIteration();
        double in_exchange = Seconds(t1, Clock::now());
        {
          ScopedSpan span(&timeline, "backward", "compute");
          mlp.Backward([&](int layer) {
            const Clock::time_point called = Clock::now();
            exchange->LayerGradientReady(layer);
            in_exchange += Seconds(called, Clock::now());
          });
        }
        const Clock::time_point t2 = Clock::now();
        exchange->FinishIteration();
        const ExchangeStats stats = exchange->LastStats();
        record[kForward] += Seconds(t0, t1);
        record[kBackward] += Seconds(t1, t2) - in_exchange;
        record[kExchange] += stats.exchange_s;
        record[kUpdate] += stats.update_s;
        record[kExposedComm] += stats.exposed_comm_s;
        record[kComm] += stats.comm_s;
        record[kWaitS] += stats.wait_s;
        record[kBytesSent] += double(stats.bytes_sent);
        record[kBytesReceived] += double(stats.bytes_received);
        record[kMessagesSent] += double(stats.messages_sent);
      }
    } else {
      exchange->Serve(iterations);
      const ExchangeStats stats = exchange->LastStats();
      record[kExchange] = stats.exchange_s;
      record[kUpdate] = stats.update_s;
      record[kExposedComm] = stats.exposed_comm_s;
      record[kComm] = stats.comm_s;
      record[kWaitS] = stats.wait_s;
      record[kBytesSent] = double(stats.bytes_sent);
      record[kBytesReceived] = double(stats.bytes_received);
      record[kMessagesSent] = double(stats.messages_sent);
    }
    record[kWall] = Seconds(epoch_start, Clock::now());

    // Evaluation: each worker classifies its share of the test set.
    if (options.evaluate && worker) {
      ScopedSpan span(&timeline, "evaluate", "compute");
      const Clock::time_point eval_start = Clock::now();
      const std::int64_t m = dataset.test.count;
      const std::int64_t begin = m * worker_index / workers, end = m * (worker_index + 1) / workers;
      std::int64_t correct = 0;
      for (std::int64_t row = begin; row < end; row += mlp.max_batch()) {
        const int rows = int(std::min<std::int64_t>(mlp.max_batch(), end - row));
        GatherBatch(dataset.test, dataset.features,
                    std::span<const std::uint32_t>(test_indices).subspan(std::size_t(row), rows),
                    batch_pixels.data(), batch_labels.data());
        correct += mlp.CountCorrect(batch_pixels.data(), batch_labels.data(), rows);
      }
      record[kCorrect] = double(correct);
      record[kEval] = Seconds(eval_start, Clock::now());
    }

    MPI_Igather(record.data(), kFieldCount, MPI_DOUBLE, gathered.data(), kFieldCount, MPI_DOUBLE, 0,
                MPI_COMM_WORLD, &request);
    Wait(&request);
    if (rank != 0) continue;

    EpochEvent event;
    event.epoch = epoch;
    event.iterations = iterations;
    event.samples = iterations * b * workers;
    double loss_sum = 0, correct = 0, overlap_sum = 0;
    for (int r = 0; r < world; ++r) {
      const double* f = &gathered[std::size_t(r) * kFieldCount];
      RankEpochStats stats;
      stats.rank = r;
      stats.role = roles[r];
      stats.forward_s = f[kForward];
      stats.backward_s = f[kBackward];
      stats.exchange_s = f[kExchange];
      stats.update_s = f[kUpdate];
      stats.exposed_comm_s = f[kExposedComm];
      stats.comm_s = f[kComm];
      stats.wait_s = f[kWaitS];
      stats.bytes_sent = std::uint64_t(f[kBytesSent]);
      stats.bytes_received = std::uint64_t(f[kBytesReceived]);
      stats.messages_sent = std::uint64_t(f[kMessagesSent]);
      event.ranks.push_back(stats);
      event.wall_s = std::max(event.wall_s, f[kWall]);
      event.eval_s = std::max(event.eval_s, f[kEval]);
      loss_sum += f[kLossSum];
      correct += f[kCorrect];
      if (stats.role == "worker" && options.overlap && stats.comm_s > 0)
        overlap_sum += std::max(0.0, stats.comm_s - stats.exposed_comm_s) / stats.comm_s;
    }
    event.loss = loss_sum / double(event.samples);
    if (options.evaluate) event.test_accuracy = correct / double(dataset.test.count);
    event.overlap_ratio = overlap_sum / workers;
    if (outputs.events) outputs.events->Write(ToJson(event));
    if (outputs.progress) {
      auto worst = [&](double RankEpochStats::*field) {
        double value = 0;
        for (const RankEpochStats& s : event.ranks)
          if (s.role == "worker") value = std::max(value, s.*field);
        return Format("%9.3f", value);
      };
      const std::int64_t throughput = std::llround(double(event.samples) / event.wall_s);
      *outputs.progress << "  " << Format("%5.0f", epoch) << Format("%9.3f", event.wall_s)
                        << std::string(std::max<std::size_t>(1, 12 - WithCommas(throughput).size()), ' ')
                        << WithCommas(throughput) << Format("%9.4f", event.loss)
                        << (event.test_accuracy ? Format("%10.4f", *event.test_accuracy)
                                                : std::string("         -"))
                        << " " << worst(&RankEpochStats::forward_s) << " "
                        << worst(&RankEpochStats::backward_s) << " "
                        << worst(&RankEpochStats::exchange_s) << " "
                        << worst(&RankEpochStats::update_s) << std::endl;
    }
    result.epochs.push_back(std::move(event));
  }

  if (timeline.enabled()) timeline.Write(options.timeline_path, rank, labels);
  if (worker) {
    result.parameters.assign(mlp.parameters().begin(), mlp.parameters().end());
    result.parameter_checksum = Sha256Hex(
        {reinterpret_cast<const std::uint8_t*>(result.parameters.data()),
         result.parameters.size() * sizeof(float)});
  }
  return result;
}

}  // namespace dmlbench
