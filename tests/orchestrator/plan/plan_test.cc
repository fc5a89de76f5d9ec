// Plan: the runs of a matrix against what the database holds. A run's key
// names the system it is measured on, so a run stored for one system is
// not found for another; a run stored before systems were recorded is found
// under its key of then wherever the sweep runs; CheckSlots names the runs
// no host set can hold. Against a real SQLite file; no host is touched.
#include "orchestrator/plan/plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/matrix/matrix.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

constexpr char kMatrix[] =
    "[experiment]\nname = \"plan-test\"\n[defaults]\ndataset = \"synthetic\"\n[matrix]\nworkers = [1, 2]\n";

class PlanTest : public ::testing::Test {
 protected:
  PlanTest() : experiment_(ParseExperiment(kMatrix, "experiments/plan.toml")), store_(dir_ / "results.db") {}

  PlanInputs Inputs(const std::string& system) const { return {DMLBENCH_TRAINER, "trainer-sha", "", system}; }

  // Stores the plan's runs as a sweep on `system` would ("" = before
  // systems were recorded).
  void Keep(const std::vector<PlanItem>& plan, const std::string& system) {
    std::vector<NewRun> runs;
    for (const PlanItem& item : plan) {
      RunProvenance provenance;
      provenance.trainer_sha256 = "trainer-sha";
      provenance.dataset_sha256 = item.dataset_sha256;
      provenance.system = system;
      runs.push_back(NewRun{&item.run, item.run_key, provenance});
    }
    std::vector<std::int64_t> ids;
    store_.AddExperimentRuns(experiment_, runs, 1, &ids);
  }

  testing::TempDir dir_;
  Experiment experiment_;
  dmlbench::Store store_;
};

TEST_F(PlanTest, ARunStoredForOneSystemIsAnotherRunOnAnother) {
  const std::vector<PlanItem> here = Plan(experiment_, store_, Inputs("local/a"));
  Keep(here, "local/a");
  for (const PlanItem& item : Plan(experiment_, store_, Inputs("local/a"))) {
    EXPECT_NE(item.run_id, 0);
    EXPECT_EQ(item.system, "local/a");
  }
  const std::vector<PlanItem> there = Plan(experiment_, store_, Inputs("ssh/h1,h2"));
  ASSERT_EQ(there.size(), 2u);
  for (std::size_t i = 0; i < there.size(); ++i) {
    EXPECT_EQ(there[i].run_id, 0) << "found a run measured on another system";
    EXPECT_NE(there[i].run_key, here[i].run_key);
    EXPECT_EQ(there[i].run_key, RunKey(there[i].run.params, "trainer-sha", there[i].dataset_sha256, "ssh/h1,h2"));
  }
}

TEST_F(PlanTest, ARunStoredBeforeSystemsWereRecordedIsFoundWhereverTheSweepRuns) {
  const std::vector<PlanItem> legacy = Plan(experiment_, store_, Inputs(""));
  Keep(legacy, "");
  EXPECT_EQ(testing::Int(store_, "SELECT count(*) FROM runs WHERE system IS NULL"), 2);
  for (const std::string& system : {"local/a", "cluster/m/main"}) {
    const std::vector<PlanItem> plan = Plan(experiment_, store_, Inputs(system));
    for (std::size_t i = 0; i < plan.size(); ++i) {
      EXPECT_NE(plan[i].run_id, 0) << system;
      EXPECT_EQ(plan[i].run_key, legacy[i].run_key) << system;
      EXPECT_EQ(plan[i].system, "") << system;
    }
  }
}

// A row under a key without the system but with a system recorded is not
// a run of before systems: it is not taken for this system's.
TEST_F(PlanTest, ALegacyKeyWithASystemRecordedIsNotFoundForAnother) {
  Keep(Plan(experiment_, store_, Inputs("")), "local/a");
  for (const PlanItem& item : Plan(experiment_, store_, Inputs("local/b"))) EXPECT_EQ(item.run_id, 0);
}

TEST_F(PlanTest, RunsNoHostSetCanHoldAreNamed) {
  const std::vector<PlanItem> plan = Plan(experiment_, store_, Inputs("local/a"));
  try {
    CheckSlots(plan, HostSlots{1, "hosts.toml"});
    ADD_FAILURE() << "a run of 2 ranks fit 1 slot";
  } catch (const PlanError& error) {
    EXPECT_EQ(std::string(error.what()),
              "hosts.toml has 1 slot, but 1 run needs more ranks: ring w=2 b=100 rep=0 (2 ranks); remove such runs "
              "with [[exclude]] (or leave them out with --only) or add hosts");
  }
  EXPECT_NO_THROW(CheckSlots(plan, HostSlots{2, "hosts.toml"}));
}

}  // namespace
}  // namespace dmlbench
