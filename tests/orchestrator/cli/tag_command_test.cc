// `dmlbench tag FILTER NAME` and `dmlbench untag FILTER NAME` as users run
// them, on a real database of four runs from a scripted trainer: the runs a
// filter chooses gain or lose the tag, the line printed counts them and
// those that had it already, the time a tag was first given is kept, and
// a tag given here chooses runs for `compare` as one a sweep gives does.
#include <gtest/gtest.h>

#include <ctime>

#include "orchestrator/run/run_lock.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;
using testing::TempDir;

class TagCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteFile(dir_ / "matrix.toml",
                       "[experiment]\nname = \"sweep\"\n[defaults]\ndataset = \"synthetic\"\nepochs = 2\n"
                       "[matrix]\narchitecture = [\"ring\", \"mpi\"]\nworkers = [1]\n"
                       "[execution]\nrepetitions = 2\ntimeout_s = 60\nattempts = 1\n");
    const std::string trainer = testing::WriteScript(dir_ / "trainer", testing::GoodTrainerBody());
    const CommandOutput run = Dmlbench({"--db", db_, "run", dir_ / "matrix.toml", "--trainer", trainer});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  std::string Tags() const {
    Store store(db_, Store::Mode::kReadOnly);
    return testing::Text(store, "SELECT group_concat(architecture || ':' || tags, ' ') FROM "
                                "(SELECT architecture, tags FROM run_overview ORDER BY architecture DESC, repetition)");
  }

  TempDir dir_;
  std::string db_ = dir_ / "results.db";
};

TEST_F(TagCommandTest, TagsAndUntagsTheRunsAFilterChooses) {
  const double before = static_cast<double>(std::time(nullptr));
  CommandOutput out = Dmlbench({"--db", db_, "tag", "architecture=ring", "baseline"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out, "tagged 2 runs baseline\n");
  EXPECT_EQ(out.err, "");
  const double after = static_cast<double>(std::time(nullptr)) + 1;
  EXPECT_EQ(Tags(), "ring:baseline ring:baseline mpi: mpi:");
  double first = 0;
  {
    Store store(db_, Store::Mode::kReadOnly);
    first = testing::Real(store, "SELECT min(tagged_unix_s) FROM run_tags WHERE tag = 'baseline'");
    EXPECT_GE(first, before);
    EXPECT_LE(first, after);
  }
  out = Dmlbench({"--db", db_, "tag", "experiment=sweep", "baseline"});
  EXPECT_EQ(out.out, "tagged 2 runs baseline; 2 of the 4 chosen had it already\n");
  out = Dmlbench({"--db", db_, "tag", "architecture=ring", "baseline"});
  EXPECT_EQ(out.out, "tagged 0 runs baseline; all 2 chosen had it already\n");
  {
    Store store(db_, Store::Mode::kReadOnly);
    EXPECT_EQ(testing::Real(store, "SELECT min(tagged_unix_s) FROM run_tags t JOIN runs USING (run_id) "
                                   "WHERE architecture = 'ring'"),
              first)
        << "a run keeps the time it was first given the tag";
  }
  // A tag given here chooses runs as one a sweep gives.
  EXPECT_EQ(Dmlbench({"--db", db_, "compare", "baseline", "tag=baseline"}).exit_code, 0);

  out = Dmlbench({"--db", db_, "untag", "architecture=mpi", "baseline"});
  EXPECT_EQ(out.out, "untagged 2 runs baseline\n");
  EXPECT_EQ(Tags(), "ring:baseline ring:baseline mpi: mpi:");
  out = Dmlbench({"--db", db_, "untag", "architecture=mpi", "baseline"});
  EXPECT_EQ(out.out, "untagged 0 runs baseline; none of the 2 chosen had it\n");
  out = Dmlbench({"--db", db_, "untag", "experiment=sweep,repetition=0", "baseline"});
  EXPECT_EQ(out.out, "untagged 1 run baseline; 1 of the 2 chosen did not have it\n");
  out = Dmlbench({"--db", db_, "untag", "architecture=ring,repetition=0", "baseline"});
  EXPECT_EQ(out.out, "untagged 0 runs baseline; the run chosen did not have it\n");
  EXPECT_EQ(Tags(), "ring: ring:baseline mpi: mpi:");
}

// ---- error paths of tag_command.cc follow ------------------------------------

TEST_F(TagCommandTest, ABadNameAFilterThatChoosesNothingAMissingDatabaseAndASweepAreRefused) {
  CommandOutput out = Dmlbench({"--db", db_, "tag", "architecture=ring", "base line"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.err, "dmlbench: error: NAME: a tag must be 1 to 64 letters, digits, '.', '_' or '-', got "
                     "\"base line\"\n");
  out = Dmlbench({"--db", db_, "untag", "workers=7", "baseline"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.err, "dmlbench: error: FILTER workers=7 matches none of the 4 runs in " + db_ + "\n");
  out = Dmlbench({"--db", db_, "tag", "workers>", "baseline"});
  EXPECT_EQ(out.err, "dmlbench: error: FILTER: column 9: expected a value after '>'\n"
                     "workers>\n"
                     "        ^\n");
  const std::string missing = dir_ / "missing.db";
  out = Dmlbench({"--db", missing, "tag", "architecture=ring", "baseline"});
  EXPECT_EQ(out.err, "dmlbench: error: " + missing + ": no such database (it is created by `dmlbench run MATRIX`)\n");
  EXPECT_FALSE(std::filesystem::exists(missing));
  {
    const RunLock sweep(db_);  // as a sweep holds it
    out = Dmlbench({"--db", db_, "tag", "architecture=ring", "baseline"});
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(out.err, "dmlbench: error: " + db_ + ": another `dmlbench run` is using this database\n");
  }
  EXPECT_EQ(Tags(), "ring: ring: mpi: mpi:");
  EXPECT_NE(Dmlbench({"--db", db_, "tag", "architecture=ring"}).exit_code, 0) << "NAME is required";
}

}  // namespace
}  // namespace dmlbench
