// Test helpers for the store, ingest, launcher and run loop: a temporary
// directory, trainer event lines as schemas/trainer-events.md defines them,
// and shell scripts that stand in for the trainer where a test needs it to
// crash, hang or print something wrong. Header-only; not thread-safe.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_RUN_FIXTURE_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_RUN_FIXTURE_H_

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dmlbench::testing {

// The pid of a process that existed and is gone (reaped): the owner of an
// orchestrator's leftovers after it was killed.
inline pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// A fresh directory under the system's temporary directory, removed with
// everything in it at destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dmlbench-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes an executable /bin/sh script with `body` and returns its path.
inline std::string WriteScript(const std::string& path, const std::string& body) {
  WriteFile(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

// What a fake trainer's run_start says of the run it was launched as. The
// defaults are the launch of the tests' usual matrix: one worker of a
// synthetic ring run of seed 1 (plan.h DatasetChecksum), local batch 100,
// one epoch, of 5 iterations here.
struct RunFacts {
  std::string architecture = "ring";
  int workers = 1;
  int servers = 0;  // ps only
  int batch_size = 100;
  int epochs = 1;
  std::string dataset_sha256 = "synthetic:1:10000";
  int iterations_per_epoch = 5;
};

// A run_start line with a printf conversion (%s) in place of each fact of
// the launch, in this order: config's architecture, servers, batch_size and
// epochs, then world_size, workers, servers and dataset_sha256. The one
// text of the line, for C++ (RunStartLine) and shell (EchoRunStart) alike.
inline std::string RunStartFormat(int iterations_per_epoch = 5) {
  return R"({"event":"run_start","format_version":1,"time_unix_s":1.5,)"
         R"("config":{"architecture":"%s","servers":%s,"batch_size":%s,"epochs":%s},)"
         R"("parameters":104938,"parameter_bytes":419752,"layers":[],"world_size":%s,"workers":%s,"servers":%s,)"
         R"("iterations_per_epoch":)" + std::to_string(iterations_per_epoch) +
         R"(,"train_samples":10000,"test_samples":1666,"dataset_sha256":"%s",)"
         R"("mpi_library_version":"Open MPI v4.1.4","hosts":["h"],"roles":["worker"],"threads":1})";
}

inline std::string RunStartLine(const RunFacts& facts) {
  std::string line = RunStartFormat(facts.iterations_per_epoch);
  for (const std::string& value :
       {facts.architecture, std::to_string(facts.servers), std::to_string(facts.batch_size),
        std::to_string(facts.epochs), std::to_string(facts.workers + facts.servers), std::to_string(facts.workers),
        std::to_string(facts.servers), facts.dataset_sha256}) {
    line.replace(line.find("%s"), 2, value);
  }
  return line;
}

// The usual launch's run_start, with `world_size` workers.
inline std::string RunStartLine(int iterations_per_epoch = 5, int world_size = 1) {
  RunFacts facts;
  facts.iterations_per_epoch = iterations_per_epoch;
  facts.workers = world_size;
  return RunStartLine(facts);
}

// An epoch of 5 iterations; rank 0's first iteration is the slowest and
// the five together take `wall_s`.
inline std::string EpochLine(int epoch, int ranks = 1, double wall_s = 0.5) {
  std::string phase = R"({"max_s":0.2,"mean_s":0.1,"min_s":0.05})";
  std::string line = R"({"event":"epoch","format_version":1,"epoch":)" + std::to_string(epoch) +
                     R"(,"iterations":5,"samples":500,"wall_s":)" + std::to_string(wall_s) +
                     R"(,"throughput_samples_per_s":)" + std::to_string(500 / wall_s) +
                     R"(,"loss":2.25,"test_accuracy":0.5,"eval_s":0.01,"overlap_ratio":0,"phases":{)" +
                     R"("forward":)" + phase + R"(,"backward":)" + phase + R"(,"exchange":)" + phase +
                     R"(,"update":)" + phase + R"(,"exposed_comm":)" + phase + R"(,"comm":)" + phase +
                     R"(},"ranks":[)";
  for (int r = 0; r < ranks; ++r) {
    line += (r ? "," : "") + std::string(R"({"rank":)") + std::to_string(r) +
            R"(,"role":"worker","forward_s":0.1,"backward_s":0.2,"exchange_s":0.05,"update_s":0.01,)"
            R"("exposed_comm_s":0.04,"comm_s":0.05,"wait_s":0.03,"bytes_sent":1000,"bytes_received":1000,)"
            R"("messages_sent":4})";
  }
  const std::string first = std::to_string(std::llround(wall_s * 0.24e6));
  const std::string rest = std::to_string(std::llround(wall_s * 0.19e6));
  return line + R"(],"iteration_wall_us":[)" + first + "," + rest + "," + rest + "," + rest + "," + rest + "]}";
}

inline std::string RunEndLine(const std::string& checksum = "c0ffee") {
  return R"({"event":"run_end","format_version":1,"status":"ok","parameter_checksum":")" + checksum +
         R"(","total_wall_s":0.75,"peak_rss_bytes":1048576})";
}

// Shell text printing one line exactly.
inline std::string Echo(const std::string& line) { return "printf '%s\\n' '" + line + "'\n"; }

// Shell text printing the run_start of the run the script was launched as:
// the facts come from the trainer arguments the orchestrator passes
// (launch/trainer_command.h) and the world size from mpirun's (or srun's)
// environment; synthetic data only. Leaves $epochs and $seed set.
inline std::string EchoRunStart() {
  return "architecture=ring servers=0 batch_size=100 epochs=1 seed=1 samples=10000 previous=\n"
         "for word in \"$@\"; do\n"
         "  case $previous in\n"
         "    --architecture) architecture=$word;; --servers) servers=$word;; --batch-size) batch_size=$word;;\n"
         "    --epochs) epochs=$word;; --seed) seed=$word;; --synthetic) samples=$word;;\n"
         "  esac\n"
         "  previous=$word\n"
         "done\n"
         "world_size=${OMPI_COMM_WORLD_SIZE:-${SLURM_NTASKS:-1}}\n"
         "printf '" + RunStartFormat() + "\\n' \"$architecture\" \"$servers\" \"$batch_size\" \"$epochs\" "
         "\"$world_size\" \"$((world_size - servers))\" \"$servers\" \"synthetic:$seed:$samples\"\n";
}

// A trainer that prints a valid run of the epochs it was launched with and
// exits 0.
inline std::string GoodTrainerBody() {
  std::string epoch = EpochLine(1);
  epoch.replace(epoch.find("\"epoch\":1,"), 10, "\"epoch\":%s,");
  return EchoRunStart() + "e=1\nwhile [ $e -le $epochs ]; do printf '" + epoch + "\\n' $e; e=$((e + 1)); done\n" +
         Echo(RunEndLine());
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_RUN_FIXTURE_H_
