// Runs on this machine can be modelled: the first local sweep of a
// database probes this machine's shared memory as the local runs' link
// (once), so `model fit` finds a probed link for them, and a model that the
// runs cannot pin says what it needs. Through the real `dmlbench run` of
// the real trainer and MPI.
#include <gtest/gtest.h>

#include <string>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/store_queries.h"

namespace dmlbench {
namespace {

using testing::Dmlbench;

TEST(ModelFitLocalTest, TheFirstLocalSweepProbesThisMachineOnceAndItsRunsCanBeFitted) {
  testing::TempDir dir;
  testing::WriteFile(dir / "m.toml", "[experiment]\nname = \"local-model\"\n[defaults]\ndataset = \"synthetic\"\n"
                                     "max_iterations_per_epoch = 20\n[matrix]\narchitecture = [\"ring\", \"mpi\"]\n"
                                     "workers = [1, 2]\n[split.calibration]\nworkers = [1]\n");
  const std::string db = dir / "results.db";
  const CommandOutput run = Dmlbench({"--db", db, "run", dir / "m.toml", "--trainer", DMLBENCH_TRAINER}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("dmlbench: probed this machine's shared memory once for `dmlbench model fit`: alpha "),
            std::string::npos)
      << run.err;
  {
    Store store(db, Store::Mode::kReadOnly);
    EXPECT_GT(testing::Int(store, "SELECT count(*) FROM link_probes WHERE profile = 'local' AND "
                                  "bandwidth_bits_per_s = 0 AND latency_s = 0 AND hosts = 'local,local'"),
              5);
  }
  // The next sweep finds the probe.
  const CommandOutput again = Dmlbench({"--db", db, "run", dir / "m.toml", "--trainer", DMLBENCH_TRAINER}, 300);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("probed this machine"), std::string::npos) << again.err;

  const CommandOutput fit = Dmlbench({"--db", db, "model", "fit", "--model", "linear"}, 300);
  EXPECT_EQ(fit.exit_code, 0) << fit.err << fit.out;
  EXPECT_NE(fit.out.find("linear: fit "), std::string::npos) << fit.out;
  // A model these runs cannot pin says, in its line, what it needs.
  const CommandOutput counts = Dmlbench({"--db", db, "model", "fit", "--model", "counts"}, 300);
  EXPECT_NE(counts.exit_code, 0);
  EXPECT_NE((counts.out + counts.err).find("counts: compute needs one-worker runs of ring, mpi or p2p at two batch "
                                           "sizes (or layer widths) or more (experiments/compute.toml)"),
            std::string::npos)
      << counts.out << counts.err;
}

}  // namespace
}  // namespace dmlbench
