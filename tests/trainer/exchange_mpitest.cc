// Every scheme behind MakeExchange, through real MPI: after each iteration
// the model equals params - lr * mean(gradients) computed independently, on
// every worker bit-identically, with overlap on and off and ps with 1, 2 and
// 4 servers where the world allows; the accounting and the error paths.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trainer/exchange.h"
#include "trainer/timeline.h"

namespace dmlbench {
namespace {

constexpr float kLearningRate = 0.25f;
constexpr int kIterations = 3;

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int WorldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Three layers shaped like a small MLP's (weights+biases), largest first.
std::vector<Slice> MlpLayers() { return {Slice{0, 1000}, Slice{1000, 300}, Slice{1300, 7}}; }

// The same with the first layer's weights in uneven row blocks as Mlp cuts
// them (the last block carries the biases): buckets that begin and end
// inside a ps shard or a p2p/ring chunk of another bucket.
std::vector<Slice> MlpSliced() {
  return {Slice{0, 333}, Slice{333, 333}, Slice{666, 334}, Slice{1000, 300}, Slice{1300, 7}};
}

// Fewer parameters than some worlds have workers: some shards are empty.
std::vector<Slice> TinyLayers() { return {Slice{0, 2}, Slice{2, 3}}; }

float InitialParameter(std::size_t i) { return 0.01f * static_cast<float>((i * 7) % 13) - 0.05f; }

// Worker w's gradient at index i in iteration t: differs per worker, index
// and iteration, not exactly representable sums.
float Gradient(int worker, int iteration, std::size_t i) {
  return std::sin(0.37 * static_cast<double>(i) + 1.3 * worker + 0.71 * iteration) / 3.0f;
}

struct Scheme {
  std::string architecture;
  int servers = 0;
  bool overlap = false;
  bool pulls_in_turn = false;  // ps, 1 server, overlap off
};

std::string Describe(const Scheme& s) {
  return s.architecture + (s.architecture == "ps" ? " k=" + std::to_string(s.servers) : "") +
         (s.overlap ? " overlap on" : " overlap off") + (s.pulls_in_turn ? " pulls in turn" : "");
}

std::vector<Scheme> SchemesThisWorldRuns() {
  std::vector<Scheme> schemes;
  for (bool overlap : {false, true}) {
    for (const char* a : {"ring", "mpi", "p2p"}) schemes.push_back(Scheme{a, 0, overlap});
    for (int k : {1, 2, 4}) {
      if (WorldSize() >= k + 1) schemes.push_back(Scheme{"ps", k, overlap});
    }
  }
  if (WorldSize() >= 2) schemes.push_back(Scheme{"ps", 1, false, true});
  return schemes;
}

ExchangeOptions OptionsFor(const Scheme& scheme, const std::vector<Slice>& slices) {
  ExchangeOptions options;
  options.architecture = scheme.architecture;
  options.servers = scheme.servers;
  options.overlap = scheme.overlap;
  options.pulls_in_turn = scheme.pulls_in_turn;
  options.bucket_bytes = 16;  // every layer of MlpLayers() is its own bucket (7 floats = 28 bytes)
  options.learning_rate = kLearningRate;
  options.slices = slices;
  return options;
}

// FNV-1a over the bytes, to compare models across ranks.
std::uint64_t Fingerprint(const std::vector<float>& data) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (std::size_t i = 0; i < data.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

// What one rank saw of a run of kIterations iterations.
struct SchemeRun {
  Role role = Role::kWorker;
  int workers = 0;
  std::vector<float> params;
  std::vector<ExchangeStats> stats;  // per iteration (workers) or one Serve (servers)
};

std::string FirstMismatch(const std::vector<float>& got, const std::vector<double>& expected,
                          std::size_t begin = 0, std::size_t end = SIZE_MAX);
std::vector<double> ExpectedModel(std::size_t n, int workers, int iterations = kIterations);

// Runs kIterations like the training loop does: slice s's gradient is written
// just before SliceReady(s), last slice first. Pipelined, as the trainer with
// overlap: FinishBackward() ends each backward pass, and before the next
// iteration (and at the end) every slice is awaited, first to last, as the
// next forward pass reads them, then CompleteIteration(); each slice must
// hold the updated model as soon as AwaitSlice() returns (`mismatches`
// collects where it did not).
SchemeRun RunScheme(const Scheme& scheme, const std::vector<Slice>& slices,
                    Timeline* timeline = nullptr, bool pipelined = false,
                    std::vector<std::string>* mismatches = nullptr) {
  const std::size_t n = slices.back().offset + slices.back().count;
  SchemeRun run;
  run.params.resize(n);
  for (std::size_t i = 0; i < n; ++i) run.params[i] = InitialParameter(i);
  std::vector<float> grads(n, 0.0f);
  std::unique_ptr<Exchange> exchange =
      MakeExchange(OptionsFor(scheme, slices), run.params, grads, timeline);
  run.role = exchange->role();
  run.workers = exchange->workers();
  if (run.role == Role::kServer) {
    exchange->Serve(kIterations);
    run.stats.push_back(exchange->LastStats());
    return run;
  }
  auto await_all = [&](int iterations) {
    const std::vector<double> expected = ExpectedModel(n, run.workers, iterations);
    for (std::size_t s = 0; s < slices.size(); ++s) {
      exchange->AwaitSlice(static_cast<int>(s));
      const std::string mismatch =
          FirstMismatch(run.params, expected, slices[s].offset, slices[s].offset + slices[s].count);
      if (!mismatch.empty() && mismatches) mismatches->push_back(mismatch);
    }
    exchange->CompleteIteration();
    run.stats.push_back(exchange->LastStats());
  };
  for (int t = 0; t < kIterations; ++t) {
    if (pipelined && t > 0) await_all(t);
    exchange->BeginIteration();
    for (int s = static_cast<int>(slices.size()) - 1; s >= 0; --s) {
      for (std::size_t i = slices[s].offset; i < slices[s].offset + slices[s].count; ++i) {
        grads[i] = Gradient(exchange->worker_index(), t, i);
      }
      exchange->SliceReady(s);
    }
    if (pipelined) {
      exchange->FinishBackward();
    } else {
      exchange->FinishIteration();
      run.stats.push_back(exchange->LastStats());
    }
  }
  if (pipelined) await_all(kIterations);
  return run;
}

// params - lr * mean(gradients), iterated, in double.
std::vector<double> ExpectedModel(std::size_t n, int workers, int iterations) {
  std::vector<double> model(n);
  for (std::size_t i = 0; i < n; ++i) model[i] = InitialParameter(i);
  for (int t = 0; t < iterations; ++t) {
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int w = 0; w < workers; ++w) sum += Gradient(w, t, i);
      model[i] -= kLearningRate * (sum / workers);
    }
  }
  return model;
}

// Within [begin, end) of `got`.
std::string FirstMismatch(const std::vector<float>& got, const std::vector<double>& expected,
                          std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < std::min(end, got.size()); ++i) {
    if (std::abs(got[i] - expected[i]) > 1e-5 * std::max(1.0, std::abs(expected[i]))) {
      return "mismatch at index " + std::to_string(i) + " on rank " +
             std::to_string(WorldRank()) + ": got " + std::to_string(got[i]) + ", expected " +
             std::to_string(expected[i]);
    }
  }
  return "";
}

// True when every worker rank holds the same fingerprint as worker 0.
bool WorkersAgree(const SchemeRun& run) {
  const std::uint64_t mine = Fingerprint(run.params);
  std::vector<std::uint64_t> all(WorldSize());
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < run.workers; ++r) {
    if (all[r] != all[0]) return false;
  }
  return true;
}

void ExpectUpdatedModel(const std::vector<Slice>& slices) {
  for (const Scheme& scheme : SchemesThisWorldRuns()) {
    SCOPED_TRACE(Describe(scheme));
    const SchemeRun run = RunScheme(scheme, slices);
    if (run.role == Role::kWorker) {
      EXPECT_EQ(FirstMismatch(run.params, ExpectedModel(run.params.size(), run.workers)), "");
    }
    EXPECT_TRUE(WorkersAgree(run)) << "workers' models differ";
  }
}

TEST(Exchange, EverySchemeAppliesTheMeanGradient) { ExpectUpdatedModel(MlpLayers()); }

TEST(Exchange, EverySchemeAppliesTheMeanGradientOfALayerInBlocks) {
  ExpectUpdatedModel(MlpSliced());
}

TEST(Exchange, EverySchemeHandlesFewerParametersThanWorkers) { ExpectUpdatedModel(TinyLayers()); }

// The trainer with overlap starts the next forward pass while the exchange
// ends; every slice it awaits must already be the new model, and the
// iteration's end must leave the same model as FinishIteration().
TEST(Exchange, EverySchemeInstallsEachSliceBeforeTheNextForwardPassReadsIt) {
  for (const Scheme& scheme : SchemesThisWorldRuns()) {
    SCOPED_TRACE(Describe(scheme));
    std::vector<std::string> mismatches;
    const SchemeRun run = RunScheme(scheme, MlpSliced(), nullptr, /*pipelined=*/true, &mismatches);
    const SchemeRun whole = RunScheme(scheme, MlpSliced());  // servers serve this one too
    if (run.role != Role::kWorker) continue;
    EXPECT_EQ(mismatches, std::vector<std::string>{});
    EXPECT_EQ(run.stats.size(), std::size_t(kIterations));
    EXPECT_EQ(FirstMismatch(run.params, ExpectedModel(run.params.size(), run.workers)), "");
    EXPECT_EQ(Fingerprint(run.params), Fingerprint(whole.params));
  }
}

TEST(Exchange, BeginIterationBeforeTheLastIterationCompletedIsRefused) {
  const std::vector<Slice> slices = MlpLayers();
  std::vector<float> params(1307, 0.0f), grads(1307, 0.0f);
  std::unique_ptr<Exchange> exchange =
      MakeExchange(OptionsFor({"ring", 0, true}, slices), params, grads, nullptr);
  exchange->BeginIteration();
  for (int s = 2; s >= 0; --s) exchange->SliceReady(s);
  exchange->FinishBackward();
  EXPECT_THROW(exchange->BeginIteration(), std::logic_error);
  exchange->CompleteIteration();
  EXPECT_NO_THROW(exchange->BeginIteration());
  exchange->FinishIteration();
}

TEST(Exchange, OverlapOffHidesNoCommunication) {
  for (const Scheme& scheme : SchemesThisWorldRuns()) {
    if (scheme.overlap) continue;
    SCOPED_TRACE(Describe(scheme));
    const SchemeRun run = RunScheme(scheme, MlpLayers());
    if (run.role == Role::kServer) continue;
    for (const ExchangeStats& stats : run.stats) {
      // The epoch's overlap ratio, max(0, comm - exposed) / comm, is then 0.
      EXPECT_LE(stats.comm_s, stats.exposed_comm_s);
      EXPECT_GT(stats.comm_s, 0.0);
      EXPECT_GE(stats.exchange_s, stats.exposed_comm_s - stats.update_s);
    }
  }
}

// Messages one worker sends per iteration with overlap off (one bucket).
TEST(Exchange, EachSchemeMovesItsMessagesPerIteration) {
  const std::size_t n = 1307;
  for (const Scheme& scheme : SchemesThisWorldRuns()) {
    if (scheme.overlap) continue;
    SCOPED_TRACE(Describe(scheme));
    const SchemeRun run = RunScheme(scheme, MlpLayers());
    const ExchangeStats& last = run.stats.back();
    const int w = run.workers;
    if (scheme.architecture == "ring" || scheme.architecture == "p2p") {
      // 2(w-1) messages of ~n/w floats each.
      EXPECT_EQ(last.messages_sent, static_cast<std::uint64_t>(2 * (w - 1)));
      EXPECT_NEAR(static_cast<double>(last.bytes_sent), 2.0 * (w - 1) * n / w * sizeof(float),
                  2.0 * w * sizeof(float));
    } else if (scheme.architecture == "ps" && run.role == Role::kWorker) {
      // The whole gradient, one part per server, and the whole model back.
      EXPECT_EQ(last.messages_sent, static_cast<std::uint64_t>(scheme.servers));
      EXPECT_EQ(last.bytes_sent, n * sizeof(float));
      EXPECT_EQ(last.bytes_received, n * sizeof(float));
    } else if (scheme.architecture == "ps") {
      // A server receives its shard from every worker and sends it back to each.
      const std::size_t s = static_cast<std::size_t>(WorldRank() - w);
      const std::size_t k = static_cast<std::size_t>(scheme.servers);
      const std::uint64_t shard_bytes = (n * (s + 1) / k - n * s / k) * sizeof(float);
      EXPECT_EQ(last.messages_sent, static_cast<std::uint64_t>(kIterations * w));
      EXPECT_EQ(last.bytes_received, kIterations * w * shard_bytes);
      EXPECT_EQ(last.bytes_sent, kIterations * w * shard_bytes);
    }
  }
}

// Every span name on each pid, counted.
std::map<int, std::map<std::string, int>> SpansPerRank(const nlohmann::json& trace) {
  std::map<int, std::map<std::string, int>> spans;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++spans[e["pid"].get<int>()][e["name"].get<std::string>()];
  }
  return spans;
}

TEST(Exchange, TimelineHoldsEachSchemesSteps) {
  const int buckets = 3;  // MlpLayers() with 16-byte buckets
  for (const Scheme& scheme : SchemesThisWorldRuns()) {
    if (!scheme.overlap) continue;
    SCOPED_TRACE(Describe(scheme));
    Timeline timeline(true);
    timeline.SetOrigin();
    const SchemeRun run = RunScheme(scheme, MlpLayers(), &timeline);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("dmlbench_exchange_" + std::to_string(getpid()) + ".json"))
                                 .string();
    timeline.Write(path, WorldRank(), {});
    if (WorldRank() != 0) continue;
    std::ifstream in(path);
    const auto spans = SpansPerRank(nlohmann::json::parse(in));
    std::filesystem::remove(path);
    const int w = run.workers;
    const int per_bucket = buckets * kIterations;
    for (int r = 0; r < WorldSize(); ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      std::map<std::string, int> expected;
      if (scheme.architecture == "ring") {
        expected = {{"exchange.wait", kIterations}, {"sgd.update", per_bucket}};
        if (w > 1) {
          expected["ring.reduce_scatter"] = (w - 1) * per_bucket;
          expected["ring.reduce"] = (w - 1) * per_bucket;
          expected["ring.allgather"] = (w - 1) * per_bucket;
        }
      } else if (scheme.architecture == "mpi") {
        expected = {{"exchange.wait", kIterations}, {"sgd.update", per_bucket},
                    {"mpi.iallreduce", per_bucket}};
      } else if (scheme.architecture == "p2p") {
        expected = {{"exchange.wait", kIterations}, {"p2p.install", per_bucket},
                    {"p2p.scatter", per_bucket}, {"p2p.reduce_update", per_bucket},
                    {"p2p.gather", per_bucket}};
      } else if (r < w) {
        expected = {{"exchange.wait", kIterations}, {"ps.install", per_bucket},
                    {"ps.push", per_bucket}, {"ps.pull", per_bucket}};
      } else {
        // A server holds the parts of buckets that meet its shard.
        EXPECT_EQ(spans.at(r).at("exchange.wait"), kIterations);
        EXPECT_GE(spans.at(r).at("ps.receive"), kIterations);
        EXPECT_EQ(spans.at(r).at("ps.reduce_update"), spans.at(r).at("ps.receive"));
        EXPECT_EQ(spans.at(r).at("ps.send"), spans.at(r).at("ps.receive"));
        continue;
      }
      EXPECT_EQ(spans.at(r), expected);
    }
  }
}

// Error paths of MakeExchange follow; every rank throws the same message.
ExchangeOptions ValidOptions() {
  return OptionsFor(Scheme{"ring", 0, false}, MlpLayers());
}

std::string MakeExchangeError(const ExchangeOptions& options, std::size_t parameters,
                              std::size_t gradients) {
  std::vector<float> params(parameters), grads(gradients);
  try {
    MakeExchange(options, params, grads, nullptr);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(MakeExchangeError, UnknownArchitecture) {
  ExchangeOptions options = ValidOptions();
  options.architecture = "allgather";
  EXPECT_EQ(MakeExchangeError(options, 1307, 1307),
            "unknown architecture \"allgather\" (expected ring, mpi, ps or p2p)");
}

TEST(MakeExchangeError, BucketSizeZero) {
  ExchangeOptions options = ValidOptions();
  options.bucket_bytes = 0;
  EXPECT_EQ(MakeExchangeError(options, 1307, 1307), "bucket size must be positive, got 0 bytes");
}

TEST(MakeExchangeError, BuffersOfDifferentLengths) {
  EXPECT_EQ(MakeExchangeError(ValidOptions(), 1307, 1306),
            "parameter buffer (1307 floats) and gradient buffer (1306 floats) differ in length");
}

TEST(MakeExchangeError, SlicesWithAGap) {
  ExchangeOptions options = ValidOptions();
  options.slices = {Slice{0, 1000}, Slice{1001, 306}};
  EXPECT_EQ(MakeExchangeError(options, 1307, 1307),
            "slices do not tile the parameter buffer: slice 1 starts at 1001, expected 1000");
}

TEST(MakeExchangeError, SlicesShorterThanTheBuffer) {
  EXPECT_EQ(MakeExchangeError(ValidOptions(), 1400, 1400), "slices cover 1307 of 1400 parameters");
}

TEST(MakeExchangeError, PsWithoutServers) {
  ExchangeOptions options = OptionsFor(Scheme{"ps", 0, false}, MlpLayers());
  EXPECT_EQ(MakeExchangeError(options, 1307, 1307), "ps needs at least 1 server, got 0");
}

TEST(MakeExchangeError, PsWithMoreServersThanParameters) {
  ExchangeOptions options = OptionsFor(Scheme{"ps", 4, false}, TinyLayers());
  options.slices = {Slice{0, 1}, Slice{1, 2}};
  EXPECT_EQ(MakeExchangeError(options, 3, 3),
            "ps with 4 servers needs at least 4 parameters (one per server), got 3");
}

TEST(MakeExchangeError, PsWithFewerRanksThanServersPlusOneWorker) {
  const int world = WorldSize();
  ExchangeOptions options = OptionsFor(Scheme{"ps", world, false}, MlpLayers());
  EXPECT_EQ(MakeExchangeError(options, 1307, 1307),
            "ps with " + std::to_string(world) + " servers needs at least " +
                std::to_string(world + 1) + " ranks (" + std::to_string(world) +
                " servers + 1 worker), got " + std::to_string(world));
}

TEST(ExchangeError, AWorkerDoesNotServe) {
  std::vector<float> params(1307), grads(1307);
  std::unique_ptr<Exchange> ring = MakeExchange(ValidOptions(), params, grads, nullptr);
  try {
    ring->Serve(1);
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()), "Serve() is for parameter-server ranks; rank " +
                                         std::to_string(WorldRank()) + " is a worker");
  }
}

TEST(ExchangeError, AServerDoesNotTrain) {
  if (WorldSize() < 2) GTEST_SKIP() << "ps needs 2 ranks";
  std::vector<float> params(1307), grads(1307);
  std::unique_ptr<Exchange> ps =
      MakeExchange(OptionsFor(Scheme{"ps", 1, false}, MlpLayers()), params, grads, nullptr);
  if (ps->role() == Role::kWorker) return;
  try {
    ps->BeginIteration();
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(WorldRank()) +
                                         " is a parameter server: it serves, it does not train");
  }
}

}  // namespace
}  // namespace dmlbench
