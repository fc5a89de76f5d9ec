// The real dmlbench-trainer through real mpirun: bad input gives exactly one
// line from rank 0 and a non-zero exit; a good run writes the events
// schemas/trainer-events.md documents. mpirun -q adds nothing of its own to
// stderr; odls_base_sigkill_timeout 0 spares the 2 s mpirun otherwise waits
// before ending a job whose ranks all exit 1 on their own; MPIEXEC_TIMEOUT
// makes mpirun end a job that hangs, so the test fails instead of waiting for
// CTest. The checksum mode (--dataset-sha256) runs the binary alone.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/cpu_quota.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
  double wall_s = 0;
};

// Longest an mpirun job here may take; they take 1-10 s on a loaded machine.
constexpr int kJobTimeoutS = 120;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TrainerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dmlbench-cli-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `command` through the shell with its stdout and stderr captured.
  Outcome Execute(const std::string& command) {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const auto start = std::chrono::steady_clock::now();
    const int status =
        std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
    Outcome outcome;
    outcome.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    outcome.out = Slurp(out);
    outcome.err = Slurp(err);
    return outcome;
  }

  Outcome Run(int ranks, const std::string& args) {
    Outcome outcome = Execute(
        "MPIEXEC_TIMEOUT=" + std::to_string(kJobTimeoutS) + " " + DMLBENCH_MPIRUN +
        " -q --oversubscribe --mca btl self,tcp --mca odls_base_sigkill_timeout 0 -np " +
        std::to_string(ranks) + " " + DMLBENCH_TRAINER + " " + args);
    // With -q mpirun ends a timed-out job without a word: say it here.
    if (outcome.wall_s >= kJobTimeoutS)
      ADD_FAILURE() << "mpirun ended the job after " << kJobTimeoutS << " s (hung?): -np "
                    << ranks << " " << args;
    return outcome;
  }

  // The binary alone, without mpirun; `environment` ("NAME=value ") is set
  // for it only.
  Outcome RunAlone(const std::string& args, const std::string& environment = "") {
    return Execute(environment + DMLBENCH_TRAINER + " " + args);
  }

  // Runs a command that must fail; returns its stderr, less the warnings
  // that mpirun's own event library prints now and then when a rank exits
  // with an error ("[warn] Epoll MOD(1) on fd 25 failed. ... Bad file
  // descriptor": a race in Open MPI's teardown after an abnormal exit,
  // open-mpi/ompi#2004), which are not the trainer's words.
  std::string Error(int ranks, const std::string& args) {
    Outcome outcome = Run(ranks, args);
    EXPECT_NE(outcome.exit_code, 0) << args;
    EXPECT_EQ(outcome.out, "") << args;
    std::istringstream lines(outcome.err);
    std::string err;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("[warn] Epoll ", 0) != 0) err += line + "\n";
    }
    // The trainer's last line as it ended, with or without its newline.
    if (!outcome.err.empty() && outcome.err.back() != '\n' && !err.empty()) err.pop_back();
    return err;
  }

  void WriteIdx(const std::string& name, std::vector<std::uint32_t> dims,
                const std::vector<std::uint8_t>& data) {
    std::vector<std::uint8_t> bytes = {0, 0, 0x08, static_cast<std::uint8_t>(dims.size())};
    for (std::uint32_t d : dims)
      for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(d >> shift));
    bytes.insert(bytes.end(), data.begin(), data.end());
    std::ofstream(dir_ / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }

  std::vector<json> Events(const std::string& text) {
    std::vector<json> events;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
    return events;
  }

  fs::path dir_;
};

// Error paths of main.cc and trainer.cc follow: the whole of stderr is compared.

TEST_F(TrainerCli, UnknownArchitecture) {
  EXPECT_EQ(Error(2, "--synthetic 50 --architecture foo"),
            "dmlbench-trainer: error: unknown architecture \"foo\" (expected ring, mpi, ps or p2p)\n");
}

TEST_F(TrainerCli, BatchSizeBelowOne) {
  EXPECT_EQ(Error(2, "--synthetic 50 --batch-size 0"),
            "dmlbench-trainer: error: --batch-size must be at least 1, got 0\n");
}

TEST_F(TrainerCli, MoreWorkersThanSamples) {
  EXPECT_EQ(Error(4, "--synthetic 3 --batch-size 1"),
            "dmlbench-trainer: error: the training set has 3 samples, fewer than one global "
            "batch of 4 (batch size 1 x 4 workers)\n");
}

TEST_F(TrainerCli, MissingDatasetDirectory) {
  EXPECT_EQ(Error(2, "--dataset no/such/dir"),
            "dmlbench-trainer: error: no/such/dir: dataset directory does not exist\n");
}

TEST_F(TrainerCli, CorruptDatasetFile) {
  WriteIdx("train-images-idx3-ubyte", {3, 2, 2}, std::vector<std::uint8_t>(12, 7));
  WriteIdx("train-labels-idx1-ubyte", {3}, {1, 2, 3});
  WriteIdx("t10k-images-idx3-ubyte", {1, 2, 2}, {1, 2, 3, 4});
  WriteIdx("t10k-labels-idx1-ubyte", {1}, {});  // one label declared, none present
  EXPECT_EQ(Error(2, "--dataset " + dir_.string()),
            "dmlbench-trainer: error: " + (dir_ / "t10k-labels-idx1-ubyte").string() +
                ": byte 8: file ends after 0 of 1 data bytes (dimensions 1)\n");
}

TEST_F(TrainerCli, NoTrainingData) {
  EXPECT_EQ(Error(1, "--epochs 1"),
            "dmlbench-trainer: error: give the training data: --dataset DIR or --synthetic N\n");
}

TEST_F(TrainerCli, DatasetAndSyntheticExcludeEachOther) {
  EXPECT_EQ(Error(1, "--dataset x --synthetic 5"),
            "dmlbench-trainer: error: --dataset excludes --synthetic\n");
}

TEST_F(TrainerCli, NotANumber) {
  EXPECT_EQ(Error(1, "--synthetic 50 --epochs many"),
            "dmlbench-trainer: error: Could not convert: --epochs = many\n");
}

TEST_F(TrainerCli, SyntheticBelowOne) {
  EXPECT_EQ(Error(1, "--synthetic 0"),
            "dmlbench-trainer: error: --synthetic must be at least 1 sample, got 0\n");
}

TEST_F(TrainerCli, EpochsBelowOne) {
  EXPECT_EQ(Error(1, "--synthetic 50 --epochs 0"),
            "dmlbench-trainer: error: --epochs must be at least 1, got 0\n");
}

TEST_F(TrainerCli, HiddenWidthBelowOne) {
  EXPECT_EQ(Error(1, "--synthetic 50 --hidden 64,0"),
            "dmlbench-trainer: error: --hidden needs one or more layer widths of at least 1, "
            "got \"64,0\"\n");
}

TEST_F(TrainerCli, LearningRateNotPositive) {
  EXPECT_EQ(Error(1, "--synthetic 50 --learning-rate -0.5"),
            "dmlbench-trainer: error: --learning-rate must be a positive number, got -0.5\n");
}

TEST_F(TrainerCli, NegativeIterationCap) {
  EXPECT_EQ(Error(1, "--synthetic 50 --max-iterations-per-epoch -1"),
            "dmlbench-trainer: error: --max-iterations-per-epoch must be 0 (no cap) or more, "
            "got -1\n");
}

TEST_F(TrainerCli, NegativeWarmupIterations) {
  EXPECT_EQ(Error(1, "--synthetic 50 --epochs 2 --warmup-iterations -1"),
            "dmlbench-trainer: error: --warmup-iterations must be 0 (a whole epoch) or more, got -1\n");
}

TEST_F(TrainerCli, WarmupIterationsWithOneEpoch) {
  EXPECT_EQ(Error(1, "--synthetic 50 --warmup-iterations 3"),
            "dmlbench-trainer: error: --warmup-iterations needs 2 or more --epochs (epoch 1 is the warm-up "
            "only when later epochs follow), got 1\n");
}

TEST_F(TrainerCli, NegativeQuotaWait) {
  EXPECT_EQ(Error(1, "--synthetic 50 --await-cpu-quota-s -2"),
            "dmlbench-trainer: error: --await-cpu-quota-s must be 0 (no wait) or a positive number of "
            "seconds, got -2\n");
}

TEST_F(TrainerCli, ServersWithoutPs) {
  EXPECT_EQ(Error(2, "--synthetic 50 --servers 1"),
            "dmlbench-trainer: error: --servers is only for the ps architecture, got 1 with ring\n");
}

TEST_F(TrainerCli, PullsInTurnOnlyForOneServerThatAnswersTheWholeGradient) {
  const std::string expected =
      "dmlbench-trainer: error: --pulls-in-turn is for a parameter server that answers the whole gradient at "
      "once: ps with --servers 1, without --overlap and --partition-bytes\n";
  EXPECT_EQ(Error(2, "--synthetic 50 --pulls-in-turn"), expected);
  EXPECT_EQ(Error(3, "--synthetic 50 --architecture ps --servers 2 --pulls-in-turn"), expected);
  EXPECT_EQ(Error(2, "--synthetic 50 --architecture ps --servers 1 --overlap --pulls-in-turn"), expected);
  EXPECT_EQ(Error(2, "--synthetic 50 --architecture ps --servers 1 --partition-bytes 4096 --pulls-in-turn"),
            expected);
}

TEST_F(TrainerCli, EventsFileCannotBeOpened) {
  EXPECT_EQ(Error(2, "--synthetic 50 --events no/such/dir/events.jsonl"),
            "dmlbench-trainer: error: cannot open events file no/such/dir/events.jsonl: "
            "No such file or directory\n");
}

// A good run: every documented field is there, with its type and meaning.
TEST_F(TrainerCli, EventsFollowTheSchema) {
  const fs::path events_path = dir_ / "events.jsonl";
  Outcome outcome = Run(2, "--synthetic 200 --epochs 2 --batch-size 10 --hidden 16,8 "
                           "--learning-rate 0.1 --max-iterations-per-epoch 3 --quiet --events " +
                           events_path.string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.err, "");
  std::vector<json> events = Events(Slurp(events_path));
  ASSERT_EQ(events.size(), 4u);
  for (const json& event : events) EXPECT_EQ(event.at("format_version"), 1);

  const json& start = events[0];
  EXPECT_EQ(start.at("event"), "run_start");
  EXPECT_TRUE(start.at("time_unix_s").is_number_float());
  const json& config = start.at("config");
  EXPECT_EQ(config.at("architecture"), "ring");
  EXPECT_EQ(config.at("servers"), 0);
  EXPECT_EQ(config.at("batch_size"), 10);
  EXPECT_EQ(config.at("epochs"), 2);
  EXPECT_EQ(config.at("hidden"), json::array({16, 8}));
  EXPECT_DOUBLE_EQ(config.at("learning_rate").get<double>(), 0.1f);
  EXPECT_EQ(config.at("seed"), 1);
  EXPECT_EQ(config.at("max_iterations_per_epoch"), 3);
  EXPECT_EQ(config.at("warmup_iterations"), 0);
  EXPECT_EQ(config.at("overlap"), false);
  EXPECT_EQ(config.at("bucket_bytes"), 65536);
  EXPECT_EQ(config.at("dataset"), "synthetic");
  EXPECT_EQ(config.at("evaluate"), true);
  const int parameters = 785 * 16 + 17 * 8 + 9 * 10;
  EXPECT_EQ(start.at("parameters"), parameters);
  EXPECT_EQ(start.at("parameter_bytes"), 4 * parameters);
  EXPECT_EQ(start.at("layers"),
            json::parse(R"([{"name":"fc1","inputs":784,"outputs":16,"offset":0,"count":12560},
                            {"name":"fc2","inputs":16,"outputs":8,"offset":12560,"count":136},
                            {"name":"fc3","inputs":8,"outputs":10,"offset":12696,"count":90}])"));
  EXPECT_EQ(start.at("world_size"), 2);
  EXPECT_EQ(start.at("workers"), 2);
  EXPECT_EQ(start.at("servers"), 0);
  EXPECT_EQ(start.at("iterations_per_epoch"), 3);
  EXPECT_EQ(start.at("train_samples"), 200);
  EXPECT_EQ(start.at("test_samples"), 33);
  EXPECT_EQ(start.at("dataset_sha256"), "synthetic:1:200");
  EXPECT_NE(start.at("mpi_library_version").get<std::string>().find("Open MPI"), std::string::npos);
  EXPECT_EQ(start.at("mpi_library_version").get<std::string>().find('\n'), std::string::npos);
  ASSERT_EQ(start.at("hosts").size(), 2u);
  EXPECT_FALSE(start.at("hosts")[0].get<std::string>().empty());
  EXPECT_EQ(start.at("roles"), json::array({"worker", "worker"}));
  EXPECT_EQ(start.at("threads"), 1);

  for (int e = 1; e <= 2; ++e) {
    const json& epoch = events[e];
    EXPECT_EQ(epoch.at("event"), "epoch");
    EXPECT_EQ(epoch.at("epoch"), e);
    EXPECT_EQ(epoch.at("iterations"), 3);
    EXPECT_EQ(epoch.at("samples"), 60);
    const double wall = epoch.at("wall_s");
    EXPECT_GT(wall, 0);
    EXPECT_DOUBLE_EQ(epoch.at("throughput_samples_per_s").get<double>(), 60 / wall);
    EXPECT_GT(epoch.at("loss").get<double>(), 0);
    const double accuracy = epoch.at("test_accuracy");
    EXPECT_TRUE(accuracy >= 0 && accuracy <= 1) << accuracy;
    EXPECT_GE(epoch.at("eval_s").get<double>(), 0);
    for (const char* phase : {"forward", "backward", "exchange", "update", "exposed_comm", "comm"}) {
      const json& p = epoch.at("phases").at(phase);
      EXPECT_LE(p.at("min_s").get<double>(), p.at("mean_s").get<double>()) << phase;
      EXPECT_LE(p.at("mean_s").get<double>(), p.at("max_s").get<double>()) << phase;
    }
    EXPECT_GT(epoch.at("phases").at("forward").at("min_s").get<double>(), 0);
    EXPECT_EQ(epoch.at("overlap_ratio"), 0.0);
    ASSERT_EQ(epoch.at("ranks").size(), 2u);
    for (int r = 0; r < 2; ++r) {
      const json& rank = epoch.at("ranks")[r];
      EXPECT_EQ(rank.at("rank"), r);
      EXPECT_EQ(rank.at("role"), "worker");
      for (const char* field : {"forward_s", "backward_s", "exchange_s", "update_s",
                                "exposed_comm_s", "comm_s", "wait_s"})
        EXPECT_GE(rank.at(field).get<double>(), 0) << field;
      // Ring on 2 ranks: per iteration 2(w-1) = 2 messages of W/2 floats.
      EXPECT_EQ(rank.at("messages_sent"), 3 * 2);
      EXPECT_EQ(rank.at("bytes_sent"), 3 * 2 * (parameters / 2) * 4);
      EXPECT_EQ(rank.at("bytes_received"), rank.at("bytes_sent"));
      // The rank's process CPU time over the epoch: some, and no more than
      // every core of the machine for the whole epoch.
      const double cpu = rank.at("cpu_s").get<double>();
      EXPECT_GT(cpu, 0);
      EXPECT_LE(cpu, wall * std::max(1u, std::thread::hardware_concurrency()) + 0.01);
    }
    // Rank 0's wall time of each of the 3 iterations, whole microseconds.
    const json& times = epoch.at("iteration_wall_us");
    ASSERT_EQ(times.size(), 3u);
    std::int64_t sum_us = 0;
    for (const json& t : times) {
      ASSERT_TRUE(t.is_number_integer()) << t;
      EXPECT_GE(t.get<std::int64_t>(), 0);
      sum_us += t.get<std::int64_t>();
    }
    EXPECT_GT(sum_us, 0);
    EXPECT_LE(double(sum_us), wall * 1e6 + 1.5);
  }
  EXPECT_LT(events[2].at("loss").get<double>(), events[1].at("loss").get<double>());

  const json& end = events[3];
  EXPECT_EQ(end.at("event"), "run_end");
  EXPECT_EQ(end.at("status"), "ok");
  EXPECT_FALSE(end.contains("error"));
  EXPECT_EQ(end.at("parameter_checksum").get<std::string>().size(), 64u);
  EXPECT_GT(end.at("total_wall_s").get<double>(), 0);
  EXPECT_GT(end.at("peak_rss_bytes").get<std::int64_t>(), 1 << 20);
  // Rank 0's phases add up to the whole run, and the epochs' part holds
  // every epoch's wall time and evaluation.
  const json& phases = end.at("phases");
  double sum = 0;
  for (const char* phase : {"mpi_init_s", "dataset_load_s", "setup_s", "epochs_s", "teardown_s"}) {
    EXPECT_GE(phases.at(phase).get<double>(), 0) << phase;
    sum += phases.at(phase).get<double>();
  }
  EXPECT_NEAR(sum, end.at("total_wall_s").get<double>(), 1e-6);
  double epochs = 0;
  for (int e = 1; e <= 2; ++e)
    epochs += events[e].at("wall_s").get<double>() + events[e].at("eval_s").get<double>();
  // (each rank times its own epochs; rank 0 may leave a barrier a poll later)
  EXPECT_GE(phases.at("epochs_s").get<double>() + 0.01, epochs);
}

TEST_F(TrainerCli, SameSeedSameChecksumAndEventsOnStdout) {
  const std::string args = "--synthetic 120 --epochs 1 --batch-size 5 --hidden 8 "
                           "--max-iterations-per-epoch 4 --no-evaluate --events -";
  Outcome first = Run(2, args);
  Outcome second = Run(2, args);
  Outcome other_seed = Run(2, args + " --seed 2");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<json> a = Events(first.out), b = Events(second.out), c = Events(other_seed.out);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(a[1].at("test_accuracy").is_null());
  EXPECT_EQ(a[2].at("parameter_checksum"), b[2].at("parameter_checksum"));
  EXPECT_NE(a[2].at("parameter_checksum"), c[2].at("parameter_checksum"));
  // Progress goes to stderr, one header and one line per epoch, then a summary.
  EXPECT_NE(first.err.find("ring, 2 workers, local batch 5, 784-8-10"), std::string::npos)
      << first.err;
  EXPECT_NE(first.err.find(a[2].at("parameter_checksum").get<std::string>()), std::string::npos);
}

// --run given twice: one job trains both runs in turn, each reported as a
// run of its own, and each computes what it computes alone; the second has
// no MPI_Init of its own.
TEST_F(TrainerCli, SeveralRunsInOneJobEachTrainAsTheyWouldAlone) {
  const std::string common = "--synthetic 120 --no-evaluate --events - --quiet ";
  const std::string ring = "--architecture ring --epochs 2 --batch-size 5 --hidden 8 --max-iterations-per-epoch 4";
  const std::string mpi = "--architecture mpi --epochs 1 --batch-size 6 --hidden 8 --seed 3 "
                          "--max-iterations-per-epoch 4";
  Outcome both = Run(2, common + "--run '" + ring + "' --run='" + mpi + "'");
  Outcome ring_alone = Run(2, common + ring);
  Outcome mpi_alone = Run(2, common + mpi);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  ASSERT_EQ(ring_alone.exit_code, 0) << ring_alone.err;
  ASSERT_EQ(mpi_alone.exit_code, 0) << mpi_alone.err;
  const std::vector<json> events = Events(both.out);
  ASSERT_EQ(events.size(), 4u + 3u);
  EXPECT_EQ(events[0].at("event"), "run_start");
  EXPECT_EQ(events[0].at("config").at("architecture"), "ring");
  EXPECT_EQ(events[3].at("event"), "run_end");
  EXPECT_EQ(events[4].at("event"), "run_start");
  EXPECT_EQ(events[4].at("config").at("architecture"), "mpi");
  EXPECT_EQ(events[4].at("config").at("batch_size"), 6);
  EXPECT_EQ(events[4].at("config").at("seed"), 3);
  EXPECT_EQ(events[6].at("event"), "run_end");
  EXPECT_EQ(events[3].at("parameter_checksum"), Events(ring_alone.out).back().at("parameter_checksum"));
  EXPECT_EQ(events[6].at("parameter_checksum"), Events(mpi_alone.out).back().at("parameter_checksum"));
  EXPECT_GT(events[3].at("phases").at("mpi_init_s").get<double>(), 0);
  EXPECT_EQ(events[6].at("phases").at("mpi_init_s").get<double>(), 0);
}

// A run that fails ends the job: the run before it stays reported as ok,
// the one after it is not trained.
TEST_F(TrainerCli, ARunThatFailsEndsTheJob) {
  const std::string run = "--epochs 1 --hidden 8 --max-iterations-per-epoch 2 --batch-size ";
  Outcome outcome = Run(2, "--synthetic 20 --no-evaluate --events - --quiet --run '" + run + "5' --run '" + run +
                               "50' --run '" + run + "5'");
  EXPECT_NE(outcome.exit_code, 0);
  const std::vector<json> events = Events(outcome.out);
  ASSERT_EQ(events.size(), 3u + 1u);
  EXPECT_EQ(events[2].at("status"), "ok");
  EXPECT_EQ(events[3].at("event"), "run_end");
  EXPECT_EQ(events[3].at("status"), "error");
  EXPECT_NE(outcome.err.find("fewer than one global batch of 100"), std::string::npos) << outcome.err;
}

// A bad --run is refused before any run is trained, naming which.
TEST_F(TrainerCli, ABadRunNamesWhichRunIsBad) {
  EXPECT_EQ(Error(2, "--synthetic 20 --run '--epochs 1' --run '--epochs 0'"),
            "dmlbench-trainer: error: --run 2: --epochs must be at least 1, got 0\n");
  EXPECT_EQ(Error(2, "--synthetic 20 --run '--epochs 1 --run 2'"),
            "dmlbench-trainer: error: --run 1: --run cannot hold another --run\n");
}

TEST_F(TrainerCli, DefaultLearningRateIsTheExperimentMatrixDefault) {
  Outcome outcome = Run(1, "--synthetic 20 --batch-size 10 --hidden 4 --no-evaluate --quiet "
                           "--events -");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::vector<json> events = Events(outcome.out);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_DOUBLE_EQ(events[0].at("config").at("learning_rate").get<double>(), 0.05f);
}

TEST_F(TrainerCli, OverlapBucketsAndTimeline) {
  const fs::path timeline_path = dir_ / "timeline.json";
  Outcome outcome = Run(2, "--architecture mpi --overlap --bucket-bytes 1024 --synthetic 60 "
                           "--batch-size 5 --hidden 8 --max-iterations-per-epoch 2 --quiet "
                           "--events - --timeline " + timeline_path.string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::vector<json> events = Events(outcome.out);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].at("config").at("architecture"), "mpi");
  EXPECT_EQ(events[0].at("config").at("overlap"), true);
  EXPECT_EQ(events[0].at("config").at("bucket_bytes"), 1024);
  const double ratio = events[1].at("overlap_ratio");
  EXPECT_TRUE(ratio >= 0 && ratio <= 1) << ratio;
  // Both ranks' forward and backward spans are in the trace.
  json trace = json::parse(Slurp(timeline_path));
  int forward[2] = {0, 0}, backward[2] = {0, 0};
  for (const json& span : trace.at("traceEvents")) {
    if (!span.contains("name") || !span.contains("pid") || !span.at("pid").is_number()) continue;
    const int pid = span.at("pid");
    if (pid < 0 || pid > 1) continue;
    forward[pid] += span.at("name") == "forward";
    backward[pid] += span.at("name") == "backward";
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(forward[r], 2) << "rank " << r;
    EXPECT_EQ(backward[r], 2) << "rank " << r;
  }
}

// Epoch 1 runs its own cap of iterations (under the per-epoch cap too),
// and every later epoch the whole of it, on every scheme's ranks alike.
TEST_F(TrainerCli, WarmupIterationsCapEpochOneOnly) {
  for (const std::string& scheme : {"--architecture ring", "--architecture ps --servers 1"}) {
    const fs::path events_path = dir_ / "events.jsonl";
    Outcome outcome = Run(3, "--synthetic 200 --epochs 3 --batch-size 10 --hidden 8 --warmup-iterations 2 --quiet " +
                                 scheme + " --events " + events_path.string());
    ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
    const std::vector<json> events = Events(Slurp(events_path));
    ASSERT_EQ(events.size(), 5u) << scheme;
    const int workers = scheme.find("ps") != std::string::npos ? 2 : 3;
    const std::int64_t whole = 200 / (10 * workers);
    EXPECT_EQ(events[0].at("iterations_per_epoch"), whole) << scheme;
    EXPECT_EQ(events[0].at("config").at("warmup_iterations"), 2) << scheme;
    const std::vector<std::int64_t> expected = {2, whole, whole};
    for (int e = 1; e <= 3; ++e) {
      const json& epoch = events[std::size_t(e)];
      EXPECT_EQ(epoch.at("epoch"), e);
      EXPECT_EQ(epoch.at("iterations"), expected[std::size_t(e - 1)]) << scheme << " epoch " << e;
      EXPECT_EQ(epoch.at("samples"), expected[std::size_t(e - 1)] * 10 * workers) << scheme << " epoch " << e;
      EXPECT_EQ(epoch.at("iteration_wall_us").size(), std::size_t(expected[std::size_t(e - 1)]));
      EXPECT_GT(epoch.at("start_unix_s").get<double>(), events[0].at("time_unix_s").get<double>() - 1);
    }
    EXPECT_LT(events[1].at("start_unix_s").get<double>(), events[2].at("start_unix_s").get<double>());
    EXPECT_EQ(events[4].at("status"), "ok") << scheme;
  }
  const fs::path events_path = dir_ / "capped.jsonl";
  ASSERT_EQ(Run(1, "--synthetic 200 --epochs 2 --batch-size 10 --max-iterations-per-epoch 3 "
                   "--warmup-iterations 5 --quiet --events " + events_path.string())
                .exit_code,
            0);
  const std::vector<json> capped = Events(Slurp(events_path));
  ASSERT_EQ(capped.size(), 4u);
  EXPECT_EQ(capped[1].at("iterations"), 3);
  EXPECT_EQ(capped[2].at("iterations"), 3);
}

// Without a CPU quota coming, the wait before epoch 2 ends the run on every
// rank with one message after epoch 1, and run_end says why.
TEST_F(TrainerCli, AwaitCpuQuotaFailsWhenNoQuotaComes) {
  const std::optional<dmlbench::QuotaCounters> here = dmlbench::CpuQuota().Read();
  if (here && here->quota_set) GTEST_SKIP() << "this process's cgroup has a CPU quota already";
  const fs::path events_path = dir_ / "events.jsonl";
  const std::string expected =
      here ? "the CPU quota of rank 0's cgroup was not in force 0.2 s after the warm-up epoch "
             "(--await-cpu-quota-s); the measured epochs would run uncapped"
           : "rank 0 has no CPU cgroup to read a quota from, which --await-cpu-quota-s waits for";
  EXPECT_EQ(Error(2, "--synthetic 200 --epochs 2 --batch-size 10 --warmup-iterations 1 --await-cpu-quota-s 0.2 --quiet "
                     "--events " + events_path.string()),
            "dmlbench-trainer: error: " + expected + "\n");
  const std::vector<json> events = Events(Slurp(events_path));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].at("epoch"), 1);
  EXPECT_EQ(events[2].at("event"), "run_end");
  EXPECT_EQ(events[2].at("status"), "error");
  EXPECT_EQ(events[2].at("error"), expected);
}

TEST_F(TrainerCli, ErrorAfterEventsOpenedWritesRunEnd) {
  const fs::path events_path = dir_ / "events.jsonl";
  EXPECT_EQ(Error(4, "--synthetic 3 --batch-size 1 --events " + events_path.string()),
            "dmlbench-trainer: error: the training set has 3 samples, fewer than one global "
            "batch of 4 (batch size 1 x 4 workers)\n");
  std::vector<json> events = Events(Slurp(events_path));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("event"), "run_end");
  EXPECT_EQ(events[0].at("status"), "error");
  EXPECT_EQ(events[0].at("error"),
            "the training set has 3 samples, fewer than one global batch of 4 (batch size 1 x 4 "
            "workers)");
  EXPECT_FALSE(events[0].contains("parameter_checksum"));
  EXPECT_FALSE(events[0].contains("phases"));
}

TEST_F(TrainerCli, MpiInitOpensOnlyTheOb1PointToPointLayer) {
  // Open MPI's own account of its choice (pml_base_verbose, on stderr):
  // other layers are not even opened.
  const Outcome outcome = Execute("OMPI_MCA_pml_base_verbose=10 MPIEXEC_TIMEOUT=" + std::to_string(kJobTimeoutS) + " " +
                    DMLBENCH_MPIRUN + " -q --oversubscribe -np 2 " + DMLBENCH_TRAINER +
                    " --synthetic 20 --batch-size 5 --hidden 4 --max-iterations-per-epoch 1 --no-evaluate --quiet");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.err.find("select: component ob1 selected"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.err.find("found loaded component cm"), std::string::npos) << outcome.err;
}

// A run through a dataset cache: the first decodes the files and keeps them,
// the second maps that copy; both train on the same data as a run without
// the cache, so their events report the same checksum and losses.
TEST_F(TrainerCli, ADatasetCacheChangesNothingARunReports) {
  const std::string args = "--dataset " + std::string(DMLBENCH_DATASET_DIR) +
                           " --hidden 8 --max-iterations-per-epoch 20 --epochs 2 --quiet --events -";
  const std::string cache = " --dataset-cache " + (dir_ / "cache").string();
  Outcome plain = Run(2, args), first = Run(2, args + cache), second = Run(2, args + cache);
  for (const Outcome* outcome : {&plain, &first, &second}) ASSERT_EQ(outcome->exit_code, 0) << outcome->err;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "cache"), fs::directory_iterator()), 1);
  const std::vector<json> a = Events(plain.out), b = Events(first.out), c = Events(second.out);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);
  ASSERT_EQ(c.size(), 4u);
  for (const std::vector<json>* events : {&b, &c}) {
    EXPECT_EQ((*events)[0].at("dataset_sha256"), a[0].at("dataset_sha256"));
    EXPECT_EQ((*events)[0].at("config").at("dataset"), a[0].at("config").at("dataset"));
    for (int epoch = 1; epoch <= 2; ++epoch) {
      EXPECT_EQ((*events)[epoch].at("loss"), a[epoch].at("loss")) << "epoch " << epoch;
      EXPECT_EQ((*events)[epoch].at("test_accuracy"), a[epoch].at("test_accuracy")) << "epoch " << epoch;
    }
    EXPECT_EQ((*events)[3].at("parameter_checksum"), a[3].at("parameter_checksum"));
  }
}

// --dataset-sha256 DIR: the checksum a run reports, without MPI.

TEST_F(TrainerCli, DatasetSha256IsTheChecksumRunStartReports) {
  const std::string dataset = DMLBENCH_DATASET_DIR;
  Outcome printed = RunAlone("--dataset-sha256 " + dataset);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(printed.err, "");
  Outcome run = Run(1, "--dataset " + dataset + " --hidden 8 --max-iterations-per-epoch 1 "
                       "--no-evaluate --quiet --events -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<json> events = Events(run.out);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(printed.out, events[0].at("dataset_sha256").get<std::string>() + "\n");
}

TEST_F(TrainerCli, DatasetSha256NeedsNoMpi) {
  // An unknown point-to-point layer makes MPI_Init fail, as the training
  // mode shows; the checksum mode does not notice.
  const std::string broken_mpi = "OMPI_MCA_pml=no_such_pml ";
  EXPECT_NE(RunAlone("--synthetic 10 --quiet", broken_mpi).exit_code, 0);
  Outcome printed = RunAlone("--dataset-sha256=" + std::string(DMLBENCH_DATASET_DIR), broken_mpi);
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(printed.err, "");
  EXPECT_EQ(printed.out, RunAlone("--dataset-sha256 " + std::string(DMLBENCH_DATASET_DIR)).out);
}

// Error paths of the checksum mode follow: the whole of stderr is compared.

TEST_F(TrainerCli, DatasetSha256NamesTheMissingFile) {
  WriteIdx("train-images-idx3-ubyte", {3, 2, 2}, std::vector<std::uint8_t>(12, 7));
  WriteIdx("train-labels-idx1-ubyte", {3}, {1, 2, 3});
  WriteIdx("t10k-images-idx3-ubyte", {1, 2, 2}, {1, 2, 3, 4});
  Outcome outcome = RunAlone("--dataset-sha256 " + dir_.string());
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err,
            "dmlbench-trainer: error: " + dir_.string() +
                ": neither t10k-labels-idx1-ubyte.gz nor t10k-labels-idx1-ubyte found\n");
}

TEST_F(TrainerCli, DatasetSha256WithoutDirectory) {
  Outcome outcome = RunAlone("--dataset-sha256");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err, "dmlbench-trainer: error: --dataset-sha256: 1 required TEXT missing\n");
}

TEST_F(TrainerCli, DatasetSha256TakesNoTrainingOptions) {
  Outcome outcome = RunAlone("--dataset-sha256 " + dir_.string() + " --epochs 3");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err,
            "dmlbench-trainer: error: The following arguments were not expected: 3 --epochs\n");
}

TEST_F(TrainerCli, DatasetSha256ToFullStandardOutput) {
  // Every write to /dev/full fails (ENOSPC).
  Outcome outcome = Execute(std::string("(") + DMLBENCH_TRAINER + " --dataset-sha256 " +
                            DMLBENCH_DATASET_DIR + " >/dev/full)");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err, "dmlbench-trainer: error: cannot write to standard output\n");
}

}  // namespace
