#include "trainer/timeline.h"

#include <mpi.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace dmlbench {
namespace {

double SteadyUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ThreadName(int thread) {
  if (thread == 0) return "training";
  return "comm " + std::to_string(thread - 1);
}

}  // namespace

Timeline::Timeline(bool enabled) : enabled_(enabled) {
  if (enabled_) {
    origin_us_ = SteadyUs();
    events_.reserve(1 << 16);
  }
}

double Timeline::NowUs() const { return SteadyUs() - origin_us_; }

void Timeline::SetOrigin() {
  if (enabled_) origin_us_ = SteadyUs();
}

void Timeline::Span(const char* name, const char* category, double start_us, double end_us,
                    int thread, std::int64_t bytes) {
  if (!enabled_) return;
  events_.push_back(Event{name, category, start_us, end_us - start_us, thread, bytes});
}

void Timeline::Write(const std::string& path, int rank,
                     const std::vector<std::string>& rank_labels) {
  if (!enabled_) return;
  // This rank's events, as JSON objects separated by commas.
  std::string mine;
  std::set<int> threads;
  for (const Event& e : events_) {
    nlohmann::json event = {{"name", e.name}, {"cat", e.category}, {"ph", "X"},
                            {"ts", e.start_us}, {"dur", e.dur_us}, {"pid", rank},
                            {"tid", e.thread}};
    if (e.bytes >= 0) event["args"] = {{"bytes", e.bytes}};
    if (!mine.empty()) mine += ',';
    mine += event.dump();
    threads.insert(e.thread);
  }
  const std::string label =
      static_cast<std::size_t>(rank) < rank_labels.size() ? rank_labels[rank]
                                                          : "rank " + std::to_string(rank);
  std::vector<nlohmann::json> metadata = {
      {{"name", "process_name"}, {"ph", "M"}, {"pid", rank}, {"tid", 0},
       {"args", {{"name", label}}}},
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", rank}, {"tid", 0},
       {"args", {{"sort_index", rank}}}}};
  for (int thread : threads) {
    metadata.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", rank}, {"tid", thread},
                        {"args", {{"name", ThreadName(thread)}}}});
  }
  for (const nlohmann::json& m : metadata) {
    if (!mine.empty()) mine += ',';
    mine += m.dump();
  }

  // Gather every rank's text to rank 0.
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(world);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displacements(world, 0);
  for (int r = 1; r < world; ++r) displacements[r] = displacements[r - 1] + lengths[r - 1];
  std::string all(rank == 0 ? displacements[world - 1] + lengths[world - 1] : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw std::runtime_error("cannot write timeline " + path + ": " + std::strerror(errno));
  }
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  for (int r = 0; r < world; ++r) {
    if (lengths[r] == 0) continue;
    if (!first) out << ',';
    out.write(all.data() + displacements[r], lengths[r]);
    first = false;
  }
  out << "]}\n";
  out.close();
  if (!out) {
    throw std::runtime_error("cannot write timeline " + path + ": " + std::strerror(errno));
  }
}

}  // namespace dmlbench
