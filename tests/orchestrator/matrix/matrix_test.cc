#include "orchestrator/matrix/matrix.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "orchestrator/launch/trainer_command.h"

namespace dmlbench {
namespace {

constexpr char kPath[] = "experiments/sweep.toml";
// Every experiment needs a name; tests append what they are about.
constexpr char kHeader[] = "[experiment]\nname = \"t\"\n";

Experiment Parse(const std::string& body) { return ParseExperiment(kHeader + body, kPath); }

// The whole message of the MatrixError `text` must raise.
std::string ErrorOf(const std::string& text) {
  try {
    ParseExperiment(text, kPath);
  } catch (const MatrixError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no MatrixError for:\n" << text;
  return "";
}
std::string ErrorOfBody(const std::string& body) { return ErrorOf(kHeader + body); }

std::vector<std::string> Described(const Experiment& experiment) {
  std::vector<std::string> lines;
  for (const PlannedRun& run : experiment.runs) lines.push_back(Describe(run.params));
  return lines;
}

// Expansion semantics.

TEST(MatrixExpansionTest, ProductVariesTheEarlierParameterSlowest) {
  // File order does not matter: architecture comes before workers.
  Experiment experiment = Parse(
      "[matrix]\n"
      "workers = [1, 2]\n"
      "architecture = [\"ring\", \"mpi\"]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=100 rep=0", "ring w=2 b=100 rep=0",
                                      "mpi w=1 b=100 rep=0", "mpi w=2 b=100 rep=0"}));
}

TEST(MatrixExperimentTest, TagsAreReadInTheirOrder) {
  const Experiment experiment =
      ParseExperiment("[experiment]\nname = \"t\"\ntags = [\"nightly\", \"v2.1_rc-1\"]\n[matrix]\nworkers = [1]\n", kPath);
  EXPECT_EQ(experiment.tags, (std::vector<std::string>{"nightly", "v2.1_rc-1"}));
  EXPECT_TRUE(Parse("[matrix]\nworkers = [1]\n").tags.empty());
}

TEST(MatrixExpansionTest, ValuesKeepTheirListOrder) {
  Experiment experiment = Parse("[matrix]\nworkers = [4, 1, 2]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=4 b=100 rep=0", "ring w=1 b=100 rep=0",
                                      "ring w=2 b=100 rep=0"}));
}

TEST(MatrixExpansionTest, DefaultsApplyToEveryRun) {
  Experiment experiment = Parse(
      "[defaults]\n"
      "architecture = \"mpi\"\n"
      "batch_size = 50\n"
      "epochs = 3\n"
      "hidden = [64, 16, 8]\n"
      "learning_rate = 0.1\n"
      "overlap = true\n"
      "bucket_bytes = 4096\n"
      "max_iterations_per_epoch = 7\n"
      "dataset = \"synthetic\"\n"
      "[matrix]\n"
      "workers = [1, 2]\n");
  ASSERT_EQ(experiment.runs.size(), 2u);
  for (const PlannedRun& run : experiment.runs) {
    EXPECT_EQ(run.params.architecture, Architecture::kMpi);
    EXPECT_EQ(run.params.batch_size, 50);
    EXPECT_EQ(run.params.epochs, 3);
    EXPECT_EQ(run.params.hidden, (std::vector<int>{64, 16, 8}));
    EXPECT_EQ(run.params.learning_rate, 0.1);
    EXPECT_TRUE(run.params.overlap);
    EXPECT_EQ(run.params.bucket_bytes, 4096);
    EXPECT_EQ(run.params.max_iterations_per_epoch, 7);
    EXPECT_EQ(run.params.dataset, "synthetic");
    EXPECT_EQ(run.params.network.name, "");
    EXPECT_EQ(run.params.network.bandwidth_bits_per_s, 0);
  }
}

TEST(MatrixExpansionTest, UnsetParametersKeepRunParamsDefaults) {
  Experiment experiment = Parse("[matrix]\nworkers = [3]\n");
  RunParams expected;
  expected.workers = 3;
  ASSERT_EQ(experiment.runs.size(), 1u);
  EXPECT_EQ(CanonicalJson(experiment.runs[0].params), CanonicalJson(expected));
}

TEST(MatrixExpansionTest, IntegerLearningRateIsANumber) {
  Experiment experiment = Parse("[matrix]\nlearning_rate = [1, 0.5]\n");
  EXPECT_EQ(experiment.runs[0].params.learning_rate, 1.0);
  EXPECT_EQ(experiment.runs[1].params.learning_rate, 0.5);
}

TEST(MatrixExpansionTest, ServersApplyToPsOnlyAndCollapseElsewhere) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "architecture = [\"ring\", \"ps\"]\n"
      "servers = [1, 2]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=100 rep=0", "ps k=1 w=1 b=100 rep=0",
                                      "ps k=2 w=1 b=100 rep=0"}));
  EXPECT_EQ(experiment.runs[0].params.servers, 0);
  EXPECT_EQ(experiment.runs[2].params.ranks(), 3);
}

TEST(MatrixExpansionTest, PsWithoutServersHasOne) {
  Experiment experiment = Parse("[matrix]\narchitecture = [\"ps\"]\n");
  EXPECT_EQ(experiment.runs[0].params.servers, 1);
}

TEST(MatrixExpansionTest, ZipVariesItsParametersTogether) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "workers = [1, 2]\n"
      "[[zip]]\n"
      "batch_size = [50, 200]\n"
      "learning_rate = [0.025, 0.1]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=50 rep=0", "ring w=1 b=200 rep=0",
                                      "ring w=2 b=50 rep=0", "ring w=2 b=200 rep=0"}));
  EXPECT_EQ(experiment.runs[0].params.learning_rate, 0.025);
  EXPECT_EQ(experiment.runs[1].params.learning_rate, 0.1);
}

TEST(MatrixExpansionTest, ZipTakesThePlaceOfItsEarliestParameter) {
  // The group holds architecture, which comes before batch_size.
  Experiment experiment = Parse(
      "[matrix]\n"
      "batch_size = [10, 20]\n"
      "[[zip]]\n"
      "workers = [1, 2]\n"
      "architecture = [\"mpi\", \"p2p\"]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"mpi w=1 b=10 rep=0", "mpi w=1 b=20 rep=0",
                                      "p2p w=2 b=10 rep=0", "p2p w=2 b=20 rep=0"}));
}

TEST(MatrixExpansionTest, ZipAloneIsAMatrix) {
  Experiment experiment = Parse("[[zip]]\nworkers = [1, 2]\nbatch_size = [10, 20]\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=10 rep=0", "ring w=2 b=20 rep=0"}));
}

TEST(MatrixExpansionTest, ExcludeRemovesPointsMatchingEveryKey) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "architecture = [\"ring\", \"p2p\"]\n"
      "workers = [1, 2]\n"
      "[[exclude]]\n"
      "architecture = \"p2p\"\n"
      "workers = 1\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=100 rep=0", "ring w=2 b=100 rep=0",
                                      "p2p w=2 b=100 rep=0"}));
}

TEST(MatrixExpansionTest, ExcludeMatchesResolvedServers) {
  // servers = 1 only matches ps: ring's servers are 0.
  Experiment experiment = Parse(
      "[matrix]\n"
      "architecture = [\"ring\", \"ps\"]\n"
      "servers = [1, 2]\n"
      "[[exclude]]\n"
      "servers = 1\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=100 rep=0", "ps k=2 w=1 b=100 rep=0"}));
}

TEST(MatrixExpansionTest, IncludeAddsPointsFromTheDefaultsAfterTheProduct) {
  Experiment experiment = Parse(
      "[defaults]\n"
      "batch_size = 50\n"
      "[matrix]\n"
      "architecture = [\"ring\", \"ps\"]\n"
      "workers = [1, 2]\n"
      "[[include]]\n"
      "architecture = \"ps\"\n"
      "servers = 4\n"
      "workers = 7\n"
      "[[exclude]]\n"
      "architecture = \"ps\"\n");
  // Exclude applies to the product only: the include stays.
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=50 rep=0", "ring w=2 b=50 rep=0",
                                      "ps k=4 w=7 b=50 rep=0"}));
}

TEST(MatrixExpansionTest, IncludeWithoutServersForPsHasOne) {
  Experiment experiment = Parse("[matrix]\nworkers = [1]\n[[include]]\narchitecture = \"ps\"\n");
  EXPECT_EQ(experiment.runs[1].params.servers, 1);
}

TEST(MatrixExpansionTest, RepetitionsAreTheOutermostLoopAndOffsetTheSeed) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "workers = [1, 2]\n"
      "[execution]\n"
      "repetitions = 2\n"
      "seed = 10\n");
  EXPECT_EQ(Described(experiment),
            (std::vector<std::string>{"ring w=1 b=100 rep=0", "ring w=2 b=100 rep=0",
                                      "ring w=1 b=100 rep=1", "ring w=2 b=100 rep=1"}));
  EXPECT_EQ(experiment.runs[0].params.seed, 10u);
  EXPECT_EQ(experiment.runs[1].params.seed, 10u);
  EXPECT_EQ(experiment.runs[2].params.seed, 11u);
  EXPECT_EQ(experiment.runs[3].params.repetition, 1);
}

TEST(MatrixExpansionTest, DefaultSeedIsOne) {
  EXPECT_EQ(Parse("[matrix]\nworkers = [1]\n").runs[0].params.seed, 1u);
}

TEST(MatrixExpansionTest, NetworkProfilesResolveToBitsAndSeconds) {
  Experiment experiment = Parse(
      "[networks.slow]\n"
      "bandwidth_mbit_per_s = 100\n"
      "latency_ms = 0.5\n"
      "[networks.fast]\n"
      "bandwidth_mbit_per_s = 1000\n"
      "[matrix]\n"
      "network = [\"slow\", \"fast\"]\n"
      "[execution]\n"
      "provider = \"cluster\"\n");
  ASSERT_EQ(experiment.runs.size(), 2u);
  EXPECT_EQ(experiment.runs[0].params.network.name, "slow");
  EXPECT_DOUBLE_EQ(experiment.runs[0].params.network.bandwidth_bits_per_s, 1e8);
  EXPECT_DOUBLE_EQ(experiment.runs[0].params.network.latency_s, 5e-4);
  EXPECT_EQ(experiment.runs[1].params.network.name, "fast");
  EXPECT_DOUBLE_EQ(experiment.runs[1].params.network.bandwidth_bits_per_s, 1e9);
  EXPECT_EQ(experiment.runs[1].params.network.latency_s, 0);
  EXPECT_EQ(Describe(experiment.runs[1].params), "ring w=1 b=100 net=fast rep=0");
}

// The calibration/validation split.

TEST(MatrixSplitTest, RunsMatchingTheRuleCalibrateTheRestValidate) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "architecture = [\"ring\", \"mpi\"]\n"
      "workers = [1, 2]\n"
      "[split]\n"
      "calibration = { workers = [1] }\n");
  std::vector<std::string> splits;
  for (const PlannedRun& run : experiment.runs) splits.push_back(run.split);
  EXPECT_EQ(splits, (std::vector<std::string>{"calibration", "validation", "calibration",
                                              "validation"}));
}

TEST(MatrixSplitTest, WithoutARuleEveryRunValidates) {
  for (const PlannedRun& run : Parse("[matrix]\nworkers = [1, 2]\n").runs) {
    EXPECT_EQ(run.split, "validation");
  }
}

TEST(MatrixSplitTest, EveryKeyMustMatchAndScalarsAreOneValue) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "architecture = [\"ring\", \"mpi\"]\n"
      "workers = [1, 2]\n"
      "hidden = [[8], [16, 4]]\n"
      "[split]\n"
      "calibration = { architecture = \"mpi\", workers = [1, 2], hidden = [[16, 4]] }\n");
  std::vector<std::string> calibration;
  for (const PlannedRun& run : experiment.runs) {
    if (run.split == "calibration") {
      calibration.push_back(Describe(run.params) + " h" + std::to_string(run.params.hidden[0]));
    }
  }
  EXPECT_EQ(calibration, (std::vector<std::string>{"mpi w=1 b=100 rep=0 h16",
                                                   "mpi w=2 b=100 rep=0 h16"}));
}

TEST(MatrixSplitTest, SingleHiddenArrayIsOneValue) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "hidden = [[8], [16, 4]]\n"
      "[split]\n"
      "calibration = { hidden = [8] }\n");
  EXPECT_EQ(experiment.runs[0].split, "calibration");
  EXPECT_EQ(experiment.runs[1].split, "validation");
}

TEST(MatrixSplitTest, SplitAppliesToIncludesAndRepetitions) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "workers = [2]\n"
      "[[include]]\n"
      "workers = 1\n"
      "[execution]\n"
      "repetitions = 2\n"
      "[split]\n"
      "calibration = { workers = 1 }\n");
  std::vector<std::string> splits;
  for (const PlannedRun& run : experiment.runs) splits.push_back(run.split);
  EXPECT_EQ(splits, (std::vector<std::string>{"validation", "calibration", "validation",
                                              "calibration"}));
}

// The [slurm] table.

TEST(MatrixSlurmTest, DefaultsWhenAbsent) {
  Experiment experiment = Parse("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n");
  EXPECT_EQ(experiment.execution.provider, Provider::kSlurm);
  const SlurmOptions& slurm = experiment.execution.slurm;
  EXPECT_EQ(slurm.partition, "");
  EXPECT_EQ(slurm.time_limit_min, 0);
  EXPECT_FALSE(slurm.allocation_per_run);
  EXPECT_FALSE(slurm.one_rank_per_node);
  EXPECT_FALSE(slurm.launch_mpirun);
  EXPECT_TRUE(slurm.salloc_args.empty());
  EXPECT_TRUE(slurm.srun_args.empty());
  EXPECT_EQ(slurm.stage_dir, "/tmp");
}

TEST(MatrixSlurmTest, EveryKeyIsRead) {
  Experiment experiment = Parse(
      "[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n"
      "[slurm]\n"
      "partition = \"debug\"\naccount = \"proj-1\"\nqos = \"short\"\nconstraint = \"ib&avx2\"\n"
      "time_limit_min = 15\nallocation = \"per-run\"\nranks = \"per-node\"\n"
      "salloc_args = [\"--exclusive\", \"--comment=a b\"]\nsrun_args = [\"--cpu-bind=cores\"]\n"
      "stage_dir = \"/scratch/local\"\n");
  const SlurmOptions& slurm = experiment.execution.slurm;
  EXPECT_EQ(slurm.partition, "debug");
  EXPECT_EQ(slurm.account, "proj-1");
  EXPECT_EQ(slurm.qos, "short");
  EXPECT_EQ(slurm.constraint, "ib&avx2");
  EXPECT_EQ(slurm.time_limit_min, 15);
  EXPECT_TRUE(slurm.allocation_per_run);
  EXPECT_TRUE(slurm.one_rank_per_node);
  EXPECT_FALSE(slurm.launch_mpirun);
  EXPECT_EQ(slurm.salloc_args, (std::vector<std::string>{"--exclusive", "--comment=a b"}));
  EXPECT_EQ(slurm.srun_args, (std::vector<std::string>{"--cpu-bind=cores"}));
  EXPECT_EQ(slurm.stage_dir, "/scratch/local");
}

TEST(MatrixSlurmTest, HostileStringsAreKeptAsTheyAre) {
  Experiment experiment = Parse(
      "[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n"
      "[slurm]\npartition = \"x; rm -rf / $(id) `id` 'q' \\\"d\\\"\"\nsrun_args = [\"--comment=$HOME *\"]\n");
  EXPECT_EQ(experiment.execution.slurm.partition, "x; rm -rf / $(id) `id` 'q' \"d\"");
  EXPECT_EQ(experiment.execution.slurm.srun_args, (std::vector<std::string>{"--comment=$HOME *"}));
}

// Error paths of the [slurm] table follow.

TEST(MatrixSlurmErrorTest, SlurmTableWithAnotherProvider) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[slurm]\npartition = \"debug\"\n"),
            "experiments/sweep.toml:5:1: [slurm] is used only by provider \"slurm\", got provider \"local\"");
}

TEST(MatrixSlurmErrorTest, InventoryWithSlurm) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\ninventory = \"h.toml\"\n"),
            "experiments/sweep.toml:7:13: inventory is not used by provider \"slurm\" (Slurm knows its nodes; "
            "name them with [slurm] partition or constraint), got an inventory");
}

TEST(MatrixSlurmErrorTest, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\npartiton = \"a\"\n"),
            "experiments/sweep.toml:8:1: unknown key 'partiton' in [slurm], did you mean 'partition'?");
}

TEST(MatrixSlurmErrorTest, EmptyPartition) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\npartition = \"\"\n"),
            "experiments/sweep.toml:8:13: partition must not be empty (leave it out for Slurm's default), got \"\"");
}

TEST(MatrixSlurmErrorTest, NulInAnArgument) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\n"
                        "srun_args = [\"-v\", \"a\\u0000b\"]\n"),
            "experiments/sweep.toml:8:20: srun_args element 2 must not contain a NUL character (it cannot be "
            "passed to a program), got \"a\\u0000b\"");
}

TEST(MatrixSlurmErrorTest, TimeLimitOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\ntime_limit_min = 0\n"),
            "experiments/sweep.toml:8:18: time_limit_min must be between 1 and 525600, got 0");
}

TEST(MatrixSlurmErrorTest, StageDirMustBeAbsolute) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nstage_dir = \"tmp\"\n"),
            "experiments/sweep.toml:8:13: stage_dir must be an absolute path on the nodes' own disk (e.g. \"/tmp\"), "
            "got \"tmp\"");
}

TEST(MatrixSlurmErrorTest, UnknownAllocation) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nallocation = \"array\"\n"),
            "experiments/sweep.toml:8:14: allocation must be one of \"per-sweep\", \"per-run\", got \"array\"");
}

TEST(MatrixSlurmErrorTest, UnknownLaunch) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nlaunch = \"ssh\"\n"),
            "experiments/sweep.toml:8:10: launch must be one of \"srun\", \"mpirun\", got \"ssh\"");
}

TEST(MatrixSlurmTest, LaunchByMpirun) {
  Experiment experiment =
      Parse("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nlaunch = \"mpirun\"\n");
  EXPECT_TRUE(experiment.execution.slurm.launch_mpirun);
}

TEST(MatrixSlurmErrorTest, SrunArgumentsWithMpirun) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nlaunch = \"mpirun\"\n"
                        "srun_args = [\"-v\"]\n"),
            "experiments/sweep.toml:9:13: srun_args are not used with launch = \"mpirun\" (mpirun starts its own "
            "srun), got 1 of them");
}

TEST(MatrixSlurmErrorTest, ArgumentsMustBeStrings) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"slurm\"\n[slurm]\nsalloc_args = \"-N2\"\n"),
            "experiments/sweep.toml:8:15: salloc_args must be an array of strings, got string \"-N2\"");
}

// Execution options and the source.

TEST(MatrixExecutionTest, DefaultsWhenAbsent) {
  Experiment experiment = Parse("[matrix]\nworkers = [1]\n");
  ExecutionOptions defaults;
  EXPECT_EQ(experiment.execution.provider, Provider::kLocal);
  EXPECT_EQ(experiment.execution.inventory, "");
  EXPECT_EQ(experiment.execution.timeout_s, defaults.timeout_s);
  EXPECT_EQ(experiment.execution.attempts, defaults.attempts);
  EXPECT_EQ(experiment.execution.dataset_dir, "");
  EXPECT_EQ(experiment.execution.runs_per_job, 1);
  EXPECT_EQ(experiment.execution.system, "");
}

TEST(MatrixExecutionTest, SystemNamesWhereTheRunsAreMeasured) {
  EXPECT_EQ(Parse("[matrix]\nworkers = [1]\n[execution]\nsystem = \"ec2 c5.xlarge/eu-west-1\"\n").execution.system,
            "ec2 c5.xlarge/eu-west-1");
}

TEST(MatrixExecutionErrorTest, ASystemNameMustBePrintable) {
  for (const char* system : {"", " x", "a\\u0007b"}) {
    const std::string error =
        ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nsystem = \"" + std::string(system) + "\"\n");
    EXPECT_EQ(error.rfind("experiments/sweep.toml:6:10: system must be 1 to 128 printable characters, not starting "
                          "or ending with a space (e.g. \"ec2-c5.xlarge-eu\"), got \"",
                          0),
              0u)
        << error;
  }
}

TEST(MatrixExecutionTest, PathsAreRelativeToTheMatrixFile) {
  Experiment experiment = Parse(
      "[matrix]\n"
      "workers = [1]\n"
      "[execution]\n"
      "provider = \"ssh\"\n"
      "inventory = \"../hosts/ec2.toml\"\n"
      "dataset_dir = \"/data/mnist\"\n"
      "timeout_s = 60\n"
      "attempts = 3\n"
      "runs_per_job = 6\n");
  EXPECT_EQ(experiment.execution.runs_per_job, 6);
  EXPECT_EQ(experiment.execution.provider, Provider::kSsh);
  EXPECT_EQ(experiment.execution.inventory, "hosts/ec2.toml");
  EXPECT_EQ(experiment.execution.dataset_dir, "/data/mnist");
  EXPECT_EQ(experiment.execution.timeout_s, 60);
  EXPECT_EQ(experiment.execution.attempts, 3);
}

TEST(MatrixExecutionTest, ClusterInventoryIsOptional) {
  Experiment experiment =
      Parse("[matrix]\nworkers = [1]\n[execution]\nprovider = \"cluster\"\n");
  EXPECT_EQ(experiment.execution.provider, Provider::kCluster);
  EXPECT_EQ(experiment.execution.inventory, "");
}

TEST(MatrixExecutionTest, KeepsNameDescriptionAndSource) {
  std::string text =
      "[experiment]\nname = \"my-sweep_2.0\"\ndescription = \"what it is\"\n"
      "[matrix]\nworkers = [1]\n";
  Experiment experiment = ParseExperiment(text, kPath);
  EXPECT_EQ(experiment.name, "my-sweep_2.0");
  EXPECT_EQ(experiment.description, "what it is");
  EXPECT_EQ(experiment.source_path, kPath);
  EXPECT_EQ(experiment.source_text, text);
  EXPECT_EQ(experiment.source_sha256, Sha256Hex(text));
}

// The shipped experiment files.

std::string Shipped(const std::string& name) {
  return std::string(DMLBENCH_SOURCE_DIR) + "/experiments/" + name;
}

TEST(ShippedExperimentTest, QuickstartIsEveryArchitectureAtOneTwoFourWorkers) {
  Experiment experiment = LoadExperiment(Shipped("quickstart.toml"));
  EXPECT_EQ(experiment.name, "quickstart");
  EXPECT_EQ(experiment.execution.provider, Provider::kLocal);
  std::set<std::string> points;
  for (const PlannedRun& run : experiment.runs) {
    points.insert(std::string(Text(run.params.architecture)) + std::to_string(run.params.workers));
    EXPECT_EQ(run.params.batch_size, 100);
    EXPECT_EQ(run.params.max_iterations_per_epoch, 100);
    EXPECT_EQ(run.params.dataset, "fashion-mnist");
    EXPECT_EQ(run.params.servers, run.params.architecture == Architecture::kPs ? 1 : 0);
    EXPECT_EQ(run.split, run.params.workers == 1 ? "calibration" : "validation");
  }
  EXPECT_EQ(experiment.runs.size(), 12u);
  EXPECT_EQ(points, (std::set<std::string>{"ring1", "ring2", "ring4", "mpi1", "mpi2", "mpi4",
                                           "ps1", "ps2", "ps4", "p2p1", "p2p2", "p2p4"}));
}

TEST(ShippedExperimentTest, PaperReproductionIsTheStudy) {
  Experiment experiment = LoadExperiment(Shipped("paper-reproduction.toml"));
  EXPECT_EQ(experiment.execution.provider, Provider::kCluster);
  EXPECT_TRUE(experiment.execution.shuffled);
  // Per network: ps with 1, 2, 4 servers, p2p, ring, mpi, each 1..7 workers;
  // 2 networks, 6 repetitions.
  EXPECT_EQ(experiment.runs.size(), 6u * 7 * 2 * 6);
  std::set<std::string> keys;
  int calibration = 0;
  for (const PlannedRun& run : experiment.runs) {
    keys.insert(RunKey(run.params, "trainer", "data"));
    const bool calibrates = run.params.workers == 1 || run.params.workers == 2 || run.params.workers == 4;
    EXPECT_EQ(run.split, calibrates ? "calibration" : "validation");
    calibration += calibrates;
    EXPECT_EQ(run.params.batch_size, 100);
    EXPECT_EQ(run.params.epochs, 2);
    EXPECT_EQ(run.params.network.latency_s, 0);  // this kernel has no netem
    EXPECT_EQ(run.params.max_iterations_per_epoch, run.params.network.name == "1gbit" ? 40 : 10);
  }
  EXPECT_EQ(keys.size(), experiment.runs.size());
  EXPECT_EQ(calibration, 6 * 3 * 2 * 6);
}

TEST(ShippedExperimentTest, SettlingIsEveryArchitectureAtBatch50To200SharingTheStudysBatch100) {
  const Experiment settling = LoadExperiment(Shipped("settling.toml"));
  const Experiment study = LoadExperiment(Shipped("paper-reproduction.toml"));
  std::set<std::string> study_keys;
  for (const PlannedRun& run : study.runs) study_keys.insert(RunKey(run.params, "trainer", "data"));
  std::set<int> batches;
  for (const PlannedRun& run : settling.runs) {
    EXPECT_EQ(run.params.network.name, "1gbit");
    EXPECT_EQ(run.params.workers, 4);
    // An epoch of 16,000 samples at every batch size.
    EXPECT_EQ(run.params.max_iterations_per_epoch * run.params.batch_size * run.params.workers, 16000);
    batches.insert(run.params.batch_size);
    EXPECT_EQ(study_keys.count(RunKey(run.params, "trainer", "data")) == 1, run.params.batch_size == 100);
  }
  EXPECT_EQ(batches, (std::set<int>{50, 100, 200}));
  EXPECT_EQ(settling.runs.size(), 6u * 3 * 6);
}

TEST(ShippedExperimentTest, OverlapPairsEveryArchitectureOffAndOn) {
  const Experiment overlap = LoadExperiment(Shipped("overlap.toml"));
  int on = 0;
  for (const PlannedRun& run : overlap.runs) {
    on += run.params.overlap;
    EXPECT_EQ(run.split, run.params.overlap ? "validation" : "calibration");
    EXPECT_EQ(run.params.bucket_bytes, 16384);
  }
  EXPECT_EQ(on, 6 * 6);
  EXPECT_EQ(overlap.runs.size(), 2u * 6 * 6);
}

// Overlap's calibration point is 2 workers, a configuration the overlap
// experiment never validates (it holds out 4), and shares no run with it.
TEST(ShippedExperimentTest, OverlapCalibrationIsEveryArchitectureAtTwoWorkersNoneOfOverlapsRuns) {
  const Experiment calibration = LoadExperiment(Shipped("overlap-calibration.toml"));
  const Experiment overlap = LoadExperiment(Shipped("overlap.toml"));
  std::set<std::string> overlap_keys;
  for (const PlannedRun& run : overlap.runs) overlap_keys.insert(RunKey(run.params, "trainer", "data"));
  std::set<std::string> schemes;
  for (const PlannedRun& run : calibration.runs) {
    EXPECT_EQ(run.split, "calibration");
    EXPECT_TRUE(run.params.overlap);
    EXPECT_EQ(run.params.workers, 2);
    EXPECT_EQ(run.params.bucket_bytes, 16384);
    EXPECT_EQ(run.params.network.name, "1gbit");
    EXPECT_EQ(run.params.max_iterations_per_epoch, 40);
    EXPECT_EQ(overlap_keys.count(RunKey(run.params, "trainer", "data")), 0u);
    schemes.insert(std::string(Text(run.params.architecture)) + std::to_string(run.params.servers));
  }
  EXPECT_EQ(schemes, (std::set<std::string>{"ring0", "mpi0", "p2p0", "ps1", "ps2", "ps4"}));
  EXPECT_EQ(calibration.runs.size(), 6u * 6);
}

// The pulls in turn that calibrate their schedule are other runs than the
// held-out ones of the same configurations: the run key does not hold the
// hosts' CPU share (the calibration runs on 0.3-core hosts, the held-out
// on 0.15), so with the same seeds a database holding both would take them
// for the held-out runs, already complete, and never run them.
TEST(ShippedExperimentTest, PullsInTurnCalibrationSharesNoRunWithTheHeldOutExperiment) {
  const Experiment calibration = LoadExperiment(Shipped("pulls-in-turn-calibration.toml"));
  const Experiment held_out = LoadExperiment(Shipped("pulls-in-turn.toml"));
  std::set<std::string> held_out_keys;
  for (const PlannedRun& run : held_out.runs) {
    EXPECT_EQ(run.split, "validation");
    held_out_keys.insert(RunKey(run.params, "trainer", "data"));
  }
  std::set<int> workers;
  for (const PlannedRun& run : calibration.runs) {
    EXPECT_EQ(run.split, "calibration");
    EXPECT_EQ(run.params.architecture, Architecture::kPs);
    EXPECT_EQ(run.params.servers, 1);
    EXPECT_TRUE(run.params.pulls_in_turn);
    EXPECT_EQ(held_out_keys.count(RunKey(run.params, "trainer", "data")), 0u);
    workers.insert(run.params.workers);
  }
  EXPECT_EQ(workers, (std::set<int>{2, 4}));
  EXPECT_EQ(calibration.runs.size(), 2u * 2 * 5);
}

TEST(ShippedExperimentTest, LoadEqualsParseOfTheSameText) {
  Experiment loaded = LoadExperiment(Shipped("quickstart.toml"));
  Experiment parsed = ParseExperiment(loaded.source_text, loaded.source_path);
  ASSERT_EQ(loaded.runs.size(), parsed.runs.size());
  for (std::size_t i = 0; i < loaded.runs.size(); ++i) {
    EXPECT_EQ(CanonicalJson(loaded.runs[i].params), CanonicalJson(parsed.runs[i].params));
  }
  EXPECT_EQ(loaded.source_sha256, Sha256FileHex(Shipped("quickstart.toml")));
}

// Run identity.

TEST(RunKeyTest, CanonicalJsonIsSortedAndCompact) {
  EXPECT_EQ(CanonicalJson(RunParams{}),
            "{\"architecture\":\"ring\",\"batch_size\":100,\"bucket_bytes\":1048576,"
            "\"dataset\":\"fashion-mnist\",\"epochs\":1,\"hidden\":[128,32],"
            "\"learning_rate\":0.05,\"max_iterations_per_epoch\":0,"
            "\"network\":{\"bandwidth_bits_per_s\":0.0,\"latency_s\":0.0},\"overlap\":false,"
            "\"seed\":1,\"servers\":0,\"workers\":1}");
}

TEST(RunKeyTest, KeyIsStableAcrossVersions) {
  // A changed value here would orphan every run already in users' databases.
  RunParams params;
  EXPECT_EQ(RunKey(params, std::string(64, 'a'), std::string(64, 'b')),
            Sha256Hex(CanonicalJson(params) + std::string(64, 'a') + std::string(64, 'b')));
  EXPECT_EQ(RunKey(params, std::string(64, 'a'), std::string(64, 'b')),
            "64812e247692e15e6a7d02f5cea948f0d8af5faf7d17de9c749eeb53f0dfb8e6");
}

TEST(RunKeyTest, EveryIdentityFieldChangesTheKey) {
  const RunParams base;
  std::vector<RunParams> changed(13, base);
  changed[0].architecture = Architecture::kMpi;
  changed[1].workers = 2;
  changed[2].servers = 1;
  changed[3].batch_size = 50;
  changed[4].epochs = 2;
  changed[5].hidden = {128, 31};
  changed[6].learning_rate = std::nextafter(0.05, 1.0);
  changed[7].overlap = true;
  changed[8].bucket_bytes = 1024;
  changed[9].max_iterations_per_epoch = 100;
  changed[10].dataset = "synthetic";
  changed[11].seed = 2;
  changed[12].network.bandwidth_bits_per_s = 1e9;
  std::set<std::string> keys = {RunKey(base, "t", "d"), RunKey(base, "t2", "d"),
                                RunKey(base, "t", "d2")};
  for (const RunParams& params : changed) keys.insert(RunKey(params, "t", "d"));
  RunParams latency = base;
  latency.network.latency_s = 1e-4;
  keys.insert(RunKey(latency, "t", "d"));
  EXPECT_EQ(keys.size(), 3u + changed.size() + 1u);
}

TEST(RunKeyTest, RepetitionAndProfileNameAreNotIdentity) {
  RunParams base;
  RunParams renamed = base;
  renamed.network.name = "renamed";
  renamed.repetition = 3;
  EXPECT_EQ(RunKey(base, "t", "d"), RunKey(renamed, "t", "d"));
}

TEST(RunKeyTest, DescribeNamesThePoint) {
  RunParams params;
  params.architecture = Architecture::kPs;
  params.servers = 2;
  params.workers = 4;
  params.overlap = true;
  params.network.name = "1gbit";
  params.repetition = 1;
  EXPECT_EQ(Describe(params), "ps k=2 w=4 b=100 overlap net=1gbit rep=1");
}

// Error paths of matrix.cc follow: each names file:line:column, what was
// expected and what was found.

TEST(MatrixErrorTest, UnreadableFile) {
  try {
    LoadExperiment("no/such/dir/sweep.toml");
    FAIL() << "no error";
  } catch (const MatrixError& error) {
    EXPECT_EQ(std::string(error.what()),
              "no/such/dir/sweep.toml: cannot read file: No such file or directory");
  }
}

TEST(MatrixErrorTest, DirectoryIsNotAnExperimentFile) {
  std::string directory = std::string(DMLBENCH_SOURCE_DIR) + "/experiments";
  try {
    LoadExperiment(directory);
    FAIL() << "no error";
  } catch (const MatrixError& error) {
    EXPECT_EQ(std::string(error.what()), directory + ": cannot read file: Is a directory");
  }
}

TEST(MatrixErrorTest, TomlSyntaxKeepsTomlDescriptionAndPosition) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\nworkers = 1\n"),
            "experiments/sweep.toml:2:10: Error while parsing string: unescaped control "
            "characters other than TAB (U+0009) are explicitly prohibited");
}

TEST(MatrixErrorTest, TomlRedefinedKey) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\"\nname = \"u\"\n"),
            "experiments/sweep.toml:3:8: Error while parsing key-value pair: cannot redefine "
            "existing string 'name'");
}

TEST(MatrixErrorTest, UnknownTopLevelKeySuggestsTheClosest) {
  EXPECT_EQ(ErrorOfBody("[matrx]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:2: unknown key 'matrx' in the top level, did you mean "
            "'matrix'?");
}

TEST(MatrixErrorTest, UnknownParameterSuggestsTheClosest) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworker = [1]\n"),
            "experiments/sweep.toml:4:1: unknown key 'worker' in [matrix], did you mean "
            "'workers'?");
}

TEST(MatrixErrorTest, UnknownParameterPrefixSuggestsTheFullName) {
  EXPECT_EQ(ErrorOfBody("[defaults]\nbatch = 5\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:1: unknown key 'batch' in [defaults], did you mean "
            "'batch_size'?");
}

TEST(MatrixErrorTest, UnknownKeyWithNothingCloseListsTheKnownKeys) {
  EXPECT_EQ(ErrorOfBody("[matrix]\ncolour = [1]\n"),
            "experiments/sweep.toml:4:1: unknown key 'colour' in [matrix], expected one of: "
            "network, architecture, servers, workers, batch_size, learning_rate, hidden, "
            "epochs, max_iterations_per_epoch, warmup_iterations, overlap, bucket_bytes, partition_bytes, "
            "pulls_in_turn, dataset, evaluate");
}

TEST(MatrixErrorTest, MissingExperimentTable) {
  EXPECT_EQ(ErrorOf("[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:1:1: expected an [experiment] table with a name, got none");
}

TEST(MatrixErrorTest, MissingName) {
  EXPECT_EQ(ErrorOf("[experiment]\ndescription = \"d\"\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:1:1: [experiment] must have a name, got none");
}

TEST(MatrixErrorTest, NameOfWrongType) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = 5\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:2:8: name must be a string, got integer 5");
}

TEST(MatrixErrorTest, NameWithSpaces) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"my sweep\"\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:2:8: name must be 1 to 64 letters, digits, '.', '_' or "
            "'-', got string \"my sweep\"");
}

TEST(MatrixErrorTest, TagsOfWrongType) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\"\ntags = \"nightly\"\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:8: tags must be an array of strings, got string \"nightly\"");
}

TEST(MatrixErrorTest, TagWithSpaces) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\"\ntags = [\"ok\", \"two words\"]\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:15: a tag must be 1 to 64 letters, digits, '.', '_' or '-', got string "
            "\"two words\"");
}

TEST(MatrixErrorTest, TagTwice) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\"\ntags = [\"a\", \"a\"]\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:14: tags must be distinct, got \"a\" twice");
}

TEST(MatrixErrorTest, DescriptionOfWrongType) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = \"t\"\ndescription = [\"a\"]\n"
                    "[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:15: description must be a string, got array [ 'a' ]");
}

TEST(MatrixErrorTest, SectionThatIsNotATable) {
  EXPECT_EQ(ErrorOf("matrix = 3\n" + std::string(kHeader)),
            "experiments/sweep.toml:1:10: matrix must be a table, got integer 3");
}

TEST(MatrixErrorTest, NoMatrixAtAll) {
  EXPECT_EQ(ErrorOfBody("[defaults]\nworkers = 2\n"),
            "experiments/sweep.toml:1:1: expected a [matrix] table or a [[zip]] group, got "
            "neither");
}

TEST(MatrixErrorTest, EmptyMatrix) {
  EXPECT_EQ(ErrorOfBody("[matrix]\n"),
            "experiments/sweep.toml:3:1: [matrix] must list at least one parameter, got an "
            "empty table");
}

TEST(MatrixErrorTest, MatrixValueThatIsNotAList) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = 4\n"),
            "experiments/sweep.toml:4:11: workers in [matrix] must be an array of values, got "
            "integer 4");
}

TEST(MatrixErrorTest, EmptyList) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = []\n"),
            "experiments/sweep.toml:4:11: workers in [matrix] must list at least one value, "
            "got an empty array");
}

TEST(MatrixErrorTest, DuplicatedValue) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1, 2, 1]\n"),
            "experiments/sweep.toml:4:18: workers values must be distinct, got integer 1 again "
            "(first at line 4)");
}

TEST(MatrixErrorTest, WrongType) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [\"4\"]\n"),
            "experiments/sweep.toml:4:12: workers must be an integer, got string \"4\"");
}

TEST(MatrixErrorTest, FloatWhereAnIntegerIsExpected) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nbatch_size = [1.5]\n"),
            "experiments/sweep.toml:4:15: batch_size must be an integer, got float 1.5");
}

TEST(MatrixErrorTest, DateWhereAnIntegerIsExpected) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1979-05-27]\n"),
            "experiments/sweep.toml:4:12: workers must be an integer, got date 1979-05-27");
}

TEST(MatrixErrorTest, LongValuesAreShortenedInMessages) {
  EXPECT_EQ(ErrorOf("[experiment]\nname = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]\n"),
            "experiments/sweep.toml:2:8: name must be a string, got array [ 1, 2, 3, 4, 5, 6, "
            "7, 8, 9, 10, 11, ...");
}

TEST(MatrixErrorTest, LongStringsAreCutBetweenCharacters) {
  // The quote and 35 ASCII letters, then 2-byte characters across the cut at 37.
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [\"" + std::string(35, 'a') +
                        "\\u00e9\\u00e9\\u00e9\"]\n"),
            "experiments/sweep.toml:4:12: workers must be an integer, got string \"" +
                std::string(35, 'a') + "...");
}

TEST(MatrixErrorTest, ControlCharactersStayVisible) {
  EXPECT_EQ(ErrorOfBody("[matrix]\narchitecture = [\"ring\\t\"]\n"),
            "experiments/sweep.toml:4:17: architecture must be one of \"ring\", \"mpi\", \"ps\", "
            "\"p2p\", got \"ring\\t\"");
}

TEST(MatrixErrorTest, WorkersBelowRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [0]\n"),
            "experiments/sweep.toml:4:12: workers must be between 1 and 64, got 0");
}

TEST(MatrixErrorTest, WorkersAboveRange) {
  EXPECT_EQ(ErrorOfBody("[defaults]\nworkers = 65\n[matrix]\nepochs = [1]\n"),
            "experiments/sweep.toml:4:11: workers must be between 1 and 64, got 65");
}

TEST(MatrixErrorTest, ServersOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nservers = [0]\n"),
            "experiments/sweep.toml:4:12: servers must be between 1 and 64, got 0");
}

TEST(MatrixErrorTest, BatchSizeOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nbatch_size = [-100]\n"),
            "experiments/sweep.toml:4:15: batch_size must be between 1 and 65536, got -100");
}

TEST(MatrixErrorTest, EpochsOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nepochs = [0]\n"),
            "experiments/sweep.toml:4:11: epochs must be between 1 and 10000, got 0");
}

TEST(MatrixErrorTest, LearningRateNotPositive) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nlearning_rate = [0.0]\n"),
            "experiments/sweep.toml:4:18: learning_rate must be a finite number greater than "
            "0, got 0");
}

TEST(MatrixErrorTest, LearningRateNotFinite) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nlearning_rate = [nan]\n"),
            "experiments/sweep.toml:4:18: learning_rate must be a finite number greater than "
            "0, got nan");
}

TEST(MatrixErrorTest, LearningRateOfWrongType) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nlearning_rate = [true]\n"),
            "experiments/sweep.toml:4:18: learning_rate must be a number, got boolean true");
}

TEST(MatrixErrorTest, BucketBytesNotPositive) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nbucket_bytes = [0]\n"),
            "experiments/sweep.toml:4:17: bucket_bytes must be at least 1, got 0");
}

TEST(MatrixErrorTest, PartitionBytesNegative) {
  EXPECT_EQ(ErrorOfBody("[matrix]\npartition_bytes = [0, -4]\n"),
            "experiments/sweep.toml:4:23: partition_bytes must be at least 0, got -4");
}

TEST(MatrixExpansionTest, PartitionBytesIsAnAxisAndReachesTheTrainer) {
  Experiment experiment = Parse("[matrix]\narchitecture = [\"ps\"]\npartition_bytes = [0, 65536]\n");
  ASSERT_EQ(experiment.runs.size(), 2u);
  EXPECT_EQ(experiment.runs[0].params.partition_bytes, 0);
  EXPECT_EQ(experiment.runs[1].params.partition_bytes, 65536);
  const std::vector<std::string> whole = TrainerArgs(experiment.runs[0].params);
  EXPECT_EQ(std::find(whole.begin(), whole.end(), "--partition-bytes"), whole.end());
  const std::vector<std::string> cut = TrainerArgs(experiment.runs[1].params);
  const auto option = std::find(cut.begin(), cut.end(), "--partition-bytes");
  ASSERT_NE(option, cut.end());
  EXPECT_EQ(*std::next(option), "65536");
}

// pulls_in_turn belongs to ps with one server, whole, without overlap; like
// servers, a point it does not apply to gets false, so the product of two
// architectures and both values is three points, and the trainer hears of
// it only where it is set.
TEST(MatrixExpansionTest, PullsInTurnIsAnAxisOfTheSingleServerAlone) {
  Experiment experiment = Parse("[matrix]\narchitecture = [\"ring\", \"ps\"]\nservers = [1, 2]\n"
                                "pulls_in_turn = [false, true]\n");
  EXPECT_EQ(Described(experiment), (std::vector<std::string>{"ring w=1 b=100 rep=0", "ps k=1 w=1 b=100 rep=0",
                                                 "ps k=1 w=1 b=100 pulls-in-turn rep=0", "ps k=2 w=1 b=100 rep=0"}));
  const std::vector<std::string> at_once = TrainerArgs(experiment.runs[1].params);
  EXPECT_EQ(std::find(at_once.begin(), at_once.end(), "--pulls-in-turn"), at_once.end());
  const std::vector<std::string> in_turn = TrainerArgs(experiment.runs[2].params);
  EXPECT_NE(std::find(in_turn.begin(), in_turn.end(), "--pulls-in-turn"), in_turn.end());
  // With overlap or parts the single server's pulls pipeline already.
  EXPECT_EQ(Parse("[defaults]\narchitecture = \"ps\"\n[matrix]\noverlap = [false, true]\n"
                  "pulls_in_turn = [false, true]\n")
                .runs.size(),
            3u);
}

// warmup_iterations caps epoch 1 of runs of 2 or more epochs; in a one-epoch
// run it does not apply (the sole epoch is measured) and resolves to 0, so
// that epochs = [1, 3] makes two points. The trainer hears of it only where
// it is set, and evaluate = false as --no-evaluate.
TEST(MatrixExpansionTest, WarmupIterationsApplyToRunsOfSeveralEpochsAndReachTheTrainer) {
  Experiment experiment = Parse("[defaults]\nwarmup_iterations = 20\nevaluate = false\n"
                                "[matrix]\nepochs = [1, 3]\n");
  ASSERT_EQ(experiment.runs.size(), 2u);
  EXPECT_EQ(experiment.runs[0].params.warmup_iterations, 0);
  EXPECT_EQ(experiment.runs[1].params.warmup_iterations, 20);
  const std::vector<std::string> one = TrainerArgs(experiment.runs[0].params);
  EXPECT_EQ(std::find(one.begin(), one.end(), "--warmup-iterations"), one.end());
  const std::vector<std::string> three = TrainerArgs(experiment.runs[1].params);
  const auto option = std::find(three.begin(), three.end(), "--warmup-iterations");
  ASSERT_NE(option, three.end());
  EXPECT_EQ(*std::next(option), "20");
  EXPECT_NE(std::find(three.begin(), three.end(), "--no-evaluate"), three.end());
  const std::vector<std::string> evaluated = TrainerArgs(Parse("[matrix]\nepochs = [2]\n").runs[0].params);
  EXPECT_EQ(std::find(evaluated.begin(), evaluated.end(), "--no-evaluate"), evaluated.end());
  EXPECT_EQ(std::find(evaluated.begin(), evaluated.end(), "--warmup-iterations"), evaluated.end());
}

// Without the keys a matrix plans the runs it always did: same keys.
TEST(MatrixExpansionTest, WithoutWarmupOrEvaluateTheRunKeysAreUnchanged) {
  const Experiment plain = Parse("[matrix]\nepochs = [2]\nworkers = [1, 2]\n");
  const Experiment explicit_defaults =
      Parse("[defaults]\nwarmup_iterations = 0\nevaluate = true\n[matrix]\nepochs = [2]\nworkers = [1, 2]\n");
  ASSERT_EQ(plain.runs.size(), 2u);
  for (std::size_t i = 0; i < plain.runs.size(); ++i) {
    EXPECT_EQ(RunKey(plain.runs[i].params, "trainer", "data"),
              RunKey(explicit_defaults.runs[i].params, "trainer", "data"));
    EXPECT_EQ(CanonicalJson(plain.runs[i].params).find("warmup"), std::string::npos);
  }
}

TEST(MatrixErrorTest, WarmupIterationsMustBeAWholeNumberOfIterations) {
  EXPECT_EQ(ErrorOfBody("[defaults]\nwarmup_iterations = -1\n[matrix]\nepochs = [2]\n"),
            "experiments/sweep.toml:4:21: warmup_iterations must be at least 0, got -1");
  EXPECT_EQ(ErrorOfBody("[defaults]\nwarmup_iterations = 2.5\n[matrix]\nepochs = [2]\n"),
            "experiments/sweep.toml:4:21: warmup_iterations must be an integer, got float 2.5");
  EXPECT_EQ(ErrorOfBody("[matrix]\nepochs = [2]\nevaluate = [\"no\"]\n"),
            "experiments/sweep.toml:5:13: evaluate must be a boolean, got string \"no\"");
}

TEST(MatrixErrorTest, IncludeGivesWarmupIterationsToAOneEpochRun) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\nworkers = 2\nwarmup_iterations = 10\n"),
            "experiments/sweep.toml:7:21: warmup_iterations applies only to runs of 2 or more epochs (a sole "
            "epoch is measured, not warm-up), got epochs = 1");
}

// Excludes and the split rule read pulls_in_turn as any other parameter,
// after it is resolved: the ring point has false.
TEST(MatrixExpansionTest, PullsInTurnInExcludesAndTheSplit) {
  const Experiment experiment = Parse(
      "[matrix]\narchitecture = [\"ring\", \"ps\"]\nworkers = [2, 4]\npulls_in_turn = [false, true]\n"
      "[[exclude]]\nworkers = 4\npulls_in_turn = true\n"
      "[split]\ncalibration = { pulls_in_turn = false }\n");
  std::vector<std::string> runs;
  for (const PlannedRun& run : experiment.runs) runs.push_back(Describe(run.params) + " " + run.split);
  EXPECT_EQ(runs, (std::vector<std::string>{"ring w=2 b=100 rep=0 calibration", "ring w=4 b=100 rep=0 calibration",
                                            "ps k=1 w=2 b=100 rep=0 calibration",
                                            "ps k=1 w=2 b=100 pulls-in-turn rep=0 validation",
                                            "ps k=1 w=4 b=100 rep=0 calibration"}));
}

TEST(MatrixErrorTest, IncludeGivesPullsInTurnWhereTheyDoNotApply) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\narchitecture = \"ps\"\nservers = 2\n"
                        "pulls_in_turn = true\n"),
            "experiments/sweep.toml:8:17: pulls_in_turn applies only to architecture \"ps\" with 1 server, "
            "partition_bytes = 0 and overlap = false, got ps k=2 w=1 b=100 partition=0");
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\npulls_in_turn = 1\n"),
            "experiments/sweep.toml:6:17: pulls_in_turn must be a boolean, got integer 1");
}

TEST(MatrixErrorTest, MaxIterationsNegative) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nmax_iterations_per_epoch = [-1]\n"),
            "experiments/sweep.toml:4:29: max_iterations_per_epoch must be at least 0, got -1");
}

TEST(MatrixErrorTest, HiddenNotAnArray) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nhidden = [128, 32]\n"),
            "experiments/sweep.toml:4:11: hidden must be an array of layer sizes, got integer "
            "128");
}

TEST(MatrixErrorTest, HiddenWithoutLayers) {
  EXPECT_EQ(ErrorOfBody("[defaults]\nhidden = []\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:10: hidden must have between 1 and 16 layers, got 0");
}

TEST(MatrixErrorTest, HiddenWithTooManyLayers) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nhidden = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
                        "16, 17]]\n"),
            "experiments/sweep.toml:4:11: hidden must have between 1 and 16 layers, got 17");
}

TEST(MatrixErrorTest, HiddenLayerOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nhidden = [[128, 0]]\n"),
            "experiments/sweep.toml:4:17: hidden layer sizes must be between 1 and 65536, got 0");
}

TEST(MatrixErrorTest, OverlapNotABoolean) {
  EXPECT_EQ(ErrorOfBody("[matrix]\noverlap = [\"yes\"]\n"),
            "experiments/sweep.toml:4:12: overlap must be a boolean, got string \"yes\"");
}

TEST(MatrixErrorTest, UnknownArchitecture) {
  EXPECT_EQ(ErrorOfBody("[matrix]\narchitecture = [\"ring\", \"allreduce\"]\n"),
            "experiments/sweep.toml:4:25: architecture must be one of \"ring\", \"mpi\", "
            "\"ps\", \"p2p\", got \"allreduce\"");
}

TEST(MatrixErrorTest, UnknownDataset) {
  EXPECT_EQ(ErrorOfBody("[defaults]\ndataset = \"mnist\"\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:11: dataset must be one of \"fashion-mnist\", "
            "\"synthetic\", got \"mnist\"");
}

TEST(MatrixErrorTest, ZipOfUnequalLengths) {
  EXPECT_EQ(ErrorOfBody("[[zip]]\nbatch_size = [50, 200]\nlearning_rate = [0.1, 0.2, 0.3]\n"),
            "experiments/sweep.toml:5:17: learning_rate must have 2 values like batch_size in "
            "its [[zip]], got 3");
}

TEST(MatrixErrorTest, ZipAndMatrixNameTheSameKey) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nbatch_size = [1]\n[[zip]]\nbatch_size = [50, 200]\n"
                        "learning_rate = [0.1, 0.2]\n"),
            "experiments/sweep.toml:6:14: batch_size is already varied by [matrix], expected "
            "each parameter in one place only, got it again in [[zip]]");
}

TEST(MatrixErrorTest, TwoZipsNameTheSameKey) {
  EXPECT_EQ(ErrorOfBody("[[zip]]\nworkers = [1, 2]\nepochs = [1, 2]\n"
                        "[[zip]]\nworkers = [3, 4]\nbatch_size = [5, 6]\n"),
            "experiments/sweep.toml:7:11: workers is already varied by [[zip]] at line 3, "
            "expected each parameter in one place only, got it again in [[zip]]");
}

TEST(MatrixErrorTest, EmptyZip) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[zip]]\n"),
            "experiments/sweep.toml:5:1: [[zip]] must list at least one parameter, got an "
            "empty table");
}

TEST(MatrixErrorTest, ZipThatIsNotAnArrayOfTables) {
  EXPECT_EQ(ErrorOfBody("[zip]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:1: zip must be an array of tables ([[zip]]), got table");
}

TEST(MatrixErrorTest, ZipEntryThatIsNotATable) {
  EXPECT_EQ(ErrorOf("zip = [1]\n" + std::string(kHeader)),
            "experiments/sweep.toml:1:8: zip entries must be tables, got integer 1");
}

TEST(MatrixErrorTest, IncludeOfUnknownParameter) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\narchitectur = \"ps\"\n"),
            "experiments/sweep.toml:6:1: unknown key 'architectur' in [[include]], did you "
            "mean 'architecture'?");
}

TEST(MatrixErrorTest, EmptyInclude) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\n"),
            "experiments/sweep.toml:5:1: [[include]] must set at least one parameter, got an "
            "empty table");
}

TEST(MatrixErrorTest, IncludeDuplicatesAPoint) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1, 2]\n[[include]]\nworkers = 2\n"),
            "experiments/sweep.toml:5:1: [[include]] must add a new run, got one already in "
            "the matrix: ring w=2 b=100 rep=0");
}

TEST(MatrixErrorTest, IncludeGivesServersToNonPs) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\narchitecture = \"ring\"\n"
                        "servers = 2\n"),
            "experiments/sweep.toml:7:11: servers applies only to architecture \"ps\", got "
            "architecture \"ring\"");
}

TEST(MatrixErrorTest, ExcludeOfUnknownParameter) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[exclude]]\nworkres = 1\n"),
            "experiments/sweep.toml:6:1: unknown key 'workres' in [[exclude]], did you mean "
            "'workers'?");
}

TEST(MatrixErrorTest, EmptyExclude) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[exclude]]\n"),
            "experiments/sweep.toml:5:1: [[exclude]] must name at least one parameter, got an "
            "empty table");
}

TEST(MatrixErrorTest, ExcludeRemovesEverything) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1, 2]\n[[exclude]]\narchitecture = \"ring\"\n"),
            "experiments/sweep.toml:5:1: expected at least one run, got none: [[exclude]] "
            "removes every point of the matrix");
}

TEST(MatrixErrorTest, ExcludeThatMatchesNothing) {
  // Almost always a typo: the sweep would run what the file says it excludes.
  EXPECT_EQ(ErrorOfBody("[matrix]\narchitecture = [\"ring\", \"p2p\"]\nworkers = [1, 2]\n"
                        "[[exclude]]\narchitecture = \"p2p\"\nworkers = 1\n"
                        "[[exclude]]\narchitecture = \"p2p\"\nworkers = 4\n"),
            "experiments/sweep.toml:9:1: [[exclude]] matches no point of the matrix (architecture = \"p2p\", "
            "workers = 4); remove it or correct its values");
  // [[include]] points are never excluded.
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[include]]\narchitecture = \"ps\"\n"
                        "[[exclude]]\narchitecture = \"ps\"\n"),
            "experiments/sweep.toml:7:1: [[exclude]] matches no point of the matrix (architecture = \"ps\"); "
            "remove it or correct its values");
}

TEST(MatrixErrorTest, SeedOfTheLastRepetitionMustFitIn63Bits) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 3\nseed = 9223372036854775806\n"),
            "experiments/sweep.toml:7:8: seed must be at most 9223372036854775805 with 3 repetitions (the last "
            "repetition runs with seed + 2, and seeds are stored as 64-bit signed integers), got "
            "9223372036854775806");
  const Experiment largest =
      Parse("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 3\nseed = 9223372036854775805\n");
  ASSERT_EQ(largest.runs.size(), 3u);
  EXPECT_EQ(largest.runs[2].params.seed, 9223372036854775807u);
}

TEST(MatrixErrorTest, ExcludeValueIsChecked) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[[exclude]]\nworkers = 0\n"),
            "experiments/sweep.toml:6:11: workers must be between 1 and 64, got 0");
}

constexpr char kCluster[] = "[execution]\nprovider = \"cluster\"\n";

TEST(MatrixErrorTest, UnknownNetworkProfile) {
  EXPECT_EQ(ErrorOfBody(std::string(kCluster) +
                        "[networks.fast]\nbandwidth_mbit_per_s = 1000\n"
                        "[networks.slow]\nbandwidth_mbit_per_s = 100\n"
                        "[matrix]\nnetwork = [\"fats\"]\n"),
            "experiments/sweep.toml:10:12: network must name a [networks] profile (fast, slow), "
            "got \"fats\"");
}

TEST(MatrixErrorTest, NetworkWithoutProfiles) {
  EXPECT_EQ(ErrorOfBody(std::string(kCluster) + "[defaults]\nnetwork = \"fast\"\n"
                        "[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:6:11: network must name a [networks] profile (none "
            "defined), got \"fast\"");
}

TEST(MatrixErrorTest, NetworkWithTheLocalProvider) {
  EXPECT_EQ(ErrorOfBody("[networks.fast]\nbandwidth_mbit_per_s = 1000\n"
                        "[matrix]\nnetwork = [\"fast\"]\n"),
            "experiments/sweep.toml:6:12: network profiles need provider \"cluster\" (only the "
            "emulated cluster shapes links), got provider \"local\"");
}

TEST(MatrixErrorTest, ProfileWithoutBandwidth) {
  EXPECT_EQ(ErrorOfBody("[networks.fast]\nlatency_ms = 1\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:1: [networks.fast] must have bandwidth_mbit_per_s, got "
            "none");
}

TEST(MatrixErrorTest, ProfileBandwidthNotPositive) {
  EXPECT_EQ(ErrorOfBody("[networks.fast]\nbandwidth_mbit_per_s = 0\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:24: bandwidth_mbit_per_s must be a finite number greater "
            "than 0, got 0");
}

TEST(MatrixErrorTest, ProfileLatencyNegative) {
  EXPECT_EQ(ErrorOfBody("[networks.fast]\nbandwidth_mbit_per_s = 1\nlatency_ms = -0.5\n"
                        "[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:5:14: latency_ms must be a finite number of at least 0, "
            "got -0.5");
}

TEST(MatrixErrorTest, ProfileWithUnknownKey) {
  EXPECT_EQ(ErrorOfBody("[networks.fast]\nbandwidth = 1\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:1: unknown key 'bandwidth' in [networks.fast], did you "
            "mean 'bandwidth_mbit_per_s'?");
}

TEST(MatrixErrorTest, ProfileThatIsNotATable) {
  EXPECT_EQ(ErrorOfBody("[networks]\nfast = 1000\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:4:8: networks.fast must be a table, got integer 1000");
}

TEST(MatrixErrorTest, ProfileWithEmptyName) {
  EXPECT_EQ(ErrorOfBody("[networks.\"\"]\nbandwidth_mbit_per_s = 1\n[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:3:11: network profile names must be non-empty, got \"\"");
}

TEST(MatrixErrorTest, ProfilesWithTheSameShape) {
  EXPECT_EQ(ErrorOfBody("[networks.a]\nbandwidth_mbit_per_s = 1000\n"
                        "[networks.b]\nbandwidth_mbit_per_s = 1000.0\nlatency_ms = 0\n"
                        "[matrix]\nworkers = [1]\n"),
            "experiments/sweep.toml:5:1: [networks.b] must differ from [networks.a], got the "
            "same bandwidth and latency");
}

TEST(MatrixErrorTest, UnknownProvider) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"aws\"\n"),
            "experiments/sweep.toml:6:12: provider must be one of \"local\", \"ssh\", "
            "\"cluster\", \"slurm\", got \"aws\"");
}

TEST(MatrixErrorTest, SshWithoutInventory) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"ssh\"\n"),
            "experiments/sweep.toml:5:1: provider \"ssh\" needs an inventory file, got none");
}

TEST(MatrixErrorTest, InventoryWithTheLocalProvider) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\ninventory = \"hosts.toml\"\n"),
            "experiments/sweep.toml:6:13: inventory is used only by the ssh and cluster "
            "providers, got provider \"local\"");
}

TEST(MatrixErrorTest, EmptyInventory) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nprovider = \"ssh\"\n"
                        "inventory = \"\"\n"),
            "experiments/sweep.toml:7:13: inventory must be a file name, got \"\"");
}

TEST(MatrixErrorTest, EmptyDatasetDir) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\ndataset_dir = \"\"\n"),
            "experiments/sweep.toml:6:15: dataset_dir must be a directory name, got \"\"");
}

TEST(MatrixErrorTest, RepetitionsOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 0\n"),
            "experiments/sweep.toml:6:15: repetitions must be between 1 and 1000, got 0");
}

TEST(MatrixErrorTest, NegativeSeed) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nseed = -1\n"),
            "experiments/sweep.toml:6:8: seed must be at least 0, got -1");
}

TEST(MatrixErrorTest, TimeoutNotPositive) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\ntimeout_s = -inf\n"),
            "experiments/sweep.toml:6:13: timeout_s must be a finite number greater than 0, "
            "got -inf");
}

TEST(MatrixErrorTest, AttemptsOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nattempts = 0\n"),
            "experiments/sweep.toml:6:12: attempts must be between 1 and 100, got 0");
}

TEST(MatrixErrorTest, RunsPerJobOutOfRange) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nruns_per_job = 0\n"),
            "experiments/sweep.toml:6:16: runs_per_job must be between 1 and 1000, got 0");
}

TEST(MatrixErrorTest, UnknownExecutionKey) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nretries = 3\n"),
            "experiments/sweep.toml:6:1: unknown key 'retries' in [execution], expected one of: "
            "provider, inventory, repetitions, max_repetitions, interval_within, seed, timeout_s, attempts, "
            "dataset_dir, order, order_seed, runs_per_job, system");
}

TEST(MatrixErrorTest, SplitOfUnknownParameter) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\ncalibration = { worker = [1] }\n"),
            "experiments/sweep.toml:6:17: unknown key 'worker' in split.calibration, did you "
            "mean 'workers'?");
}

TEST(MatrixErrorTest, SplitOfUnknownKind) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\nvalidation = { workers = [2] }\n"),
            "experiments/sweep.toml:6:14: [split] takes only a calibration rule (every other "
            "run is validation), got a validation rule");
}

TEST(MatrixErrorTest, SplitWithoutCalibration) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\n"),
            "experiments/sweep.toml:5:1: [split] must have a calibration rule, got none");
}

TEST(MatrixErrorTest, CalibrationThatIsNotATable) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\ncalibration = [1]\n"),
            "experiments/sweep.toml:6:15: calibration must be a table of parameter values, got "
            "array [ 1 ]");
}

TEST(MatrixErrorTest, EmptyCalibration) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\ncalibration = {}\n"),
            "experiments/sweep.toml:6:15: calibration must name at least one parameter, got an "
            "empty table");
}

TEST(MatrixErrorTest, CalibrationValueIsChecked) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[split]\ncalibration = { workers = [1, 1] }\n"),
            "experiments/sweep.toml:6:31: workers values must be distinct, got integer 1 again "
            "(first at line 6)");
}

TEST(MatrixErrorTest, CalibrationMatchingNoRun) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [2, 4]\n[split]\ncalibration = { workers = [1] }\n"),
            "experiments/sweep.toml:6:15: calibration must match at least one run, got none of 2");
}

std::string List(int from, int to) {
  std::string list = "[";
  for (int i = from; i <= to; ++i) list += std::to_string(i) + (i < to ? ", " : "]");
  return list;
}

TEST(MatrixErrorTest, TooManyRuns) {
  // 64 workers x 40 batch sizes x 40 repetitions = 102,400.
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = " + List(1, 64) + "\nbatch_size = " + List(1, 40) +
                        "\n[execution]\nrepetitions = 40\n"),
            "experiments/sweep.toml:3:1: the matrix must expand to at most 100000 runs (points "
            "x repetitions), got 102400");
}

TEST(MatrixErrorTest, TooManyRunsOfZipsAlone) {
  // Without [matrix] the first [[zip]] is blamed: 1000 x 1000 points.
  EXPECT_EQ(ErrorOfBody("[[zip]]\nbatch_size = " + List(1, 1000) + "\n[[zip]]\nepochs = " +
                        List(1, 1000) + "\n"),
            "experiments/sweep.toml:3:1: the matrix must expand to at most 100000 runs (points "
            "x repetitions), got 1000000");
}

TEST(MatrixErrorTest, TooManyRunsThroughIncludes) {
  // 50 x 1000 points x 2 repetitions = 100,000 exactly; one include more is too many.
  std::string body = "[matrix]\nworkers = " + List(1, 50) + "\nbatch_size = " + List(1, 1000) +
                     "\n[execution]\nrepetitions = 2\n";
  EXPECT_EQ(Parse(body).runs.size(), 100000u);
  EXPECT_EQ(ErrorOfBody(body + "[[include]]\nworkers = 1\nbatch_size = 2000\n"),
            "experiments/sweep.toml:8:1: the matrix must expand to at most 100000 runs (points "
            "x repetitions), got 100002");
}

TEST(MatrixErrorTest, ProductTooLargeToCount) {
  // 64 x 1000^5 x 1000 repetitions overflows 64 bits: the count saturates.
  std::string body = "[matrix]\nworkers = " + List(1, 64) + "\nbatch_size = " + List(1, 1000) +
                     "\nepochs = " + List(1, 1000) + "\nbucket_bytes = " + List(1, 1000) +
                     "\nmax_iterations_per_epoch = " + List(1, 1000) +
                     "\nlearning_rate = " + List(1, 1000) + "\n[execution]\nrepetitions = 1000\n";
  EXPECT_EQ(ErrorOfBody(body),
            "experiments/sweep.toml:3:1: the matrix must expand to at most 100000 runs (points "
            "x repetitions), got more than 9223372036854775807");
}

TEST(MatrixExperimentTest, MoreRepetitionsUpToTheMostWhileTheIntervalIsWide) {
  const Experiment plain = Parse("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 6\n");
  EXPECT_EQ(plain.execution.max_repetitions, 0);
  EXPECT_EQ(plain.execution.interval_within, 0);
  const Experiment adaptive =
      Parse("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 6\nmax_repetitions = 12\ninterval_within = 0.05\n");
  EXPECT_EQ(adaptive.execution.max_repetitions, 12);
  EXPECT_DOUBLE_EQ(adaptive.execution.interval_within, 0.05);
  // Only the planned repetitions are expanded; the rest come when needed.
  EXPECT_EQ(adaptive.runs.size(), 6u);
}

TEST(MatrixErrorTest, MoreRepetitionsNeedBothKeysAMostAboveTheRepetitionsAndAFraction) {
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nmax_repetitions = 12\n"),
            "experiments/sweep.toml:6:19: max_repetitions needs interval_within beside it: repetitions are added "
            "while the 95% interval of a point's median epoch time reaches further than interval_within times the "
            "median (e.g. 0.05), up to max_repetitions runs");
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\ninterval_within = 0.05\n"),
            "experiments/sweep.toml:6:19: interval_within needs max_repetitions beside it: repetitions are added "
            "while the 95% interval of a point's median epoch time reaches further than interval_within times the "
            "median (e.g. 0.05), up to max_repetitions runs");
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 6\nmax_repetitions = 6\n"
                        "interval_within = 0.05\n"),
            "experiments/sweep.toml:7:19: max_repetitions must be more than repetitions (6), got 6");
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nmax_repetitions = 8\ninterval_within = 5\n"),
            "experiments/sweep.toml:7:19: interval_within must be a fraction of the median below 1 (e.g. 0.05 for "
            "5%), got 5");
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nmax_repetitions = 8\ninterval_within = 0\n"),
            "experiments/sweep.toml:7:19: interval_within must be a finite number greater than 0, got 0");
  // The last repetition it may add must have a seed that fits.
  EXPECT_EQ(ErrorOfBody("[matrix]\nworkers = [1]\n[execution]\nrepetitions = 3\nmax_repetitions = 5\n"
                        "interval_within = 0.05\nseed = 9223372036854775804\n"),
            "experiments/sweep.toml:9:8: seed must be at most 9223372036854775803 with 5 repetitions (the last "
            "repetition runs with seed + 4, and seeds are stored as 64-bit signed integers), got "
            "9223372036854775804");
}

// A command line's settings are read as the file reads the same
// parameters: the same values, ranges, messages and scope rules.
TEST(RunSettingsTest, AreReadAsTheFileReadsThem) {
  const RunParams params = ParseRunSettings(
      {{"architecture", "ps"}, {"workers", "4"}, {"hidden", "256,64"}, {"overlap", "on"}, {"bucket_bytes", "65536"}});
  EXPECT_EQ(params.architecture, Architecture::kPs);
  EXPECT_EQ(params.servers, 1);  // resolved as for an [[include]]
  EXPECT_EQ(params.workers, 4);
  EXPECT_EQ(params.hidden, (std::vector<int>{256, 64}));
  EXPECT_TRUE(params.overlap);
  EXPECT_EQ(params.bucket_bytes, 65536);
  EXPECT_EQ(ParseRunSettings({{"architecture", "ring"}}).servers, 0);
}

TEST(RunSettingsTest, ErrorPathsNameTheSettingAndWhatWasExpected) {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases = {
      {{"workers", "0"}, "workers=0: workers must be between 1 and 64, got 0"},
      {{"workers", "4x"}, "workers=4x: workers must be an integer, got string \"4x\""},
      {{"architecture", "tree"},
       "architecture=tree: architecture must be one of \"ring\", \"mpi\", \"ps\", \"p2p\", got \"tree\""},
      {{"overlap", "yes"}, "overlap=yes: overlap must be a boolean, got string \"yes\""},
      {{"hidden", ""}, "hidden=: hidden must have between 1 and 16 layers, got 0"},
      {{"wrokers", "4"}, "wrokers=4: unknown run parameter 'wrokers', did you mean 'workers'?"},
      {{"network", "1gbit"}, "network=1gbit: network names a profile of an experiment file's [networks], not one here"},
      {{"servers", "2"}, "servers=2: servers applies only to architecture \"ps\", got architecture \"ring\""},
  };
  for (const auto& [setting, message] : cases) {
    try {
      ParseRunSettings({setting});
      ADD_FAILURE() << setting.first << " was accepted";
    } catch (const MatrixError& e) {
      EXPECT_EQ(std::string(e.what()), message);
      EXPECT_EQ(e.excerpt(), "");
    }
  }
}

}  // namespace
}  // namespace dmlbench
