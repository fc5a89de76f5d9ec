// RunSpec: the value types every stage shares — what a run is (RunParams,
// PlannedRun), an experiment as the matrix expanded it, the network profile a
// run asks for, and the facts of a host. Plain structs without behaviour
// beyond derived values; the matrix stage fills them, later stages read them.
// Thread-safe as values.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_RUN_SPEC_H_
#define DMLBENCH_ORCHESTRATOR_CORE_RUN_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/core/enums.h"

namespace dmlbench {

// Link shaping requested by a run; only the emulated cluster can apply it.
struct NetworkProfile {
  std::string name;                   // "" = the hosts' own network, unshaped
  double bandwidth_bits_per_s = 0;    // 0 = unshaped
  double latency_s = 0;               // one-way delay added per direction

  bool operator==(const NetworkProfile&) const = default;
};

// What an emulated link sends at once after it idled: the token bucket that
// shapes it to `bandwidth_bits_per_s` holds max(1 ms at the rate, 16 KiB)
// (never below a few full-size frames). The cluster shapes its links with
// it; the report's lower bound on an iteration and the model subtract it.
inline double LinkBurstBytes(double bandwidth_bits_per_s) {
  const double one_ms = bandwidth_bits_per_s / 8 * 0.001;
  return one_ms > 16.0 * 1024 ? one_ms : 16.0 * 1024;
}

// Of `bytes` sent through such a link in `bursts` transfers one after
// another, each starting on an idle direction, those that wait for its rate.
inline double PacedBytes(double bytes, double bursts, double bandwidth_bits_per_s) {
  const double left = bytes - bursts * LinkBurstBytes(bandwidth_bits_per_s);
  return left > 0 ? left : 0;
}

// What the hosts table records about a machine (DESIGN.md section 5).
struct HostFacts {
  std::string name;           // inventory name ("local" for this machine)
  std::string address;        // as connected to; empty for local
  std::string cpu_model;
  int cores = 0;
  std::int64_t memory_bytes = 0;
  std::string kernel;         // uname -srm
  std::string mpi_version;    // first line of `mpirun --version`
  std::string provider;       // "local" | "ssh" | "cluster" | tag from the inventory (e.g. "ec2")
  std::string tags_json;      // free tags from the inventory, as a JSON object
};

// One fully resolved run: every parameter that can change what the trainer
// measures. Two runs with equal RunParams are the same experiment point.
struct RunParams {
  Architecture architecture = Architecture::kRing;
  int workers = 1;                       // w
  int servers = 0;                       // k, ps only (1, 2 or 4 in the study)
  int batch_size = 100;                  // local batch b per worker
  int epochs = 1;
  std::vector<int> hidden = {128, 32};
  double learning_rate = 0.05;
  bool overlap = false;
  std::int64_t bucket_bytes = 1 << 20;
  // Exchanges larger than this go in parts of at most this many bytes, each
  // its own exchange (a parameter server returns one part while the next
  // comes in); 0 = never (trainer --partition-bytes).
  std::int64_t partition_bytes = 0;
  // ps with one server, whole exchange, overlap off only (PullsInTurnApplies):
  // the server sends the new model to one worker at a time, each send
  // acknowledged before the next (trainer --pulls-in-turn).
  bool pulls_in_turn = false;
  std::int64_t max_iterations_per_epoch = 0;  // 0 = whole epochs
  // Epoch 1, the warm-up of a run of 2 or more epochs, capped at this many
  // iterations per worker (trainer --warmup-iterations); 0 = a whole epoch
  // (or max_iterations_per_epoch). Not part of the configuration: the
  // steady epochs it precedes measure the same.
  std::int64_t warmup_iterations = 0;
  // Test-set accuracy after every epoch; false = none (trainer --no-evaluate).
  // Not part of the configuration: it runs outside the timed epochs.
  bool evaluate = true;
  std::string dataset = "fashion-mnist";      // "fashion-mnist" (DATASET dir) or "synthetic"
  std::uint64_t seed = 1;                     // base seed + repetition
  int repetition = 0;                         // 0-based
  NetworkProfile network;

  int ranks() const { return workers + (architecture == Architecture::kPs ? servers : 0); }
};

// Where pulls_in_turn means something, as the trainer's --pulls-in-turn
// allows it: ps with one server, the gradient exchanged whole
// (partition_bytes = 0) and overlap off. With more servers a worker needs
// every server's pull before it computes, so serving in turn gains nothing;
// in buckets or parts the pulls already pipeline.
inline bool PullsInTurnApplies(Architecture architecture, int servers, std::int64_t partition_bytes, bool overlap) {
  return architecture == Architecture::kPs && servers == 1 && partition_bytes == 0 && !overlap;
}
inline bool PullsInTurnApplies(const RunParams& params) {
  return PullsInTurnApplies(params.architecture, params.servers, params.partition_bytes, params.overlap);
}

// How the slurm provider asks Slurm for nodes and starts a run's ranks
// (the matrix's [slurm] table, schemas/matrix.md). Strings are passed to
// Slurm's commands as argv words, never through a shell; "" = not passed.
struct SlurmOptions {
  std::string partition;                 // --partition
  std::string account;                   // --account
  std::string qos;                       // --qos
  std::string constraint;                // --constraint
  int time_limit_min = 0;                // --time of each run's step (and of a per-run allocation); 0 = Slurm's default
  bool allocation_per_run = false;       // one salloc per run instead of one for the whole sweep
  bool one_rank_per_node = false;        // ranks spread one per node (--ntasks-per-node=1) instead of packed
  bool launch_mpirun = false;            // mpirun inside the allocation starts the ranks instead of `srun --mpi=pmix`
  std::vector<std::string> salloc_args;  // extra words for salloc, verbatim
  std::vector<std::string> srun_args;    // extra words for each run's srun (or mpirun, with launch_mpirun), verbatim
  // A directory on every node's own disk (absolute): each allocation copies
  // the trainer into a directory of its own made there (sbcast), removed
  // when the allocation is given back.
  std::string stage_dir = "/tmp";
};

struct ExecutionOptions {
  Provider provider = Provider::kLocal;
  // [execution] system: the name of where the runs are measured, part of
  // each run's key; "" = the inventory's, else the provider's default
  // (cli/launcher_factory.h SystemOf).
  std::string system;
  std::string inventory;                 // ssh: inventory file (relative to the matrix file)
  double timeout_s = 900;                // per run
  int attempts = 2;                      // tries per run before it is failed
  std::string dataset_dir;               // "" = the default Fashion-MNIST directory
  bool shuffled = true;                  // run the pending runs in a seeded random order
  // Runs one MPI job may train one after the other (Runner): those of the
  // same ranks, data and network, taken in the sweep's order. 1 = a job
  // per run.
  int runs_per_job = 1;
  std::uint64_t order_seed = 1;          // that order's seed (execution.seed unless order_seed is given)
  // Repetitions beyond the planned ones, for a point whose measurement is
  // still too loose (run/repetitions.h): while the 95% interval of the
  // median of its runs' epoch times reaches further from the median than
  // interval_within times it, one more repetition, up to max_repetitions in
  // all. 0 and 0: never more than planned.
  int max_repetitions = 0;
  double interval_within = 0;
  SlurmOptions slurm;                    // provider "slurm" only
};

struct PlannedRun {
  RunParams params;
  std::string split;                     // "calibration" | "validation"
};

struct Experiment {
  std::string name;
  std::string description;
  std::vector<std::string> tags;         // [experiment] tags, given to every run a sweep selects
  std::string source_path;               // as given by the user
  std::string source_text;               // the file's bytes
  std::string source_sha256;             // hex
  ExecutionOptions execution;
  std::vector<PlannedRun> runs;          // in expansion order, deterministic
};

// One probed message size of a link probe: a row of link_probes
// (schemas/migrations/002_link_probes.sql).
struct LinkProbeRow {
  std::string profile;
  double bandwidth_bits_per_s = 0;
  double latency_s = 0;
  std::int64_t message_bytes = 0;
  int repetitions = 0;
  double median_one_way_s = 0;
  double alpha_s = 0;
  double bandwidth_bytes_per_s = 0;
  double time_unix_s = 0;
  std::string hosts;
  std::int64_t link_probe_id = 0;  // set by the store when it reads the row; AddLinkProbe ignores it
};

// The parameters a label names besides architecture, servers, workers,
// batch size, overlap and network (always named): the others only when they
// tell runs of one listing apart, the repetition unless told not to.
struct ShownParams {
  bool learning_rate = false;
  bool hidden = false;
  bool epochs = false;
  bool max_iterations_per_epoch = false;
  bool warmup_iterations = false;
  bool bucket_bytes = false;
  bool partition_bytes = false;
  bool pulls_in_turn = false;  // Describe names it whenever it is set, as overlap
  bool dataset = false;
  bool repetition = true;
};

// The parameters that take more than one value among `runs`.
ShownParams VaryingIn(const std::vector<RunParams>& runs);
ShownParams VaryingIn(const std::vector<PlannedRun>& runs);

// The largest value of each parameter an experiment may give and a run
// read from a database may hold: workers, servers, batch size, epochs,
// repetitions; the most hidden layers a run has, and the widest one.
inline constexpr int kMaxWorkers = 64;
inline constexpr int kMaxServers = 64;
inline constexpr int kMaxBatchSize = 65536;
inline constexpr int kMaxEpochs = 10000;
inline constexpr int kMaxRepetitions = 1000;
inline constexpr int kMaxHiddenLayers = 16;
inline constexpr int kMaxLayerSize = 65536;
// The longest system name (a run's `system`, DESIGN.md section 5).
inline constexpr std::size_t kMaxSystemNameLength = 128;
// Whether `name` can name a system: 1 to kMaxSystemNameLength printable
// characters (no control character), not starting or ending with a space.
bool IsValidSystemName(std::string_view name);

// The longest experiment name or tag.
inline constexpr std::size_t kMaxNameLength = 64;
// Whether `name` can name an experiment or a tag: 1 to kMaxNameLength
// letters, digits, '.', '_' or '-'.
bool IsValidName(std::string_view name);

// The architecture as results are grouped by it: "ring", "ps k=2", ...
std::string ArchitectureLabel(Architecture architecture, int servers);

// One line naming the point for progress output and messages, e.g.
// "ps k=2 w=4 b=100 net=1gbit rep=0" (and "no-eval" without evaluation);
// with `shown`, also "lr=0.1 hidden=128,32 epochs=3 iters=100 warmup=20
// bucket=65536 dataset=synthetic" for the parameters it names.
std::string Describe(const RunParams& params, const ShownParams& shown = {});

// The canonical form of the parameters (sorted keys, no whitespace JSON);
// the run key is sha256(canonical || trainer sha256 || dataset checksum ||
// "\nsystem:" system). With `system` "", the key runs had before the system
// was part of it (their `system` is NULL in the database).
std::string CanonicalJson(const RunParams& params);
std::string RunKey(const RunParams& params, const std::string& trainer_sha256,
                   const std::string& dataset_sha256, const std::string& system = "");
// A configuration: CanonicalJson without the seed, warmup_iterations and
// evaluate (the repetition and the profile's name are not in it either) —
// what the repetitions of one point share, and what `compare` matches
// across experiments and builds: the steady epochs measure the same
// whatever warm-up preceded them and whether accuracy follows them.
std::string ConfigurationJson(const RunParams& params);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_RUN_SPEC_H_
