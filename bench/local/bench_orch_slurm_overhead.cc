// Per-run overhead of each provider, side by side in one run: tiny runs (1
// worker, synthetic data, 1 iteration) through `dmlbench run` with provider
// local (mpirun here), ssh (one host: a real sshd on 127.0.0.2,
// SshdFixture), slurm (a job step of the sweep's allocation, on a private
// Slurm of one node, SlurmFixture) and slurm with launch = "mpirun". The
// providers take turns, a sweep of 5 runs each, until every one has run
// --reps runs, so that all see the same load. Overhead of a run = its
// attempt's wall time minus the trainer's own (run_end total_wall_s): the
// start and end of the job around the trainer (mpirun and its daemons, srun
// and PMIx, the sweep's first salloc), not the orchestrator's bookkeeping.
// Root with Slurm and OpenSSH installed (scripts/setup --tests).
//   bench_orch_slurm_overhead [--reps R]
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/support/dmlbench_program.h"
#include "tests/orchestrator/support/run_fixture.h"
#include "tests/orchestrator/support/slurm_fixture.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace {

namespace bench = dmlbench::bench;
constexpr int kBlock = 5;  // runs of one sweep

struct Provider {
  std::string name;
  std::string execution;  // [execution] and [slurm] lines
  std::vector<double> overhead_s, attempt_s, trainer_s;
};

// Attempt wall, trainer wall and their difference of every ok attempt.
void ReadAttempts(const std::string& db, Provider* provider) {
  dmlbench::Store store(db, dmlbench::Store::Mode::kReadOnly);
  const dmlbench::QueryResult rows = store.Query(
      "SELECT end_unix_s - start_unix_s, total_wall_s FROM attempts WHERE status = 'ok' ORDER BY attempt_id");
  for (const std::vector<dmlbench::Cell>& row : rows.rows) {
    const double attempt = std::get<double>(row[0]);
    const double trainer = std::get<double>(row[1]);
    provider->attempt_s.push_back(attempt);
    provider->trainer_s.push_back(trainer);
    provider->overhead_s.push_back(attempt - trainer);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  CLI::App app("per-run overhead of the local, ssh and slurm providers, side by side");
  bench::AddRepetitions(app, &reps, kBlock);
  CLI11_PARSE(app, argc, argv);
  const std::string why = dmlbench::testing::SlurmFixture::Unavailable();
  if (!why.empty()) {
    std::printf("needs a private Slurm: %s\n", why.c_str());
    return 0;
  }
  dmlbench::testing::SlurmFixture slurm;
  dmlbench::testing::SshdFixture sshd({"127.0.0.2"});
  dmlbench::testing::TempDir dir;
  const std::string inventory = sshd.WriteInventory("hosts.toml");
  std::vector<Provider> providers = {
      {"local", "provider = \"local\"\n", {}, {}, {}},
      {"ssh", "provider = \"ssh\"\ninventory = \"" + inventory + "\"\n", {}, {}, {}},
      {"slurm (srun)", "provider = \"slurm\"\n", {}, {}, {}},
      {"slurm (mpirun)", "provider = \"slurm\"\n[slurm]\nlaunch = \"mpirun\"\n", {}, {}, {}},
  };
  const int blocks = (reps + kBlock - 1) / kBlock;
  for (int block = 1; block <= blocks; ++block) {
    for (std::size_t p = 0; p < providers.size(); ++p) {
      const std::string matrix = dir / ("tiny" + std::to_string(p) + ".toml");
      dmlbench::testing::WriteFile(
          matrix, "[experiment]\nname = \"overhead\"\n[defaults]\ndataset = \"synthetic\"\nepochs = 1\n"
                  "batch_size = 10\nmax_iterations_per_epoch = 1\n[matrix]\narchitecture = [\"ring\"]\n"
                  "workers = [1]\n[execution]\nrepetitions = " + std::to_string(kBlock) +
                      "\nseed = " + std::to_string(block * 1000) + "\ntimeout_s = 120\nattempts = 1\n" +
                      providers[p].execution);
      const dmlbench::CommandOutput run = dmlbench::testing::Dmlbench(
          {"run", matrix, "--db", dir / ("results" + std::to_string(p) + ".db"), "--trainer", DMLBENCH_TRAINER},
          600);
      if (run.exit_code != 0) {
        std::fprintf(stderr, "%s: dmlbench run failed:\n%s%s\n", providers[p].name.c_str(), run.out.c_str(),
                     run.err.c_str());
        return 1;
      }
    }
  }
  std::printf("per-run overhead = attempt wall - trainer's own wall; %d tiny runs each (ring, 1 worker, synthetic, "
              "1 iteration), sweeps of %d taking turns\n",
              blocks * kBlock, kBlock);
  std::printf("%-16s %-38s %-38s %s\n", "provider", "overhead", "attempt", "trainer");
  for (std::size_t p = 0; p < providers.size(); ++p) {
    ReadAttempts(dir / ("results" + std::to_string(p) + ".db"), &providers[p]);
    const Provider& provider = providers[p];
    std::printf("%-16s %-38s %-38s %s\n", provider.name.c_str(),
                bench::Describe(bench::Summarize(provider.overhead_s), 1e3, "ms", 0).c_str(),
                bench::Describe(bench::Summarize(provider.attempt_s), 1e3, "ms", 0).c_str(),
                bench::Describe(bench::Summarize(provider.trainer_s), 1e3, "ms", 0).c_str());
  }
  return 0;
}
