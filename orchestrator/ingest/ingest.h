// Ingest: the trust boundary between the trainer and the database. Reads
// the trainer's event lines (schemas/trainer-events.md, format version 1),
// checks each against that schema and against the run as launched, and
// stores each valid one as it arrives, tagged with the attempt. Every check
// of what a trainer prints lives here; the database's constraints are the
// last line, not the first (a write they refuse is malformed output too).
// An event is committed at once, except in a burst (events less than
// kGroupCommitS apart), which shares one Store::Batch committed within
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
#include "orchestrator/core/run_spec.h"
#include "orchestrator/store/store.h"

namespace dmlbench {

inline constexpr int kEventsFormatVersion = 1;
inline constexpr double kGroupCommitS = 0.05;

// What an attempt's events say of where its time went
// (run/attempt_phases.h turns it into the attempt's phases).
struct EventTimes {
  // The Ingest's monotonic clock when the line arrived, once it did.
  std::optional<double> run_start_at_s, run_end_at_s;
  double first_epoch_s = 0;   // wall_s of epoch 1, once it arrived
  double later_epochs_s = 0;  // of the others
  double evaluation_s = 0;    // every epoch's eval_s
  std::optional<TrainerPhases> trainer;  // run_end's phases
};

// The run as the orchestrator launched it: what the trainer's run_start
// must report (architecture, ranks, workers, servers, local batch, epochs,
// dataset checksum), and the epochs that must all arrive before a run_end
// with status ok.
struct LaunchedRun {
  RunParams params;
  std::string dataset_sha256;  // as the plan computed it (plan.h DatasetChecksum)
};

class Ingest {
 public:
  // `store` must outlive this object. `monotonic_now` (seconds) times the
  // bursts; tests give a clock of their own.
  Ingest(Store& store, std::int64_t run_id, std::int64_t attempt_id, LaunchedRun launched,
         std::function<double()> monotonic_now = MonotonicNow);
  // Rolls back the group not yet committed, as an attempt cut short by an
  // exception leaves it: such an attempt never completes its run. A run_end
  // commits itself; on the normal path call Flush() when the job ended.
  ~Ingest() = default;
  Ingest(const Ingest&) = delete;
  Ingest& operator=(const Ingest&) = delete;

  // Parses, checks and stores one line (without its newline) of the job's
  // standard output. Bad events never throw: the first problem is kept in
  // error() and later lines are ignored; so is an event the database
  // refuses for a constraint (with the rest of its uncommitted group). Any
  // other StoreError (e.g. a full disk) propagates.
  void Consume(std::string_view line);

  // Checks one line that rank `rank` (not 0) printed on its own standard
  // output, as the job's output files keep it (launch/job_output.h): the
  // trainer writes events on rank 0 only, so an event there is malformed
  // output, even when the job's merged stream read as a valid run.
  void ConsumeOtherRank(int rank, std::string_view line);

  // Commits every stored event. Call when the job ended, however it ended.
  // Throws StoreError.
  void Flush();

  // True once the trainer's run_start arrived: it got past its input.
  bool run_start_seen() const { return run_start_seen_; }
  // True once a run_end arrived, ok or not: the trainer is done with the run.
  bool run_end_seen() const { return run_end_seen_; }
  // True once a run_end with status "ok" has been stored.
  bool run_end_ok() const { return run_end_ok_; }
  // The trainer's own message from a run_end with status "error", else "".
  const std::string& trainer_error() const { return trainer_error_; }
  // The first problem: "event line 3: ..." for the job's output, "rank 1
  // printed ..." for another rank's; "" while all is valid.
  const std::string& error() const { return error_; }
  int epochs_stored() const { return epochs_stored_; }
  // The wall time of each stored epoch, in epoch order.
  const std::vector<double>& epoch_wall_s() const { return epoch_wall_s_; }
  // Of the events stored so far.
  const EventTimes& times() const { return times_; }
  // From run_start; 0 until it arrived.
  std::int64_t iterations_per_epoch() const { return iterations_per_epoch_; }
  const std::string& mpi_library_version() const { return mpi_library_version_; }

 private:
  void ConsumeEvent(std::string_view line);
  // Keeps `what` as error() unless an earlier problem was kept.
  void Refuse(const std::string& what);
  // Opens a group (a Store::Batch) when this event follows the last commit
  // closely, unless a batch of the store is open already; commits the
  // group when it is old enough or the run ended.
  void BeforeWrite();
  void AfterWrite(bool last_event);

  Store& store_;
  std::int64_t run_id_;
  std::int64_t attempt_id_;
  LaunchedRun launched_;
  std::function<double()> monotonic_now_;
  std::optional<Store::Batch> batch_;  // the open group, if any
  int line_number_ = 0;
  double last_commit_s_ = -1;  // monotonic
  double batch_start_s_ = 0;
  bool run_start_seen_ = false;
  RunStartRecord run_start_;  // as stored, once run_start_seen_
  bool run_end_seen_ = false;
  bool run_end_ok_ = false;
  int epochs_stored_ = 0;
  EventTimes times_;
  std::vector<double> epoch_wall_s_;
  std::int64_t iterations_per_epoch_ = 0;
  std::string mpi_library_version_;
  std::string trainer_error_;
  std::string error_;
};

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_INGEST_INGEST_H_
