// Timeline through real MPI: Write() gathers every rank's spans into one
// Chrome trace file on rank 0, one track per rank, and nothing happens when
// the timeline is disabled.
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trainer/timeline.h"

namespace dmlbench {
namespace {

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

// Rank 0's path is the one written; each rank names its own, unused elsewhere.
std::string TracePath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmlbench_" + name + "_" + std::to_string(getpid()) + ".json"))
      .string();
}

std::vector<std::string> Labels() {
  std::vector<std::string> labels;
  for (int r = 0; r < WorldSize(); ++r) labels.push_back("rank " + std::to_string(r) + " worker");
  return labels;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The first event with this name, phase and pid; null when there is none.
nlohmann::json Find(const nlohmann::json& trace, const std::string& name, const std::string& ph,
                    int pid, int tid) {
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["name"] == name && e["ph"] == ph && e["pid"] == pid && e["tid"] == tid) return e;
  }
  return nullptr;
}

TEST(Timeline, WritesOneTrackPerRankWithItsSpans) {
  Timeline timeline(true);
  timeline.SetOrigin();
  const int rank = WorldRank();
  timeline.Span("forward", "compute", 10.0 + rank, 20.0 + rank);
  timeline.Span("ring.allgather", "comm", 30.0, 45.5, 1, 128 * (rank + 1));
  const std::string path = TracePath("timeline");
  timeline.Write(path, rank, Labels());
  if (rank != 0) return;

  const nlohmann::json trace = ReadJson(path);
  std::filesystem::remove(path);
  EXPECT_EQ(trace["traceEvents"].size(), static_cast<std::size_t>(6 * WorldSize()));
  for (int r = 0; r < WorldSize(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(Find(trace, "process_name", "M", r, 0)["args"]["name"],
              "rank " + std::to_string(r) + " worker");
    EXPECT_EQ(Find(trace, "process_sort_index", "M", r, 0)["args"]["sort_index"], r);
    EXPECT_EQ(Find(trace, "thread_name", "M", r, 0)["args"]["name"], "training");
    EXPECT_EQ(Find(trace, "thread_name", "M", r, 1)["args"]["name"], "comm 0");
    const nlohmann::json forward = Find(trace, "forward", "X", r, 0);
    EXPECT_EQ(forward["cat"], "compute");
    EXPECT_DOUBLE_EQ(forward["ts"].get<double>(), 10.0 + r);
    EXPECT_DOUBLE_EQ(forward["dur"].get<double>(), 10.0);
    EXPECT_FALSE(forward.contains("args"));
    const nlohmann::json allgather = Find(trace, "ring.allgather", "X", r, 1);
    EXPECT_EQ(allgather["cat"], "comm");
    EXPECT_DOUBLE_EQ(allgather["dur"].get<double>(), 15.5);
    EXPECT_EQ(allgather["args"]["bytes"], 128 * (r + 1));
  }
}

TEST(Timeline, ScopedSpanLastsFromConstructionToDestruction) {
  Timeline timeline(true);
  timeline.SetOrigin();
  const double before_us = timeline.NowUs();
  {
    ScopedSpan span(&timeline, "update", "compute");
    usleep(2000);
  }
  const double after_us = timeline.NowUs();
  const std::string path = TracePath("scoped");
  timeline.Write(path, WorldRank(), Labels());
  if (WorldRank() != 0) return;
  const nlohmann::json update = Find(ReadJson(path), "update", "X", 0, 0);
  std::filesystem::remove(path);
  EXPECT_GE(update["ts"].get<double>(), before_us);
  EXPECT_GE(update["dur"].get<double>(), 2000.0);
  EXPECT_LE(update["ts"].get<double>() + update["dur"].get<double>(), after_us);
}

TEST(Timeline, DisabledRecordsAndWritesNothing) {
  Timeline timeline(false);
  EXPECT_FALSE(timeline.enabled());
  timeline.Span("forward", "compute", 0, 1);
  { ScopedSpan span(&timeline, "update", "compute"); }
  const std::string path = TracePath("disabled");
  timeline.Write(path, WorldRank(), Labels());
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Error path of Write().
TEST(TimelineError, UnwritablePathThrowsOnRankZero) {
  Timeline timeline(true);
  const std::string path =
      (std::filesystem::temp_directory_path() / "dmlbench-no-such-dir" / "trace.json").string();
  if (WorldRank() != 0) {
    timeline.Write(path, WorldRank(), Labels());
    return;
  }
  try {
    timeline.Write(path, 0, Labels());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write timeline " + path + ": No such file or directory");
  }
}

}  // namespace
}  // namespace dmlbench
