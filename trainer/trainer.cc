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
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <thread>

#include "common/sha256.h"
#include "trainer/cpu_quota.h"
#include "trainer/exchange.h"
#include "trainer/mlp.h"
#include "trainer/poll.h"
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

// CPU time of the whole process (every thread: what a CPU quota charges).
double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

// This machine's clock, seconds since the Unix epoch.
double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  Wait(&request);
}

// One rank's epoch, as sent to rank 0; counters travel as doubles (exact below 2^53).
enum Field {
  kForward, kBackward, kExchange, kUpdate, kExposedComm, kComm, kWaitS,
  kBytesSent, kBytesReceived, kMessagesSent, kWall, kLossSum, kEval, kCorrect, kCpu,
  kQuotaPeriods, kThrottledPeriods, kThrottledS,  // -1: no CPU quota on the rank's cgroup
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

// Widths of the model's layers: the input features, the hidden layers, the classes.
std::vector<int> LayerSizes(int features, const std::vector<int>& hidden) {
  std::vector<int> sizes = {features};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(kClasses);
  return sizes;
}

ExchangeOptions ExchangeOptionsFor(const TrainerOptions& options, const Mlp& mlp) {
  ExchangeOptions exchange_options;
  exchange_options.architecture = options.architecture;
  exchange_options.servers = options.servers;
  exchange_options.overlap = options.overlap;
  exchange_options.bucket_bytes = options.bucket_bytes;
  exchange_options.partition_bytes = options.partition_bytes;
  exchange_options.pulls_in_turn = options.pulls_in_turn;
  exchange_options.learning_rate = options.learning_rate;
  for (const GradientSlice& slice : mlp.gradient_slices())
    exchange_options.slices.push_back({slice.offset, slice.count});
  return exchange_options;
}

// run_start's description of the layers: "fc1", "fc2", ... and their slices.
std::vector<LayerInfo> LayerInfos(const Mlp& mlp) {
  std::vector<LayerInfo> info;
  for (std::size_t l = 0; l < mlp.layers().size(); ++l) {
    const MlpLayer& layer = mlp.layers()[l];
    info.push_back({"fc" + std::to_string(l + 1), layer.inputs, layer.outputs, layer.offset,
                    layer.count});
  }
  return info;
}

// Hosts and roles of every rank, for run_start and the timeline's labels.
struct RankFacts {
  std::vector<std::string> hosts;    // gethostname, index = rank
  std::vector<std::string> roles;    // "worker" | "server", index = rank
  std::vector<std::string> labels;   // "rank 0 worker (host)", index = rank
};

// Collective: every rank's host and role, on rank 0 (empty on the others).
RankFacts GatherRankFacts(bool worker, int rank, int world) {
  std::vector<char> host(kHostBytes + 1, '\0');
  gethostname(host.data(), kHostBytes - 1);
  host[kHostBytes] = worker ? 'w' : 's';
  std::vector<char> all_hosts(rank == 0 ? host.size() * world : 0);
  MPI_Request request;
  MPI_Igather(host.data(), int(host.size()), MPI_CHAR, all_hosts.data(), int(host.size()), MPI_CHAR,
              0, MPI_COMM_WORLD, &request);
  Wait(&request);
  RankFacts facts;
  for (int r = 0; rank == 0 && r < world; ++r) {
    const char* record = &all_hosts[std::size_t(r) * host.size()];
    facts.hosts.emplace_back(record);
    facts.roles.emplace_back(record[kHostBytes] == 'w' ? "worker" : "server");
    facts.labels.push_back("rank " + std::to_string(r) + " " + facts.roles.back() + " (" +
                           facts.hosts.back() + ")");
  }
  return facts;
}

// Adds one iteration's (worker) or one Serve call's (server) accounting.
void AddStats(const ExchangeStats& stats, EpochRecord& record) {
  record[kExchange] += stats.exchange_s;
  record[kUpdate] += stats.update_s;
  record[kExposedComm] += stats.exposed_comm_s;
  record[kComm] += stats.comm_s;
  record[kWaitS] += stats.wait_s;
  record[kBytesSent] += double(stats.bytes_sent);
  record[kBytesReceived] += double(stats.bytes_received);
  record[kMessagesSent] += double(stats.messages_sent);
}

RankEpochStats ToRankStats(int rank, const std::string& role, const EpochRecord& record) {
  RankEpochStats stats;
  stats.rank = rank;
  stats.role = role;
  stats.forward_s = record[kForward];
  stats.backward_s = record[kBackward];
  stats.exchange_s = record[kExchange];
  stats.update_s = record[kUpdate];
  stats.exposed_comm_s = record[kExposedComm];
  stats.comm_s = record[kComm];
  stats.wait_s = record[kWaitS];
  stats.bytes_sent = std::uint64_t(record[kBytesSent]);
  stats.bytes_received = std::uint64_t(record[kBytesReceived]);
  stats.messages_sent = std::uint64_t(record[kMessagesSent]);
  stats.cpu_s = record[kCpu];
  if (record[kQuotaPeriods] >= 0) {
    stats.quota = RankQuotaStats{std::uint64_t(record[kQuotaPeriods]),
                                 std::uint64_t(record[kThrottledPeriods]), record[kThrottledS]};
  }
  return stats;
}

// One line per epoch under PrintHeader's column titles; phases are the
// slowest worker's.
void PrintEpochLine(const EpochEvent& event, std::ostream& out) {
  auto worst = [&](double RankEpochStats::*field) {
    double value = 0;
    for (const RankEpochStats& s : event.ranks)
      if (s.role == "worker") value = std::max(value, s.*field);
    return Format("%9.3f", value);
  };
  const std::int64_t throughput = std::llround(double(event.samples) / event.wall_s);
  out << "  " << Format("%5.0f", event.epoch) << Format("%9.3f", event.wall_s)
      << std::string(std::max<std::size_t>(1, 12 - WithCommas(throughput).size()), ' ')
      << WithCommas(throughput) << Format("%9.4f", event.loss)
      << (event.test_accuracy ? Format("%10.4f", *event.test_accuracy) : std::string("         -"))
      << " " << worst(&RankEpochStats::forward_s) << " " << worst(&RankEpochStats::backward_s)
      << " " << worst(&RankEpochStats::exchange_s) << " " << worst(&RankEpochStats::update_s)
      << std::endl;
}

// One rank's run: the model, the scheme, and the buffers every epoch reuses.
// Train() is the run; the private members are its steps, in the order they
// happen. Borrows the options and the dataset for its lifetime.
class TrainingRun {
 public:
  // Builds the model and the scheme; throws std::invalid_argument as Train()
  // documents.
  TrainingRun(const TrainerOptions& options, const Dataset& dataset);

  // `called`: when the caller began building this run (its setup_s starts there).
  TrainResult Train(const TrainerOutputs& outputs, Clock::time_point called);

 private:
  RunStartEvent RunStart(const RankFacts& facts) const;
  void PrintHeader(std::ostream& out) const;
  std::int64_t IterationsOf(int epoch) const;
  void AwaitCpuQuota() const;
  EpochRecord RunEpoch(int epoch);
  void TrainIterations(std::span<const std::uint32_t> permutation, std::int64_t iterations,
                       EpochRecord& record);
  void Evaluate(EpochRecord& record);
  EpochEvent Aggregate(int epoch, std::span<const double> gathered,
                       const std::vector<std::string>& roles) const;

  const TrainerOptions& options_;
  const Dataset& dataset_;
  int rank_ = 0;
  int world_ = 1;
  const std::vector<int> sizes_;         // layer widths, see LayerSizes
  Mlp mlp_;
  Timeline timeline_;
  const CpuQuota cpu_quota_;             // of this rank's cgroup, if it has one
  std::unique_ptr<Exchange> exchange_;   // borrows mlp_'s buffers and timeline_
  bool worker_ = true;
  int workers_ = 1;
  int worker_index_ = 0;
  std::int64_t iterations_ = 0;          // per epoch but a capped warm-up, the same on every rank
  double epoch_start_unix_s_ = 0;        // the current epoch's, after its start barrier
  // Rank 0: the wall time of each iteration of the current epoch, whole
  // microseconds. Reserved for a whole epoch, so the loop never allocates.
  std::vector<std::int64_t> iteration_wall_us_;
  // One batch of training or evaluation samples, reused throughout.
  std::vector<float> batch_pixels_;
  std::vector<std::uint8_t> batch_labels_;
  std::vector<std::uint32_t> test_indices_;   // 0..m-1: the test set in its order
};

TrainingRun::TrainingRun(const TrainerOptions& options, const Dataset& dataset)
    : options_(options),
      dataset_(dataset),
      sizes_(LayerSizes(dataset.features, options.hidden)),
      mlp_(sizes_, std::max(options.batch_size, kEvalChunk)),
      timeline_(!options.timeline_path.empty()) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_);
  mlp_.Initialize(options.seed);
  // With overlap, fc1's weight gradient (96% of W) goes out in row blocks of
  // about a bucket each while backward still runs, not after it.
  if (options.overlap) mlp_.SliceGradients(options.bucket_bytes);
  exchange_ = MakeExchange(ExchangeOptionsFor(options, mlp_), mlp_.parameters(), mlp_.gradients(),
                           &timeline_);
  worker_ = exchange_->role() == Role::kWorker;
  workers_ = exchange_->workers();
  worker_index_ = exchange_->worker_index();

  const std::int64_t n = dataset.train.count;
  const int b = options.batch_size;
  iterations_ = IterationsPerEpoch(n, b, workers_, options.max_iterations_per_epoch);
  if (iterations_ == 0)
    throw std::invalid_argument(
        "the training set has " + std::to_string(n) + " samples, fewer than one global batch of " +
        std::to_string(std::int64_t{b} * workers_) + " (batch size " + std::to_string(b) + " x " +
        std::to_string(workers_) + (workers_ == 1 ? " worker)" : " workers)"));

  if (rank_ == 0) iteration_wall_us_.reserve(std::size_t(iterations_));
  batch_pixels_.resize(std::size_t(mlp_.max_batch()) * dataset.features);
  batch_labels_.resize(std::size_t(mlp_.max_batch()));
  test_indices_.resize(std::size_t(dataset.test.count));
  std::iota(test_indices_.begin(), test_indices_.end(), 0u);
}

TrainResult TrainingRun::Train(const TrainerOutputs& outputs, Clock::time_point called) {
  const RankFacts facts = GatherRankFacts(worker_, rank_, world_);
  if (outputs.events) outputs.events->Write(ToJson(RunStart(facts)));
  if (outputs.progress) PrintHeader(*outputs.progress);
  const Clock::time_point started = Clock::now();

  std::vector<double> gathered(rank_ == 0 ? std::size_t(kFieldCount) * world_ : 0);
  TrainResult result;
  Barrier();   // the ranks' timelines start together
  timeline_.SetOrigin();
  for (int epoch = 1; epoch <= options_.epochs; ++epoch) {
    if (epoch == 2 && options_.await_cpu_quota_s > 0) AwaitCpuQuota();
    EpochRecord record = RunEpoch(epoch);
    if (options_.evaluate && worker_) Evaluate(record);

    // Rank 0 collects every rank's record and reports the epoch.
    MPI_Request request;
    MPI_Igather(record.data(), kFieldCount, MPI_DOUBLE, gathered.data(), kFieldCount, MPI_DOUBLE, 0,
                MPI_COMM_WORLD, &request);
    Wait(&request);
    if (rank_ != 0) continue;
    EpochEvent event = Aggregate(epoch, gathered, facts.roles);
    event.iteration_wall_us = iteration_wall_us_;
    if (outputs.events) outputs.events->Write(ToJson(event));
    if (outputs.progress) PrintEpochLine(event, *outputs.progress);
    result.epochs.push_back(std::move(event));
  }
  result.setup_s = Seconds(called, started);
  result.epochs_s = Seconds(started, Clock::now());

  if (timeline_.enabled()) timeline_.Write(options_.timeline_path, rank_, facts.labels);
  if (worker_) {
    result.parameters.assign(mlp_.parameters().begin(), mlp_.parameters().end());
    result.parameter_checksum = Sha256Hex(
        {reinterpret_cast<const std::uint8_t*>(result.parameters.data()),
         result.parameters.size() * sizeof(float)});
  }
  return result;
}

// Rank 0's run_start: the resolved configuration and the facts of the run.
RunStartEvent TrainingRun::RunStart(const RankFacts& facts) const {
  RunStartEvent start;
  start.time_unix_s = UnixNow();
  start.config = {options_.architecture, options_.servers, options_.batch_size, options_.epochs,
                  options_.hidden, options_.learning_rate, options_.seed,
                  options_.max_iterations_per_epoch, options_.warmup_iterations, options_.overlap,
                  options_.bucket_bytes,
                  options_.partition_bytes, dataset_.source, options_.evaluate, options_.pulls_in_turn};
  start.parameters = mlp_.parameters().size();
  start.layers = LayerInfos(mlp_);
  start.world_size = world_;
  start.workers = workers_;
  start.servers = world_ - workers_;
  start.iterations_per_epoch = iterations_;
  start.train_samples = dataset_.train.count;
  start.test_samples = dataset_.test.count;
  start.dataset_sha256 = dataset_.sha256;
  start.mpi_library_version = MpiLibraryVersion();
  start.hosts = facts.hosts;
  start.roles = facts.roles;
  start.threads = openblas_get_num_threads();
  return start;
}

// Rank 0's progress header: the scheme, the model, the data, the columns.
void TrainingRun::PrintHeader(std::ostream& out) const {
  const std::size_t parameters = mlp_.parameters().size();
  out << "dmlbench-trainer: " << options_.architecture << (options_.overlap ? " (overlap)" : "")
      << ", " << workers_ << (workers_ == 1 ? " worker" : " workers");
  if (world_ > workers_) out << " + " << world_ - workers_ << " servers";
  out << ", local batch " << options_.batch_size << ", " << ShapeText(sizes_) << " (W = "
      << WithCommas(std::int64_t(parameters)) << ", " << Format("%.2f", parameters * 4 / 1e6)
      << " MB)\n"
      << "  data " << dataset_.source << ": " << WithCommas(dataset_.train.count) << " train, "
      << WithCommas(dataset_.test.count) << " test; " << iterations_ << " iterations/epoch, lr "
      << options_.learning_rate << ", seed " << options_.seed << "\n"
      << "  epoch   time_s   samples/s     loss  test_acc   forward  backward  exchange    update"
         "  (s, max over workers)\n";
}

// The iterations of epoch `epoch`: iterations_, but for a warm-up epoch 1
// under its own cap.
std::int64_t TrainingRun::IterationsOf(int epoch) const {
  if (epoch == 1 && options_.warmup_iterations > 0) return std::min(iterations_, options_.warmup_iterations);
  return iterations_;
}

// Collective: every rank polls its cgroup until a CPU quota is in force, for
// at most await_cpu_quota_s. A warm-up of a few iterations ends long before
// a launcher that lifted the quota for the job's start has put it back; the
// measured epochs must not run uncapped. Throws QuotaWaitError on every rank
// when some rank's quota did not come (or it has no CPU cgroup).
void TrainingRun::AwaitCpuQuota() const {
  const Clock::time_point start = Clock::now();
  std::string problem;
  for (;;) {
    const std::optional<QuotaCounters> counters = cpu_quota_.Read();
    if (!counters) {
      problem = "rank " + std::to_string(rank_) +
                " has no CPU cgroup to read a quota from, which --await-cpu-quota-s waits for";
      break;
    }
    if (counters->quota_set) break;
    if (Seconds(start, Clock::now()) >= options_.await_cpu_quota_s) {
      problem = "the CPU quota of rank " + std::to_string(rank_) + "'s cgroup was not in force " +
                Format("%g", options_.await_cpu_quota_s) +
                " s after the warm-up epoch (--await-cpu-quota-s); the measured epochs would run uncapped";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (std::string first = FirstError(problem); !first.empty()) throw QuotaWaitError(first);
}

// Epoch `epoch` on this rank, timed from a barrier that starts it on every
// rank at once: a worker trains, a server serves the workers.
EpochRecord TrainingRun::RunEpoch(int epoch) {
  EpochRecord record{};
  const std::vector<std::uint32_t> permutation =
      EpochPermutation(dataset_.train.count, options_.seed, epoch);
  Barrier();
  const Clock::time_point start = Clock::now();
  epoch_start_unix_s_ = UnixNow();
  const double cpu_start = ProcessCpuSeconds();
  // Reported when a quota is in force at the epoch's end (a launcher may
  // restore it during the epoch; periods without a quota are not counted).
  const std::optional<QuotaCounters> quota_start = cpu_quota_.Read();
  if (worker_) {
    TrainIterations(permutation, IterationsOf(epoch), record);
  } else {
    exchange_->Serve(IterationsOf(epoch));
    AddStats(exchange_->LastStats(), record);
  }
  record[kCpu] = ProcessCpuSeconds() - cpu_start;
  record[kWall] = Seconds(start, Clock::now());
  record[kQuotaPeriods] = record[kThrottledPeriods] = record[kThrottledS] = -1;
  const std::optional<QuotaCounters> quota_end = cpu_quota_.Read();
  if (quota_start && quota_end && quota_end->quota_set) {
    record[kQuotaPeriods] = double(quota_end->periods - quota_start->periods);
    record[kThrottledPeriods] = double(quota_end->throttled_periods - quota_start->throttled_periods);
    record[kThrottledS] = quota_end->throttled_s - quota_start->throttled_s;
  }
  return record;
}

// A worker's iterations over its shards of `permutation`: forward, then
// backward with the scheme's per-slice calls, then the scheme's finish,
// which leaves the updated model in place. With overlap the finish is split:
// the next iteration's forward pass starts as soon as backward has handed
// its last slice over, and each of its row blocks waits only for its own
// parameters (Exchange::AwaitSlice); fc1, 96% of the model and the last
// layer exchanged, is the first one forward reads, block by block. Sums
// loss, times and traffic (an iteration's exchange is added when it has
// completed, in the next forward pass); rank 0 also keeps each iteration's
// wall time, from its forward pass to the next one's (into memory it
// reserved: no allocation and no I/O inside the loop).
void TrainingRun::TrainIterations(std::span<const std::uint32_t> permutation,
                                  std::int64_t iterations, EpochRecord& record) {
  const int b = options_.batch_size;
  const bool keep_iterations = rank_ == 0;
  const bool pipelined = options_.overlap;
  bool pending = false;  // the previous iteration's exchange is still completing
  double in_exchange = 0;  // this phase's time inside the scheme's calls: exchange, not compute
  const std::function<void(int)> await = [this, &in_exchange](int slice) {
    const Clock::time_point called = Clock::now();
    exchange_->AwaitSlice(slice);
    in_exchange += Seconds(called, Clock::now());
  };
  const std::function<void(int)> no_await;
  auto complete = [&] {
    exchange_->CompleteIteration();
    AddStats(exchange_->LastStats(), record);
    pending = false;
  };
  iteration_wall_us_.clear();
  Clock::time_point previous_start;
  for (std::int64_t i = 0; i < iterations; ++i) {
    const Clock::time_point t0 = Clock::now();
    if (keep_iterations && i > 0)
      iteration_wall_us_.push_back(
          std::chrono::round<std::chrono::microseconds>(t0 - previous_start).count());
    previous_start = t0;
    in_exchange = 0;
    {
      ScopedSpan span(&timeline_, "forward", "compute");
      GatherBatch(dataset_.train, dataset_.features,
                  WorkerShard(permutation, i, b, workers_, worker_index_), batch_pixels_.data(),
                  batch_labels_.data());
      record[kLossSum] +=
          mlp_.Forward(batch_pixels_.data(), batch_labels_.data(), b, pending ? await : no_await);
    }
    if (pending) {
      const Clock::time_point called = Clock::now();
      complete();
      in_exchange += Seconds(called, Clock::now());
    }
    const Clock::time_point t1 = Clock::now();
    record[kForward] += Seconds(t0, t1) - in_exchange;
    exchange_->BeginIteration();
    // Time spent inside the scheme's calls counts as exchange, not backward.
    in_exchange = Seconds(t1, Clock::now());
    {
      ScopedSpan span(&timeline_, "backward", "compute");
      mlp_.Backward([&](int slice) {
        const Clock::time_point called = Clock::now();
        exchange_->SliceReady(slice);
        in_exchange += Seconds(called, Clock::now());
      });
    }
    const Clock::time_point t2 = Clock::now();
    record[kBackward] += Seconds(t1, t2) - in_exchange;
    if (pipelined) {
      exchange_->FinishBackward();
      pending = true;
    } else {
      exchange_->FinishIteration();
      AddStats(exchange_->LastStats(), record);
    }
  }
  if (pending) complete();
  if (keep_iterations && iterations > 0)
    iteration_wall_us_.push_back(
        std::chrono::round<std::chrono::microseconds>(Clock::now() - previous_start).count());
}

// A worker classifies its 1/w share of the test set with the current model.
void TrainingRun::Evaluate(EpochRecord& record) {
  ScopedSpan span(&timeline_, "evaluate", "compute");
  const Clock::time_point start = Clock::now();
  const std::int64_t m = dataset_.test.count;
  const std::int64_t begin = m * worker_index_ / workers_, end = m * (worker_index_ + 1) / workers_;
  std::int64_t correct = 0;
  for (std::int64_t row = begin; row < end; row += mlp_.max_batch()) {
    const int rows = int(std::min<std::int64_t>(mlp_.max_batch(), end - row));
    GatherBatch(dataset_.test, dataset_.features,
                std::span<const std::uint32_t>(test_indices_).subspan(std::size_t(row), rows),
                batch_pixels_.data(), batch_labels_.data());
    correct += mlp_.CountCorrect(batch_pixels_.data(), batch_labels_.data(), rows);
  }
  record[kCorrect] = double(correct);
  record[kEval] = Seconds(start, Clock::now());
}

// Rank 0: the epoch event from every rank's record (`gathered`, rank r's at
// r * kFieldCount), as schemas/trainer-events.md defines its fields.
EpochEvent TrainingRun::Aggregate(int epoch, std::span<const double> gathered,
                                  const std::vector<std::string>& roles) const {
  EpochEvent event;
  event.epoch = epoch;
  event.start_unix_s = epoch_start_unix_s_;
  event.iterations = IterationsOf(epoch);
  event.samples = event.iterations * options_.batch_size * workers_;
  double loss_sum = 0, correct = 0, overlap_sum = 0;
  for (int r = 0; r < world_; ++r) {
    EpochRecord record;
    std::copy_n(gathered.begin() + std::ptrdiff_t(r) * kFieldCount, kFieldCount, record.begin());
    const RankEpochStats stats = ToRankStats(r, roles[r], record);
    event.ranks.push_back(stats);
    event.wall_s = std::max(event.wall_s, record[kWall]);
    event.eval_s = std::max(event.eval_s, record[kEval]);
    loss_sum += record[kLossSum];
    correct += record[kCorrect];
    if (stats.role == "worker" && options_.overlap && stats.comm_s > 0)
      overlap_sum += std::max(0.0, stats.comm_s - stats.exposed_comm_s) / stats.comm_s;
  }
  event.loss = loss_sum / double(event.samples);
  if (options_.evaluate) event.test_accuracy = correct / double(dataset_.test.count);
  event.overlap_ratio = overlap_sum / workers_;
  return event;
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
  if (options.warmup_iterations < 0)
    return "--warmup-iterations must be 0 (a whole epoch) or more, got " +
           std::to_string(options.warmup_iterations);
  if (options.warmup_iterations > 0 && options.epochs < 2)
    return "--warmup-iterations needs 2 or more --epochs (epoch 1 is the warm-up only when later "
           "epochs follow), got " + std::to_string(options.epochs);
  if (!(options.await_cpu_quota_s >= 0) || !std::isfinite(options.await_cpu_quota_s))
    return "--await-cpu-quota-s must be 0 (no wait) or a positive number of seconds, got " +
           Format("%g", options.await_cpu_quota_s);
  if (options.servers < 0)
    return "--servers must be 0 or more, got " + std::to_string(options.servers);
  if (options.servers > 0 && options.architecture != "ps")
    return "--servers is only for the ps architecture, got " + std::to_string(options.servers) +
           " with " + options.architecture;
  if (options.pulls_in_turn &&
      !PullsInTurnApply(options.architecture, options.servers, options.overlap, options.partition_bytes))
    return "--pulls-in-turn is for a parameter server that answers the whole gradient at once: ps with "
           "--servers 1, without --overlap and --partition-bytes";
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
  const Clock::time_point called = Clock::now();
  TrainingRun run(options, dataset);
  return run.Train(outputs, called);
}

}  // namespace dmlbench
