#include "trainer/events.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dmlbench {
namespace {

RankEpochStats Rank(int rank, const char* role, double forward_s) {
  RankEpochStats stats;
  stats.rank = rank;
  stats.role = role;
  stats.forward_s = forward_s;
  return stats;
}

TEST(Events, PhasesAggregateOverWorkersOnly) {
  EpochEvent event;
  event.epoch = 3;
  event.iterations = 10;
  event.samples = 2000;
  event.wall_s = 4;
  event.ranks = {Rank(0, "worker", 1.0), Rank(1, "worker", 3.0), Rank(2, "server", 100.0)};
  nlohmann::json json = ToJson(event);
  EXPECT_EQ(json["phases"]["forward"],
            nlohmann::json::parse(R"({"max_s": 3.0, "mean_s": 2.0, "min_s": 1.0})"));
  EXPECT_EQ(json["throughput_samples_per_s"], 500.0);
  EXPECT_TRUE(json["test_accuracy"].is_null());
  EXPECT_EQ(json["ranks"][2]["role"], "server");
  EXPECT_EQ(json["ranks"][2]["forward_s"], 100.0);
}

TEST(Events, IterationTimesAreAnArrayOfWholeMicroseconds) {
  EpochEvent event;
  event.iterations = 3;
  event.iteration_wall_us = {2500, 1200, 1187};
  EXPECT_EQ(ToJson(event)["iteration_wall_us"].dump(), "[2500,1200,1187]");
  event.iterations = 0;
  event.iteration_wall_us.clear();
  EXPECT_EQ(ToJson(event)["iteration_wall_us"].dump(), "[]");
}

TEST(Events, RunEndCarriesErrorOnlyOnFailure) {
  RunEndEvent ok{"ok", "", std::string(64, 'a'), 1.5, 1000};
  EXPECT_EQ(ToJson(ok).dump(),
            R"({"event":"run_end","format_version":1,"parameter_checksum":")" +
                std::string(64, 'a') + R"(","peak_rss_bytes":1000,"status":"ok","total_wall_s":1.5})");
  RunEndEvent failed{"error", "bad input", std::nullopt, 0.5, 10};
  EXPECT_EQ(ToJson(failed).dump(),
            R"({"error":"bad input","event":"run_end","format_version":1,"peak_rss_bytes":10,)"
            R"("status":"error","total_wall_s":0.5})");
}

TEST(Events, RunEndCarriesPhasesWhenGiven) {
  RunEndEvent ok{"ok", "", std::string(64, 'a'), 1.5, 1000};
  ok.phases = RunPhases{0.25, 0.5, 0.125, 0.5, 0.125};
  EXPECT_EQ(ToJson(ok)["phases"].dump(),
            R"({"dataset_load_s":0.5,"epochs_s":0.5,"mpi_init_s":0.25,"setup_s":0.125,"teardown_s":0.125})");
}

TEST(Events, RunStartHasParameterBytes) {
  RunStartEvent start;
  start.parameters = 104938;
  start.config.hidden = {128, 32};
  nlohmann::json json = ToJson(start);
  EXPECT_EQ(json["event"], "run_start");
  EXPECT_EQ(json["parameter_bytes"], 419752);
  EXPECT_EQ(json["config"]["hidden"], nlohmann::json::array({128, 32}));
}

TEST(Events, WriterWritesOneFlushedLinePerEvent) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("dmlbench-events-test-" + std::to_string(::getpid()));
  {
    EventWriter writer(path.string());
    writer.Write({{"event", "a"}});
    std::ifstream in(path);  // flushed: readable before the writer closes
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, R"({"event":"a"})");
    writer.Write({{"loss", std::nan("")}});
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "{\"event\":\"a\"}\n{\"loss\":null}\n");
  std::filesystem::remove(path);
}

// Error paths of events.cc follow.

TEST(EventsErrors, CannotOpen) {
  try {
    EventWriter writer("no/such/dir/events.jsonl");
    FAIL() << "no error";
  } catch (const EventsError& error) {
    EXPECT_STREQ(error.what(),
                 "cannot open events file no/such/dir/events.jsonl: No such file or directory");
  }
}

TEST(EventsErrors, CannotWrite) {
  EventWriter writer("/dev/full");
  try {
    writer.Write({{"event", "a"}});
    FAIL() << "no error";
  } catch (const EventsError& error) {
    EXPECT_STREQ(error.what(), "cannot write events file /dev/full: No space left on device");
  }
}

}  // namespace
}  // namespace dmlbench
