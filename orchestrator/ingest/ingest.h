// Ingest: reads the trainer's event lines (schemas/trainer-events.md, format
// version 1) and stores each in the database as it arrives, tagged with the
// attempt. An event is committed at once, except in a burst (events less
// than kGroupCommitS apart), which shares one Store::Batch committed within
// kGroupCommitS, at run_end, at the next line, or at Flush(). What is not
// committed when the Ingest goes is rolled back. It does not decide a run's
// status: the run loop does. Not thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_INGEST_INGEST_H_
#define DMLBENCH_ORCHESTRATOR_INGEST_INGEST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/clock.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

inline constexpr int kEventsFormatVersion = 1;
inline constexpr double kGroupCommitS = 0.05;

class Ingest {
 public:
  // `store` must outlive this object. `monotonic_now` (seconds) times the
  // bursts; tests give a clock of their own.
  Ingest(Store& store, std::int64_t run_id, std::int64_t attempt_id,
         std::function<double()> monotonic_now = MonotonicNow);
  // Rolls back the group not yet committed, as an attempt cut short by an
  // exception leaves it: such an attempt never completes its run. A run_end
  // commits itself; on the normal path call Flush() when the job ended.
  ~Ingest() = default;
  Ingest(const Ingest&) = delete;
  Ingest& operator=(const Ingest&) = delete;

  // Parses and stores one line (without its newline). Bad events never
  // throw: the first problem is kept in error() and later lines are
  // ignored. A StoreError (e.g. a full disk) propagates.
  void Consume(std::string_view line);

  // Commits every stored event. Call when the job ended, however it ended.
  // Throws StoreError.
  void Flush();

  // True once the trainer's run_start arrived: it got past its input.
  bool run_start_seen() const { return run_start_seen_; }
  // True once a run_end with status "ok" has been stored.
  bool run_end_ok() const { return run_end_ok_; }
  // The trainer's own message from a run_end with status "error", else "".
  const std::string& trainer_error() const { return trainer_error_; }
  // "event line 3: ..." for the first malformed event, "" while all are valid.
  const std::string& error() const { return error_; }
  int epochs_stored() const { return static_cast<int>(epoch_wall_s_.size()); }
  // The wall time of each stored epoch, in epoch order.
  const std::vector<double>& epoch_wall_s() const { return epoch_wall_s_; }
  // From run_start; 0 until it arrived.
  std::int64_t iterations_per_epoch() const { return iterations_per_epoch_; }
  const std::string& mpi_library_version() const { return mpi_library_version_; }

 private:
  void ConsumeEvent(std::string_view line);
  // Opens a group (a Store::Batch) when this event follows the last commit
  // closely, unless a batch of the store is open already; commits the
  // group when it is old enough or the run ended.
  void BeforeWrite();
  void AfterWrite(bool last_event);

  Store& store_;
  std::int64_t run_id_;
  std::int64_t attempt_id_;
  std::function<double()> monotonic_now_;
  std::optional<Store::Batch> batch_;  // the open group, if any
  int line_number_ = 0;
  double last_commit_s_ = -1;  // monotonic
  double batch_start_s_ = 0;
  bool run_start_seen_ = false;
  RunStartRecord run_start_;  // as stored, once run_start_seen_
  bool run_end_seen_ = false;
  bool run_end_ok_ = false;
  std::vector<double> epoch_wall_s_;
  std::int64_t iterations_per_epoch_ = 0;
  std::string mpi_library_version_;
  std::string trainer_error_;
  std::string error_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_INGEST_INGEST_H_
