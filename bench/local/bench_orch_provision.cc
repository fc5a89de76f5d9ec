// Provisioning of unchanged hosts over SSH (connect, host key check, remote
// sha256 of every file, Open MPI version, facts; nothing to upload), against
// real sshds on loopback addresses started by SshdFixture. Prints the median
// per host and the median wall time of N hosts provisioned in parallel.
// Target: <= 300 ms per host; N hosts in about the time of one.
//   bench_orch_provision [--reps R] [--max-hosts N] [--dataset]
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/local/harness.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/provision.h"
#include "orchestrator/launch/ssh/session.h"
#include "tests/orchestrator/support/sshd_fixture.h"

namespace {

namespace bench = dmlbench::bench;
using Clock = std::chrono::steady_clock;

struct Times {
  std::vector<double> per_host;  // connect + provision, each host
  std::vector<double> connect;   // connect, host key check and authentication
};

// Provisions hosts [0, n) in parallel, one session each; returns the wall
// time and appends each host's own times.
double ProvisionInParallel(const dmlbench::Inventory& inventory, const dmlbench::ProvisionPlan& plan,
                           size_t n, Times* times) {
  std::vector<double> seconds(n);
  std::vector<double> connect(n);
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      const Clock::time_point host_start = Clock::now();
      dmlbench::SshSession session(dmlbench::MakeTarget(inventory, inventory.hosts[i]));
      connect[i] = std::chrono::duration<double>(Clock::now() - host_start).count();
      const dmlbench::HostProvision result = dmlbench::ProvisionHost(session, inventory.hosts[i], plan);
      seconds[i] = std::chrono::duration<double>(Clock::now() - host_start).count();
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  times->per_host.insert(times->per_host.end(), seconds.begin(), seconds.end());
  times->connect.insert(times->connect.end(), connect.begin(), connect.end());
  return wall;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  size_t max_hosts = 8;
  bool with_dataset = false;
  CLI::App app("provisioning of unchanged hosts over SSH on loopback, median per host and in parallel");
  bench::AddRepetitions(app, &reps);
  app.add_option("--max-hosts", max_hosts, "largest number of hosts provisioned in parallel")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--dataset", with_dataset, "provision Fashion-MNIST too");
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> addresses;
  for (size_t i = 0; i < max_hosts; ++i) addresses.push_back("127.0.0." + std::to_string(2 + i));
  dmlbench::testing::SshdFixture sshd(addresses);
  const dmlbench::Inventory inventory =
      dmlbench::ParseInventory(sshd.InventoryToml(), sshd.dir() + "/hosts.toml");
  const dmlbench::ProvisionPlan plan = dmlbench::MakeProvisionPlan(
      inventory.work_dir, DMLBENCH_TRAINER, with_dataset ? DMLBENCH_DATASET_DIR : "");
  Times ignored;
  ProvisionInParallel(inventory, plan, 1, &ignored);  // uploads once; every host shares the dir
  ProvisionInParallel(inventory, plan, max_hosts, &ignored);  // warm-up

  std::printf("provisioning unchanged hosts (%zu files: trainer%s), median of %d\n", plan.files.size(),
              with_dataset ? " + Fashion-MNIST" : "", reps);
  std::printf("%6s %10s %13s %12s\n", "hosts", "wall_ms", "per_host_ms", "connect_ms");
  for (size_t n = 1; n <= max_hosts; n *= 2) {
    std::vector<double> walls;
    Times times;
    for (int r = 0; r < reps; ++r) walls.push_back(ProvisionInParallel(inventory, plan, n, &times));
    std::printf("%6zu %10.1f %13.1f %12.1f\n", n, bench::Summarize(walls).median * 1000,
                bench::Summarize(times.per_host).median * 1000, bench::Summarize(times.connect).median * 1000);
  }
  // CPU time of one unchanged host, all processes counted (this one, the
  // sshd and the remote commands, which are reaped into RUSAGE_CHILDREN when
  // the fixture stops): what the wall time would be on an idle machine.
  double cpu = 0;
  {
    dmlbench::testing::SshdFixture single({"127.0.0.2"});  // its ssh-keygen runs are not counted
    dmlbench::Inventory one = dmlbench::ParseInventory(single.InventoryToml(), single.dir() + "/hosts.toml");
    one.work_dir = inventory.work_dir;  // already holds the files: nothing to upload
    const double self_before = bench::CpuSeconds(bench::CpuOf::kProcess);
    const double children_before = bench::CpuSeconds(bench::CpuOf::kEndedChildren);
    Times times;
    for (int r = 0; r < reps; ++r) ProvisionInParallel(one, plan, 1, &times);
    single.Stop();
    cpu = (bench::CpuSeconds(bench::CpuOf::kProcess) - self_before) +
          (bench::CpuSeconds(bench::CpuOf::kEndedChildren) - children_before);
  }
  std::printf("cpu_ms per unchanged host (this process + sshd + remote commands): %.1f\n", cpu * 1000 / reps);
  return 0;
}
