#include "orchestrator/ingest/ingest.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "orchestrator/core/subprocess.h"

namespace dmlbench {
namespace {

using nlohmann::json;

// Far above any job dmlbench starts; a world size beyond it is not a run's.
constexpr std::int64_t kMaxRanks = 1 << 20;

// A malformed event; caught in Consume and kept as error().
class EventError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A string as JSON writes it (quoted, control characters escaped), its
// first 64 bytes only.
std::string Shown(const std::string& text) {
  const json shown = text.substr(0, 64);
  return shown.dump(-1, ' ', false, json::error_handler_t::replace) + (text.size() > 64 ? "..." : "");
}

// Typed, checked access to the fields of one JSON object. `where` names the
// object in messages: "epoch", "epoch: ranks[2]".
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json& Required(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end()) throw EventError(where_ + ": missing field '" + key + "'");
    return *it;
  }

  // A number in [min, max] (every measurement is finite and 0 or more;
  // a second bound of 1e9 refuses 1e308 and what overflowed to infinity).
  double Number(const char* key, double min = 0, double max = kMaxNumber) const {
    const json& value = Required(key);
    if (!value.is_number()) throw Mistyped(key, "a number", value);
    return InRange(key, value.get<double>(), min, max);
  }

  // Absent or null both mean "not measured".
  std::optional<double> OptionalNumber(const char* key, double min = 0, double max = kMaxNumber) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) throw Mistyped(key, "a number or null", *it);
    return InRange(key, it->get<double>(), min, max);
  }

  // An integer in [min, max] that fits its 64-bit column (2^64 - 1 was
  // stored as -1); counts and sizes are 0 or more.
  std::int64_t Integer(const char* key, std::int64_t min = 0,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    return CheckedInteger(key, Required(key), min, max, "an integer");
  }

  std::optional<std::int64_t> OptionalInteger(const char* key, std::int64_t min = 0,
                                              std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    return CheckedInteger(key, *it, min, max, "an integer or null");
  }

  std::string String(const char* key) const {
    const json& value = Required(key);
    if (!value.is_string()) throw Mistyped(key, "a string", value);
    return value.get<std::string>();
  }

  std::string OptionalString(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return "";
    if (!it->is_string()) throw Mistyped(key, "a string", *it);
    return it->get<std::string>();
  }

  Fields Object(const char* key) const {
    const json& value = Required(key);
    if (!value.is_object()) throw Mistyped(key, "an object", value);
    return Fields(value, where_ + ": " + key);
  }

  // Absent or null: nullopt.
  std::optional<Fields> OptionalObject(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    if (!it->is_object()) throw Mistyped(key, "an object", *it);
    return Fields(*it, where_ + ": " + key);
  }

  const json& Array(const char* key) const {
    const json& value = Required(key);
    if (!value.is_array()) throw Mistyped(key, "an array", value);
    return value;
  }

  // A field that must say what the run was launched with.
  void Launched(const char* key, std::int64_t launched) const {
    const std::int64_t reported = Integer(key, std::numeric_limits<std::int64_t>::min());
    if (reported != launched) throw Contradiction(key, std::to_string(reported), std::to_string(launched));
  }
  void Launched(const char* key, const std::string& launched) const {
    const std::string reported = String(key);
    if (reported != launched) throw Contradiction(key, Shown(reported), Shown(launched));
  }

  const std::string& where() const { return where_; }

 private:
  static constexpr double kMaxNumber = 1e9;

  double InRange(const char* key, double value, double min, double max) const {
    if (!std::isfinite(value) || value < min || value > max) {
      std::ostringstream text;
      text << where_ << ": field '" << key << "' must be between " << min << " and " << max << ", got " << value;
      throw EventError(text.str());
    }
    return value;
  }

  std::int64_t CheckedInteger(const char* key, const json& value, std::int64_t min, std::int64_t max,
                              const char* expected) const {
    if (!value.is_number_integer()) throw Mistyped(key, expected, value);
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      throw EventError(where_ + ": field '" + key + "' must be between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + value.dump());
    }
    const std::int64_t number = value.get<std::int64_t>();
    if (number < min || number > max) {
      throw EventError(where_ + ": field '" + key + "' must be between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + std::to_string(number));
    }
    return number;
  }

  EventError Contradiction(const char* key, const std::string& reported, const std::string& launched) const {
    return EventError(where_ + ": field '" + key + "' is " + reported + ", but the run was launched with " + launched);
  }

  EventError Mistyped(const char* key, const char* expected, const json& found) const {
    return EventError(where_ + ": field '" + key + "' must be " + expected + ", got " + found.type_name());
  }

  const json& object_;
  std::string where_;
};

PhaseStats ReadPhase(const Fields& phases, const char* name) {
  const Fields phase = phases.Object(name);
  return PhaseStats{phase.Number("max_s"), phase.Number("mean_s"), phase.Number("min_s")};
}

RankPhaseRecord ReadRank(const json& value, size_t index, std::int64_t world_size) {
  const std::string where = "epoch: ranks[" + std::to_string(index) + "]";
  if (!value.is_object()) {
    throw EventError(where + ": must be an object, got " + std::string(value.type_name()));
  }
  const Fields rank(value, where);
  RankPhaseRecord r;
  r.rank = static_cast<int>(rank.Integer("rank", 0, world_size - 1));
  r.role = rank.String("role");
  if (r.role != "worker" && r.role != "server") {
    throw EventError(where + ": field 'role' must be \"worker\" or \"server\", got \"" + r.role + "\"");
  }
  r.forward_s = rank.Number("forward_s");
  r.backward_s = rank.Number("backward_s");
  r.exchange_s = rank.Number("exchange_s");
  r.update_s = rank.Number("update_s");
  r.exposed_comm_s = rank.Number("exposed_comm_s");
  r.comm_s = rank.Number("comm_s");
  r.wait_s = rank.Number("wait_s");
  r.bytes_sent = rank.Integer("bytes_sent");
  r.bytes_received = rank.Integer("bytes_received");
  r.messages_sent = rank.Integer("messages_sent");
  r.cpu_s = rank.OptionalNumber("cpu_s");
  r.quota_periods = rank.OptionalInteger("quota_periods");
  r.throttled_periods = rank.OptionalInteger("throttled_periods");
  r.throttled_s = rank.OptionalNumber("throttled_s");
  const int quota_fields = r.quota_periods.has_value() + r.throttled_periods.has_value() + r.throttled_s.has_value();
  if (quota_fields != 0 && quota_fields != 3) {
    throw EventError(where + ": fields 'quota_periods', 'throttled_periods' and 'throttled_s' come together, got " +
                     std::to_string(quota_fields) + " of them");
  }
  if (r.quota_periods && (*r.quota_periods < 0 || *r.throttled_periods < 0 ||
                          *r.throttled_periods > *r.quota_periods || *r.throttled_s < 0)) {
    throw EventError(where + ": quota counters must be 0 <= throttled_periods <= quota_periods and throttled_s >= 0");
  }
  return r;
}

// The epoch's `iteration_wall_us` (whole microseconds, one per iteration)
// as seconds; empty when the trainer did not write it (an older trainer) or
// wrote null.
std::vector<double> ReadIterationTimes(const json& event, std::int64_t iterations) {
  auto it = event.find("iteration_wall_us");
  if (it == event.end() || it->is_null()) return {};
  if (!it->is_array()) {
    throw EventError(std::string("epoch: field 'iteration_wall_us' must be an array, got ") + it->type_name());
  }
  if (static_cast<std::int64_t>(it->size()) != iterations) {
    throw EventError("epoch: field 'iteration_wall_us' must hold one time per iteration (" +
                     std::to_string(iterations) + "), got " + std::to_string(it->size()));
  }
  std::vector<double> seconds;
  seconds.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& value = (*it)[i];
    if (!value.is_number_integer() || value.get<std::int64_t>() < 0) {
      throw EventError("epoch: iteration_wall_us[" + std::to_string(i) +
                       "] must be a whole number of microseconds, 0 or more, got " +
                       (value.is_number() ? value.dump() : std::string(value.type_name())));
    }
    seconds.push_back(static_cast<double>(value.get<std::int64_t>()) / 1e6);
  }
  return seconds;
}

// The event of a line: a JSON object of the supported format version, in
// which no object names a key twice (JSON readers disagree on which wins).
json ParseEvent(std::string_view line) {
  std::vector<std::set<std::string>> keys;  // of each object open, innermost last
  std::string repeated;
  const json::parser_callback_t check = [&](int, json::parse_event_t kind, json& parsed) {
    if (kind == json::parse_event_t::object_start) keys.emplace_back();
    if (kind == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (kind == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
        repeated.empty()) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  json event = json::parse(line, check, /*allow_exceptions=*/false);
  if (event.is_discarded()) {
    const std::string shown(line.substr(0, 60));
    throw EventError("not a JSON object: " + shown + (line.size() > 60 ? "..." : ""));
  }
  if (!event.is_object()) {
    throw EventError(std::string("expected a JSON object, got ") + event.type_name());
  }
  if (!repeated.empty()) throw EventError("the key '" + repeated + "' appears twice in one object");
  return event;
}

void CheckFormatVersion(const Fields& fields, const std::string& kind) {
  const std::int64_t version = fields.Integer("format_version");
  if (version != kEventsFormatVersion) {
    throw EventError(kind + ": format_version " + std::to_string(version) +
                     " is not supported (this program reads " + std::to_string(kEventsFormatVersion) + ")");
  }
}

// A run_start, which must describe the run `launched`.
RunStartRecord ReadRunStart(const Fields& fields, const LaunchedRun& launched) {
  RunStartRecord r;
  r.mpi_library_version = fields.String("mpi_library_version");
  r.world_size = fields.Integer("world_size", 1, kMaxRanks);
  r.parameters = fields.Integer("parameters", 1);
  r.iterations_per_epoch = fields.Integer("iterations_per_epoch", 1);
  r.train_samples = fields.Integer("train_samples", 1);
  r.test_samples = fields.Integer("test_samples");
  r.dataset_sha256 = fields.String("dataset_sha256");
  r.threads = fields.OptionalInteger("threads").value_or(0);
  // The trainer ran what it was asked to, on the data the run key names.
  const RunParams& p = launched.params;
  const std::int64_t servers = p.architecture == Architecture::kPs ? p.servers : 0;
  const Fields config = fields.Object("config");
  config.Launched("architecture", std::string(Text(p.architecture)));
  config.Launched("servers", servers);
  config.Launched("batch_size", p.batch_size);
  config.Launched("epochs", p.epochs);
  if (p.warmup_iterations != 0) config.Launched("warmup_iterations", p.warmup_iterations);
  fields.Launched("world_size", p.ranks());
  fields.Launched("workers", p.workers);
  fields.Launched("servers", servers);
  fields.Launched("dataset_sha256", launched.dataset_sha256);
  return r;
}

// The iterations epoch `epoch` of a run launched with `params` and begun
// by `start` has: iterations_per_epoch, but a warm-up epoch 1 under its own
// cap (warmup_iterations) no more than that.
std::int64_t PlannedIterations(int epoch, const RunParams& params, const RunStartRecord& start) {
  if (epoch == 1 && params.warmup_iterations > 0) {
    return std::min(params.warmup_iterations, start.iterations_per_epoch);
  }
  return start.iterations_per_epoch;
}

// An epoch event, which must be epoch number `expected` of the run that
// `start` began, launched with `params`.
EpochRecord ReadEpoch(const Fields& fields, const json& event, int expected, const RunParams& params,
                      const RunStartRecord& start) {
  const int epochs = params.epochs;
  EpochRecord r;
  const std::int64_t epoch = fields.Integer("epoch", 1, std::numeric_limits<int>::max());
  if (epoch != expected) {
    throw EventError("epoch: expected epoch " + std::to_string(expected) + ", got " + std::to_string(epoch));
  }
  if (epoch > epochs) {
    throw EventError("epoch: the run was launched with " + std::to_string(epochs) + " epochs, got epoch " +
                     std::to_string(epoch));
  }
  r.epoch = static_cast<int>(epoch);
  r.iterations = fields.Integer("iterations", 1, start.iterations_per_epoch);
  const std::int64_t planned = PlannedIterations(r.epoch, params, start);
  if (r.iterations != planned) {
    throw EventError("epoch: epoch " + std::to_string(r.epoch) + " must have " + std::to_string(planned) +
                     " iterations" + (planned == start.iterations_per_epoch ? " (run_start's iterations_per_epoch)"
                                                                            : " (the run's warmup_iterations)") +
                     ", got " + std::to_string(r.iterations));
  }
  r.samples = fields.Integer("samples");
  r.wall_s = fields.Number("wall_s");
  if (r.wall_s <= 0) throw EventError("epoch: field 'wall_s' must be above 0, got 0");
  r.throughput_samples_per_s = fields.Number("throughput_samples_per_s");
  r.loss = fields.OptionalNumber("loss");
  r.test_accuracy = fields.OptionalNumber("test_accuracy", 0, 1);
  r.eval_s = fields.OptionalNumber("eval_s");
  r.overlap_ratio = fields.OptionalNumber("overlap_ratio");
  const Fields phases = fields.Object("phases");
  r.forward = ReadPhase(phases, "forward");
  r.backward = ReadPhase(phases, "backward");
  r.exchange = ReadPhase(phases, "exchange");
  r.update = ReadPhase(phases, "update");
  r.exposed_comm = ReadPhase(phases, "exposed_comm");
  r.comm = ReadPhase(phases, "comm");
  const json& ranks = fields.Array("ranks");
  r.ranks.reserve(ranks.size());
  std::vector<bool> seen(static_cast<size_t>(start.world_size), false);
  for (size_t i = 0; i < ranks.size(); ++i) {
    r.ranks.push_back(ReadRank(ranks[i], i, start.world_size));
    if (seen[static_cast<size_t>(r.ranks.back().rank)]) {
      throw EventError("epoch: ranks[" + std::to_string(i) + "]: rank " + std::to_string(r.ranks.back().rank) +
                       " is listed twice");
    }
    seen[static_cast<size_t>(r.ranks.back().rank)] = true;
  }
  r.iteration_wall_s = ReadIterationTimes(event, r.iterations);
  return r;
}

// A run_end event; status ok only after a run_start and every one of the
// `epochs` epochs launched (the warm-up included): `epochs_stored` arrived.
RunEndRecord ReadRunEnd(const Fields& fields, bool run_start_seen, int epochs_stored, int epochs) {
  RunEndRecord r;
  r.status = fields.String("status");
  if (r.status != "ok" && r.status != "error") {
    throw EventError("run_end: field 'status' must be \"ok\" or \"error\", got \"" + r.status + "\"");
  }
  if (r.status == "ok") {
    if (!run_start_seen) throw EventError("run_end: status ok without run_start");
    if (epochs_stored < epochs) {
      throw EventError("run_end: status ok after " + std::to_string(epochs_stored) + " of the " +
                       std::to_string(epochs) + " epochs launched");
    }
    r.parameter_checksum = fields.String("parameter_checksum");
    if (r.parameter_checksum.empty()) throw EventError("run_end: field 'parameter_checksum' is empty");
  } else {
    r.error = fields.OptionalString("error");
    r.parameter_checksum = fields.OptionalString("parameter_checksum");
  }
  r.total_wall_s = fields.OptionalNumber("total_wall_s");
  r.peak_rss_bytes = fields.OptionalInteger("peak_rss_bytes");
  if (const std::optional<Fields> phases = fields.OptionalObject("phases")) {
    r.phases = TrainerPhases{phases->Number("mpi_init_s"), phases->Number("dataset_load_s"),
                             phases->Number("setup_s"), phases->Number("epochs_s"),
                             phases->Number("teardown_s")};
  }
  return r;
}

}  // namespace

Ingest::Ingest(Store& store, std::int64_t run_id, std::int64_t attempt_id, LaunchedRun launched,
               std::function<double()> monotonic_now)
    : store_(store), run_id_(run_id), attempt_id_(attempt_id), launched_(std::move(launched)),
      monotonic_now_(std::move(monotonic_now)) {}

void Ingest::Flush() {
  if (!batch_) return;
  try {
    batch_->Commit();
  } catch (const StoreError&) {
    batch_.reset();  // closed by the failed commit, which kept none of the group
    throw;
  }
  batch_.reset();
  last_commit_s_ = monotonic_now_();
}

void Ingest::BeforeWrite() {
  if (batch_ || store_.batch_open()) return;
  const double now = monotonic_now_();
  if (last_commit_s_ >= 0 && now - last_commit_s_ < kGroupCommitS) {
    batch_.emplace(store_);
    batch_start_s_ = now;
  }
}

void Ingest::AfterWrite(bool last_event) {
  const double now = monotonic_now_();
  if (!batch_) {
    last_commit_s_ = now;
  } else if (last_event || now - batch_start_s_ >= kGroupCommitS) {
    Flush();
  }
}

void Ingest::Refuse(const std::string& what) {
  if (error_.empty()) error_ = what;
}

void Ingest::Consume(std::string_view line) {
  ++line_number_;
  if (!error_.empty()) return;
  const std::string where = "event line " + std::to_string(line_number_) + ": ";
  if (line.size() >= LineSplitter::kMaxLineBytes) {
    Refuse(where + "longer than " + std::to_string(LineSplitter::kMaxLineBytes >> 20) + " MiB; cut and not read");
    return;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return;
  try {
    ConsumeEvent(line);
  } catch (const EventError& e) {
    Refuse(where + e.what());
  } catch (const StoreError& e) {
    if (!e.constraint_violation()) throw;
    // What the checks above let through and the schema refuses: the group
    // goes with the event's partial rows, and the attempt fails like any
    // other malformed output instead of stopping the sweep.
    batch_.reset();
    std::string message = e.what();
    if (message.rfind(store_.path() + ": ", 0) == 0) message.erase(0, store_.path().size() + 2);
    Refuse(where + "the database refused it: " + message);
  }
}

void Ingest::ConsumeOtherRank(int rank, std::string_view line) {
  if (!error_.empty()) return;
  const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) return;  // not an event: output of its own
  const auto kind = event.find("event");
  if (kind == event.end() || !kind->is_string()) return;
  Refuse("rank " + std::to_string(rank) + " printed a " + Shown(kind->get<std::string>()) +
         " event on its standard output; events come from rank 0 only");
}

void Ingest::ConsumeEvent(std::string_view line) {
  const json event = ParseEvent(line);
  const std::string kind = Fields(event, "event").String("event");
  const Fields fields(event, kind);
  CheckFormatVersion(fields, kind);
  if (run_end_seen_) throw EventError(kind + ": after run_end");

  if (kind == "run_start") {
    if (run_start_seen_) throw EventError("run_start: repeated");
    const RunStartRecord r = ReadRunStart(fields, launched_);
    times_.run_start_at_s = monotonic_now_();  // as it arrived, before it is stored
    BeforeWrite();
    store_.RecordRunStart(attempt_id_, r);
    AfterWrite(false);
    run_start_ = r;
    run_start_seen_ = true;
    iterations_per_epoch_ = r.iterations_per_epoch;
    mpi_library_version_ = r.mpi_library_version;
  } else if (kind == "epoch") {
    if (!run_start_seen_) throw EventError("epoch: before run_start");
    const EpochRecord r = ReadEpoch(fields, event, epochs_stored_ + 1, launched_.params, run_start_);
    BeforeWrite();
    store_.AddEpoch(run_id_, attempt_id_, r);
    AfterWrite(false);
    ++epochs_stored_;
    epoch_wall_s_.push_back(r.wall_s);
    (r.epoch == 1 ? times_.first_epoch_s : times_.later_epochs_s) += r.wall_s;
    times_.evaluation_s += r.eval_s.value_or(0);
  } else if (kind == "run_end") {
    const RunEndRecord r = ReadRunEnd(fields, run_start_seen_, epochs_stored_, launched_.params.epochs);
    times_.run_end_at_s = monotonic_now_();
    BeforeWrite();
    store_.RecordRunEnd(attempt_id_, r);
    AfterWrite(/*last_event=*/true);  // commits: a finished attempt's events are all stored
    run_end_seen_ = true;
    run_end_ok_ = r.status == "ok";
    times_.trainer = r.phases;
    trainer_error_ = r.error;
  }
  // Other event kinds are for other readers (format version 1 allows them).
}

}  // namespace dmlbench
