// Ingest of trainer event lines (schemas/trainer-events.md) into a real
// SQLite file: what a valid run stores, and every malformed event with its
// whole message.
#include "orchestrator/ingest/ingest.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "orchestrator/core/subprocess.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

using testing::Int;
using testing::Text;

using testing::EpochLine;
using testing::RunEndLine;
using testing::RunFacts;
using testing::RunStartLine;

// The run most tests launch: the usual one, of two epochs.
RunFacts TwoEpochs() {
  RunFacts facts;
  facts.epochs = 2;
  return facts;
}

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Experiment experiment;
    experiment.name = "ingest";
    experiment.source_path = "ingest.toml";
    experiment.source_text = "x";
    experiment.source_sha256 = Sha256Hex("x");
    PlannedRun run;
    run.split = "validation";
    RunProvenance provenance;
    provenance.trainer_sha256 = std::string(64, 't');
    provenance.dataset_sha256 = facts_.dataset_sha256;
    run_id_ = store_.AddRun(store_.AddExperiment(experiment, 1), run, std::string(64, 'c'), provenance);
    attempt_id_ = store_.BeginAttempt(run_id_, 2);
  }

  // An Ingest of the run facts_ describes, launched as its run_start says.
  Ingest Make(std::function<double()> clock = MonotonicNow) {
    return Ingest(store_, run_id_, attempt_id_, Launched(facts_), std::move(clock));
  }

  static LaunchedRun Launched(const RunFacts& facts) {
    LaunchedRun launched;
    launched.params.architecture = *FromText<Architecture>(facts.architecture);
    launched.params.workers = facts.workers;
    launched.params.servers = facts.servers;
    launched.params.batch_size = facts.batch_size;
    launched.params.epochs = facts.epochs;
    launched.params.dataset = "synthetic";
    launched.dataset_sha256 = facts.dataset_sha256;
    return launched;
  }

  // The run_start of facts_.
  std::string Start() const { return RunStartLine(facts_); }

  // Feeds the lines and returns the first error.
  std::string ErrorOf(const std::vector<std::string>& lines) {
    Ingest ingest = Make();
    for (const std::string& line : lines) ingest.Consume(line);
    return ingest.error();
  }

  RunFacts facts_ = TwoEpochs();
  testing::TempDir dir_;
  Store store_{dir_ / "results.db"};
  std::int64_t run_id_ = 0;
  std::int64_t attempt_id_ = 0;
};

TEST_F(IngestTest, EachRanksCpuTimeIsStoredAndNullFromAnOlderTrainer) {
  facts_.workers = 2;
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(EpochLine(1, 2));  // an older trainer: no cpu_s
  std::string with_cpu = EpochLine(2, 2);
  const std::string cpu = R"("cpu_s":0.375,)";
  for (std::size_t at = 0; (at = with_cpu.find(R"("messages_sent":4)", at)) != std::string::npos;
       at += cpu.size() + 1) {
    with_cpu.insert(at, cpu);
  }
  ingest.Consume(with_cpu);
  EXPECT_EQ(ingest.error(), "");
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases WHERE epoch = 1 AND cpu_s IS NULL"), 2);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases WHERE epoch = 2 AND cpu_s = 0.375"), 2);
  // Not a number: the line names the field.
  std::string bad = EpochLine(1, 1);
  bad.insert(bad.find(R"("messages_sent":4)"), R"("cpu_s":"lots",)");
  const std::string error = ErrorOf({Start(), bad});
  EXPECT_NE(error.find("cpu_s"), std::string::npos) << error;
}

TEST_F(IngestTest, EachRanksCpuQuotaCountersAreStoredTogetherOrNotAtAll) {
  facts_.workers = 2;
  const auto with = [](std::string line, const std::string& fields) {
    for (std::size_t at = 0; (at = line.find(R"("messages_sent":4)", at)) != std::string::npos;
         at += fields.size() + 1) {
      line.insert(at, fields);
    }
    return line;
  };
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(EpochLine(1, 2));  // no quota on the ranks' cgroups
  ingest.Consume(with(EpochLine(2, 2), R"("quota_periods":120,"throttled_periods":7,"throttled_s":0.0525,)"));
  EXPECT_EQ(ingest.error(), "");
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases WHERE epoch = 1 AND quota_periods IS NULL "
                        "AND throttled_periods IS NULL AND throttled_s IS NULL"), 2);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases WHERE epoch = 2 AND quota_periods = 120 "
                        "AND throttled_periods = 7 AND throttled_s = 0.0525"), 2);
  // One of the three alone, or more throttled periods than periods: the line names the fields.
  std::string error = ErrorOf({Start(), with(EpochLine(1, 1), R"("throttled_s":0.5,)")});
  EXPECT_NE(error.find("'quota_periods', 'throttled_periods' and 'throttled_s' come together"), std::string::npos)
      << error;
  error = ErrorOf({Start(),
                   with(EpochLine(1, 1), R"("quota_periods":5,"throttled_periods":6,"throttled_s":0.5,)")});
  EXPECT_NE(error.find("throttled_periods <= quota_periods"), std::string::npos) << error;
}

TEST_F(IngestTest, ValidRunStoresEveryEventAsItArrives) {
  facts_.workers = 2;
  Ingest ingest = Make();
  ingest.Consume(Start());
  EXPECT_EQ(ingest.iterations_per_epoch(), 5);
  EXPECT_EQ(ingest.mpi_library_version(), "Open MPI v4.1.4");
  ingest.Consume(EpochLine(1, 2));
  // Stored before the next line arrives.
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases"), 2);
  ingest.Consume("");
  ingest.Consume(EpochLine(2, 2) + "\r");
  EXPECT_FALSE(ingest.run_end_ok());
  ingest.Consume(RunEndLine("abc"));
  EXPECT_TRUE(ingest.run_end_ok());
  EXPECT_EQ(ingest.error(), "");
  EXPECT_EQ(ingest.epochs_stored(), 2);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases WHERE bytes_sent = 1000 AND role = 'worker'"), 4);
  EXPECT_EQ(Int(store_, "SELECT world_size FROM attempts"), 2);
  EXPECT_EQ(std::get<std::string>(store_.Query("SELECT parameter_checksum FROM attempts").rows[0][0]), "abc");
  EXPECT_EQ(std::get<double>(store_.Query("SELECT forward_max_s FROM epochs WHERE epoch = 2").rows[0][0]), 0.2);
  EXPECT_EQ(std::get<double>(store_.Query("SELECT test_accuracy FROM epochs WHERE epoch = 1").rows[0][0]), 0.5);
  // Rank 0's 5 iterations of each epoch, microseconds stored as seconds.
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM iterations"), 2 * 5);
  EXPECT_EQ(Text(store_, "SELECT group_concat(wall_s, ' ') FROM (SELECT wall_s FROM iterations "
                         "WHERE epoch = 2 ORDER BY iteration)"),
            "0.12 0.095 0.095 0.095 0.095");
  EXPECT_EQ(Int(store_, "SELECT min(iteration) * 10 + max(iteration) FROM iterations"), 15);
}

// A trainer older than the iteration times (or one writing null) stores its
// epochs without them.
TEST_F(IngestTest, EpochsWithoutIterationTimesStoreNone) {
  std::string first = EpochLine(1), second = EpochLine(2);
  first.replace(first.find(",\"iteration_wall_us\""), std::string::npos, "}");
  second.replace(second.find("\"iteration_wall_us\":["), std::string::npos, "\"iteration_wall_us\":null}");
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(first);
  ingest.Consume(second);
  ingest.Consume(RunEndLine());
  EXPECT_EQ(ingest.error(), "");
  EXPECT_TRUE(ingest.run_end_ok());
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 2);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM iterations"), 0);
}

TEST_F(IngestTest, UnknownEventKindsAndFieldsAreIgnored) {
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(R"({"event":"heartbeat","format_version":1,"new_field":[1,2]})");
  ingest.Consume(EpochLine(1));
  ingest.Consume(EpochLine(2));
  ingest.Consume(RunEndLine());
  EXPECT_EQ(ingest.error(), "");
  EXPECT_TRUE(ingest.run_end_ok());
}

TEST_F(IngestTest, NullTestAccuracyMeansNotEvaluated) {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"test_accuracy\":0.5"), 19, "\"test_accuracy\":null");
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(epoch);
  EXPECT_EQ(ingest.error(), "");
  EXPECT_EQ(Int(store_, "SELECT test_accuracy IS NULL FROM epochs"), 1);
}

TEST_F(IngestTest, TrainerErrorInRunEndIsKept) {
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(R"({"event":"run_end","format_version":1,"status":"error","error":"p2p: 3 workers need 3 shards"})");
  EXPECT_EQ(ingest.error(), "");
  EXPECT_FALSE(ingest.run_end_ok());
  EXPECT_EQ(ingest.trainer_error(), "p2p: 3 workers need 3 shards");
  EXPECT_EQ(std::get<std::string>(store_.Query("SELECT trainer_status FROM attempts").rows[0][0]), "error");
}

// A burst: every event at the same instant, so that each after the first
// joins one group.
double FrozenClock() { return 100.0; }

TEST_F(IngestTest, TimesOfTheEventsAndTheTrainersPhasesAreKept) {
  facts_.epochs = 3;
  double now = 10;
  Ingest ingest = Make([&now] { return now; });
  ingest.Consume(Start());
  now = 11;
  ingest.Consume(EpochLine(1, 1, 0.5));
  ingest.Consume(EpochLine(2, 1, 0.25));
  ingest.Consume(EpochLine(3, 1, 0.25));
  now = 12;
  std::string end = RunEndLine();
  end.insert(end.size() - 1, R"(,"phases":{"mpi_init_s":0.125,"dataset_load_s":0.25,"setup_s":0.0625,)"
                             R"("epochs_s":1.25,"teardown_s":0.0625,"what_next":1})");
  ingest.Consume(end);
  EXPECT_EQ(ingest.error(), "");
  const EventTimes& times = ingest.times();
  EXPECT_EQ(times.run_start_at_s, 10);
  EXPECT_EQ(times.run_end_at_s, 12);
  EXPECT_EQ(times.first_epoch_s, 0.5);
  EXPECT_EQ(times.later_epochs_s, 0.5);
  EXPECT_DOUBLE_EQ(times.evaluation_s, 3 * 0.01);
  ASSERT_TRUE(times.trainer.has_value());
  EXPECT_EQ(times.trainer->dataset_load_s, 0.25);
  EXPECT_EQ(times.trainer->epochs_s, 1.25);
  EXPECT_EQ(times.trainer->teardown_s, 0.0625);
}

TEST_F(IngestTest, ARunEndWithoutPhasesIsAnOlderTrainers) {
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume(EpochLine(1));
  ingest.Consume(EpochLine(2));
  ingest.Consume(RunEndLine());
  EXPECT_EQ(ingest.error(), "");
  EXPECT_FALSE(ingest.times().trainer.has_value());
  EXPECT_FALSE(Make().times().run_start_at_s.has_value());
}

TEST_F(IngestTest, ARunEndsPhasesMustBeSecondsInAnObject) {
  std::string end = RunEndLine();
  end.insert(end.size() - 1, R"(,"phases":{"mpi_init_s":0.125,"dataset_load_s":-1,"setup_s":0,"epochs_s":0,)"
                             R"("teardown_s":0})");
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), end}),
            "event line 4: run_end: phases: field 'dataset_load_s' must be between 0 and 1e+09, got -1");
  end = RunEndLine();
  end.insert(end.size() - 1, R"(,"phases":[1])");
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), end}),
            "event line 4: run_end: field 'phases' must be an object, got array");
}

TEST_F(IngestTest, ARunEndCommitsTheAttemptsEventsAtOnce) {
  Ingest ingest = Make(FrozenClock);
  ingest.Consume(Start());
  ingest.Consume(EpochLine(1));
  ingest.Consume(EpochLine(2));
  EXPECT_TRUE(store_.batch_open());
  ingest.Consume(RunEndLine());
  EXPECT_FALSE(store_.batch_open());
  // Another connection sees them: committed without Flush() and before the Ingest goes.
  Store reader(store_.path(), Store::Mode::kReadOnly);
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM epochs"), 2);
  EXPECT_EQ(Text(reader, "SELECT trainer_status FROM attempts"), "ok");
}

TEST_F(IngestTest, FlushCommitsAGroupAndAnIngestCutShortRollsItBack) {
  facts_.epochs = 3;
  {
    Ingest ingest = Make(FrozenClock);
    ingest.Consume(Start());  // the first event commits on its own
    ingest.Consume(EpochLine(1));
    ingest.Flush();
    EXPECT_FALSE(store_.batch_open());
    ingest.Consume(EpochLine(2));
    ingest.Consume(EpochLine(3));
    EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 3);
  }  // gone without Flush(), as when an exception unwinds the attempt
  EXPECT_FALSE(store_.batch_open());
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 1);
  EXPECT_EQ(Int(store_, "SELECT world_size FROM attempts"), 1);
}

// ---- error paths of ingest.cc follow -------------------------------------

TEST_F(IngestTest, LineThatIsNotJson) {
  EXPECT_EQ(ErrorOf({"mpirun: something odd"}), "event line 1: not a JSON object: mpirun: something odd");
}

TEST_F(IngestTest, LongLineThatIsNotJsonIsShortened) {
  EXPECT_EQ(ErrorOf({std::string(100, 'x')}), "event line 1: not a JSON object: " + std::string(60, 'x') + "...");
}

TEST_F(IngestTest, JsonThatIsNotAnObject) {
  EXPECT_EQ(ErrorOf({"[1, 2]"}), "event line 1: expected a JSON object, got array");
}

TEST_F(IngestTest, MissingEventField) {
  EXPECT_EQ(ErrorOf({R"({"format_version":1})"}), "event line 1: event: missing field 'event'");
}

TEST_F(IngestTest, NewerFormatVersion) {
  EXPECT_EQ(ErrorOf({R"({"event":"run_start","format_version":2})"}),
            "event line 1: run_start: format_version 2 is not supported (this program reads 1)");
}

TEST_F(IngestTest, FormatVersionOfTheWrongType) {
  EXPECT_EQ(ErrorOf({R"({"event":"epoch","format_version":"1"})"}),
            "event line 1: epoch: field 'format_version' must be an integer, got string");
}

TEST_F(IngestTest, EpochBeforeRunStart) {
  EXPECT_EQ(ErrorOf({EpochLine(1)}), "event line 1: epoch: before run_start");
}

TEST_F(IngestTest, RepeatedRunStart) {
  EXPECT_EQ(ErrorOf({Start(), Start()}), "event line 2: run_start: repeated");
}

TEST_F(IngestTest, EpochOutOfOrder) {
  EXPECT_EQ(ErrorOf({Start(), EpochLine(2)}), "event line 2: epoch: expected epoch 1, got 2");
}

TEST_F(IngestTest, MissingNumberInEpoch) {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"wall_s\""), 8, "\"wall\"");
  EXPECT_EQ(ErrorOf({Start(), epoch}), "event line 2: epoch: missing field 'wall_s'");
}

TEST_F(IngestTest, PhaseOfTheWrongType) {
  std::string epoch = EpochLine(1);
  const size_t comm = epoch.find("\"comm\":{");
  epoch.replace(comm, epoch.find('}', comm) + 1 - comm, "\"comm\":[1]");
  EXPECT_EQ(ErrorOf({Start(), epoch}), "event line 2: epoch: phases: field 'comm' must be an object, got array");
}

TEST_F(IngestTest, RankWithUnknownRole) {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"role\":\"worker\""), 15, "\"role\":\"leader\"");
  EXPECT_EQ(ErrorOf({Start(), epoch}),
            "event line 2: epoch: ranks[0]: field 'role' must be \"worker\" or \"server\", got \"leader\"");
}

TEST_F(IngestTest, RankThatIsNotAnObject) {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"ranks\":["), 9, "\"ranks\":[7,");
  EXPECT_EQ(ErrorOf({Start(), epoch}), "event line 2: epoch: ranks[0]: must be an object, got number");
}

// EpochLine's times with `times` in their place (the epoch has 5 iterations).
std::string WithIterationTimes(const std::string& times) {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"iteration_wall_us\":"), std::string::npos, "\"iteration_wall_us\":" + times + "}");
  return epoch;
}

TEST_F(IngestTest, IterationTimesThatAreNotAnArray) {
  EXPECT_EQ(ErrorOf({Start(), WithIterationTimes("\"1,2,3,4,5\"")}),
            "event line 2: epoch: field 'iteration_wall_us' must be an array, got string");
}

TEST_F(IngestTest, IterationTimesOfTheWrongCount) {
  EXPECT_EQ(ErrorOf({Start(), WithIterationTimes("[1,2,3,4]")}),
            "event line 2: epoch: field 'iteration_wall_us' must hold one time per iteration (5), got 4");
}

TEST_F(IngestTest, IterationTimeThatIsNotWholeMicroseconds) {
  EXPECT_EQ(ErrorOf({Start(), WithIterationTimes("[1,2,3.5,4,5]")}),
            "event line 2: epoch: iteration_wall_us[2] must be a whole number of microseconds, 0 or more, got 3.5");
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 0);
}

TEST_F(IngestTest, IterationTimeThatIsNegative) {
  EXPECT_EQ(ErrorOf({Start(), WithIterationTimes("[1,2,3,-4,5]")}),
            "event line 2: epoch: iteration_wall_us[3] must be a whole number of microseconds, 0 or more, got -4");
}

TEST_F(IngestTest, IterationTimeThatIsNotANumber) {
  EXPECT_EQ(ErrorOf({Start(), WithIterationTimes("[1,2,3,4,null]")}),
            "event line 2: epoch: iteration_wall_us[4] must be a whole number of microseconds, 0 or more, got null");
}

TEST_F(IngestTest, RunEndWithUnknownStatus) {
  EXPECT_EQ(ErrorOf({Start(), R"({"event":"run_end","format_version":1,"status":"done"})"}),
            "event line 2: run_end: field 'status' must be \"ok\" or \"error\", got \"done\"");
}

TEST_F(IngestTest, RunEndOkWithoutRunStart) {
  EXPECT_EQ(ErrorOf({RunEndLine()}), "event line 1: run_end: status ok without run_start");
}

TEST_F(IngestTest, RunEndOkWithoutChecksum) {
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), R"({"event":"run_end","format_version":1,"status":"ok"})"}),
            "event line 4: run_end: missing field 'parameter_checksum'");
}

TEST_F(IngestTest, EventAfterRunEnd) {
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), RunEndLine(), EpochLine(3)}),
            "event line 5: epoch: after run_end");
}

TEST_F(IngestTest, LinesAfterAnErrorAreIgnoredAndNothingCompletes) {
  Ingest ingest = Make();
  ingest.Consume(Start());
  ingest.Consume("garbage");
  ingest.Consume(EpochLine(1));
  ingest.Consume(RunEndLine());
  EXPECT_EQ(ingest.error(), "event line 2: not a JSON object: garbage");
  EXPECT_FALSE(ingest.run_end_ok());
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 0);
}

}  // namespace
}  // namespace dmlbench

namespace dmlbench {
namespace {

// A line the reader cut at LineSplitter::kMaxLineBytes is refused by name,
// not parsed as a broken JSON object.
TEST_F(IngestTest, LineCutAtTheLimitIsRefused) {
  EXPECT_EQ(ErrorOf({Start(), std::string(LineSplitter::kMaxLineBytes, '{')}),
            "event line 2: longer than 16 MiB; cut and not read");
}

}  // namespace
}  // namespace dmlbench

namespace dmlbench {
namespace {

// `line` with its first `from` replaced by `to`.
std::string Replaced(std::string line, const std::string& from, const std::string& to) {
  const size_t at = line.find(from);
  if (at == std::string::npos) throw std::logic_error("no " + from + " in " + line);
  return line.replace(at, from.size(), to);
}

// The trust boundary: a value no trainer can mean fails the attempt as
// malformed output instead of being stored.
TEST_F(IngestTest, ImpossibleTimesAndAccuraciesAreRefused) {
  const std::string start = Start();
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"wall_s\":0.500000", "\"wall_s\":-1")}),
            "event line 2: epoch: field 'wall_s' must be between 0 and 1e+09, got -1");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"wall_s\":0.500000", "\"wall_s\":0")}),
            "event line 2: epoch: field 'wall_s' must be above 0, got 0");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"wall_s\":0.500000", "\"wall_s\":1e308")}),
            "event line 2: epoch: field 'wall_s' must be between 0 and 1e+09, got 1e+308");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"test_accuracy\":0.5", "\"test_accuracy\":1.5")}),
            "event line 2: epoch: field 'test_accuracy' must be between 0 and 1, got 1.5");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"max_s\":0.2", "\"max_s\":-0.2")}),
            "event line 2: epoch: phases: forward: field 'max_s' must be between 0 and 1e+09, got -0.2");
}

TEST_F(IngestTest, ImpossibleCountsAndWideIntegersAreRefused) {
  const std::string start = Start();
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"samples\":500", "\"samples\":-5")}),
            "event line 2: epoch: field 'samples' must be between 0 and 9223372036854775807, got -5");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"iterations\":5", "\"iterations\":0")}),
            "event line 2: epoch: field 'iterations' must be between 1 and 5, got 0");
  // 2^32 + 2 was stored as epoch 2; 2^64 - 1 bytes as -1.
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"epoch\":1", "\"epoch\":4294967298")}),
            "event line 2: epoch: field 'epoch' must be between 1 and 2147483647, got 4294967298");
  EXPECT_EQ(ErrorOf({start, Replaced(EpochLine(1), "\"bytes_sent\":1000", "\"bytes_sent\":18446744073709551615")}),
            "event line 2: epoch: ranks[0]: field 'bytes_sent' must be between 0 and 9223372036854775807, got "
            "18446744073709551615");
  EXPECT_EQ(ErrorOf({Replaced(start, "\"iterations_per_epoch\":5", "\"iterations_per_epoch\":-3")}),
            "event line 1: run_start: field 'iterations_per_epoch' must be between 1 and 9223372036854775807, got -3");
}

TEST_F(IngestTest, RanksOutsideTheWorldOrListedTwiceAreRefused) {
  facts_.workers = 2;
  EXPECT_EQ(ErrorOf({Start(), Replaced(EpochLine(1, 2), "\"rank\":1", "\"rank\":0")}),
            "event line 2: epoch: ranks[1]: rank 0 is listed twice");
  EXPECT_EQ(ErrorOf({Start(), Replaced(EpochLine(1, 2), "\"rank\":1", "\"rank\":2")}),
            "event line 2: epoch: ranks[1]: field 'rank' must be between 0 and 1, got 2");
}

TEST_F(IngestTest, ADuplicateKeyIsRefusedWhicheverWouldWin) {
  EXPECT_EQ(ErrorOf({Start(), Replaced(EpochLine(1), "\"samples\":500", "\"samples\":500,\"samples\":7")}),
            "event line 2: the key 'samples' appears twice in one object");
}

// The run_start must describe the run launched: its parameters and the
// dataset checksum its run key embeds.
TEST_F(IngestTest, TrustRunStartThatContradictsTheLaunchIsRefused) {
  EXPECT_EQ(ErrorOf({Replaced(Start(), "\"architecture\":\"ring\"", "\"architecture\":\"mpi\"")}),
            "event line 1: run_start: config: field 'architecture' is \"mpi\", but the run was launched with \"ring\"");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "\"batch_size\":100", "\"batch_size\":50")}),
            "event line 1: run_start: config: field 'batch_size' is 50, but the run was launched with 100");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "\"epochs\":2", "\"epochs\":3")}),
            "event line 1: run_start: config: field 'epochs' is 3, but the run was launched with 2");
  RunFacts two = facts_;
  two.workers = 2;
  EXPECT_EQ(ErrorOf({RunStartLine(two)}),
            "event line 1: run_start: field 'world_size' is 2, but the run was launched with 1");
  RunFacts ps = facts_;
  ps.servers = 1;
  EXPECT_EQ(ErrorOf({RunStartLine(ps)}),
            "event line 1: run_start: config: field 'servers' is 1, but the run was launched with 0");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "\"workers\":1", "\"workers\":0")}),
            "event line 1: run_start: field 'workers' is 0, but the run was launched with 1");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "synthetic:1:10000", "synthetic:1:1000")}),
            "event line 1: run_start: field 'dataset_sha256' is \"synthetic:1:1000\", but the run was launched with "
            "\"synthetic:1:10000\"");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "synthetic:1:10000", "")}),
            "event line 1: run_start: field 'dataset_sha256' is \"\", but the run was launched with "
            "\"synthetic:1:10000\"");
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM attempts WHERE world_size IS NOT NULL"), 0);
}

TEST_F(IngestTest, TrustRunStartOfAParameterServerRunNamesItsServers) {
  facts_.architecture = "ps";
  facts_.workers = 2;
  facts_.servers = 2;
  EXPECT_EQ(ErrorOf({Start()}), "");
  EXPECT_EQ(ErrorOf({Replaced(Start(), "\"world_size\":4,\"workers\":2,\"servers\":2",
                              "\"world_size\":4,\"workers\":2,\"servers\":1")}),
            "event line 1: run_start: field 'servers' is 1, but the run was launched with 2");
}

// A run launched with warmup_iterations = 2: its epoch 1 has those 2
// iterations, every later epoch run_start's iterations_per_epoch, and its
// run_start must say it was told so.
class WarmupIngestTest : public IngestTest {
 protected:
  Ingest MakeWarmup() {
    LaunchedRun launched = Launched(facts_);
    launched.params.warmup_iterations = 2;
    return Ingest(store_, run_id_, attempt_id_, launched);
  }
  std::string WarmupStart() const { return Replaced(Start(), "\"epochs\":2}", "\"epochs\":2,\"warmup_iterations\":2}"); }
  static std::string WarmupEpoch() {
    return Replaced(Replaced(Replaced(EpochLine(1), "\"iterations\":5", "\"iterations\":2"), "\"samples\":500",
                             "\"samples\":200"),
                    "[120000,95000,95000,95000,95000]", "[120000,95000]");
  }
  std::string WarmupErrorOf(const std::vector<std::string>& lines) {
    Ingest ingest = MakeWarmup();
    for (const std::string& line : lines) ingest.Consume(line);
    return ingest.error();
  }
};

TEST_F(WarmupIngestTest, AShortWarmupEpochIsStoredWithItsIterations) {
  Ingest ingest = MakeWarmup();
  for (const std::string& line : {WarmupStart(), WarmupEpoch(), EpochLine(2), RunEndLine()}) ingest.Consume(line);
  EXPECT_EQ(ingest.error(), "");
  EXPECT_TRUE(ingest.run_end_ok());
  EXPECT_EQ(Text(store_, "SELECT group_concat(iterations, ' ') FROM (SELECT iterations FROM epochs ORDER BY epoch)"),
            "2 5");
  EXPECT_EQ(Text(store_, "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM iterations GROUP BY epoch "
                         "ORDER BY epoch)"),
            "2 5");
}

TEST_F(WarmupIngestTest, EpochsOfAnotherLengthThanPlannedAreRefused) {
  EXPECT_EQ(WarmupErrorOf({WarmupStart(), EpochLine(1)}),
            "event line 2: epoch: epoch 1 must have 2 iterations (the run's warmup_iterations), got 5");
  EXPECT_EQ(WarmupErrorOf({WarmupStart(), WarmupEpoch(), Replaced(WarmupEpoch(), "\"epoch\":1", "\"epoch\":2")}),
            "event line 3: epoch: epoch 2 must have 5 iterations (run_start's iterations_per_epoch), got 2");
  // Without a warm-up of its own, every epoch is whole.
  EXPECT_EQ(ErrorOf({Start(), WarmupEpoch()}),
            "event line 2: epoch: epoch 1 must have 5 iterations (run_start's iterations_per_epoch), got 2");
}

TEST_F(WarmupIngestTest, ARunStartThatWasNotToldOfTheWarmupIsRefused) {
  EXPECT_EQ(WarmupErrorOf({Start()}),
            "event line 1: run_start: config: missing field 'warmup_iterations'");
  EXPECT_EQ(WarmupErrorOf({Replaced(WarmupStart(), "\"warmup_iterations\":2", "\"warmup_iterations\":0")}),
            "event line 1: run_start: config: field 'warmup_iterations' is 0, but the run was launched with 2");
}

// Every planned epoch, the warm-up included, before a run_end ok; and no
// more than planned.
TEST_F(IngestTest, TrustRunEndOkBeforeEveryEpochIsRefused) {
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), RunEndLine()}),
            "event line 3: run_end: status ok after 1 of the 2 epochs launched");
  EXPECT_EQ(ErrorOf({Start(), RunEndLine()}), "event line 2: run_end: status ok after 0 of the 2 epochs launched");
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), EpochLine(3)}),
            "event line 4: epoch: the run was launched with 2 epochs, got epoch 3");
  // A trainer that reports its own error may stop early.
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), R"({"event":"run_end","format_version":1,"status":"error","error":"x"})"}),
            "");
}

TEST_F(IngestTest, TrustRunEndOkWithAnEmptyChecksumIsRefused) {
  EXPECT_EQ(ErrorOf({Start(), EpochLine(1), EpochLine(2), RunEndLine("")}),
            "event line 4: run_end: field 'parameter_checksum' is empty");
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM attempts WHERE trainer_status IS NOT NULL"), 0);
}

// Events come from rank 0 only; what else another rank prints is its own.
TEST_F(IngestTest, TrustAnEventPrintedByAnotherRankIsRefused) {
  Ingest ingest = Make();
  ingest.ConsumeOtherRank(1, "some progress of rank 1");
  ingest.ConsumeOtherRank(1, R"({"note":"no event"})");
  EXPECT_EQ(ingest.error(), "");
  ingest.ConsumeOtherRank(3, EpochLine(1));
  ingest.ConsumeOtherRank(1, Start());
  EXPECT_EQ(ingest.error(),
            "rank 3 printed a \"epoch\" event on its standard output; events come from rank 0 only");
}

// What the checks let through and a rule of the schema refuses (a trigger
// stands for one) fails the attempt like any malformed event; the group it
// was part of goes with its partial rows, and later lines are ignored.
TEST_F(IngestTest, TrustAnEventTheDatabaseRefusesIsMalformedOutput) {
  store_.ExecuteScript(
      "CREATE TRIGGER refuse_epoch_2 BEFORE INSERT ON rank_phases WHEN NEW.epoch = 2 "
      "BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: rank rows of epoch 2'); END");
  Ingest ingest = Make(FrozenClock);
  ingest.Consume(Start());
  ingest.Consume(EpochLine(1));
  ingest.Consume(EpochLine(2));
  ingest.Consume(RunEndLine());
  ingest.Flush();
  EXPECT_EQ(ingest.error(),
            "event line 3: the database refused it: CHECK constraint failed: rank rows of epoch 2");
  EXPECT_FALSE(ingest.run_end_ok());
  EXPECT_FALSE(store_.batch_open());
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM epochs"), 0);
  EXPECT_EQ(Int(store_, "SELECT count(*) FROM rank_phases"), 0);
  EXPECT_EQ(Int(store_, "SELECT world_size FROM attempts"), 1);
}

}  // namespace
}  // namespace dmlbench
