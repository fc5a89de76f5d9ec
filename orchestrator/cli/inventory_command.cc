// `dmlbench inventory check FILE` (connect, provision, print host facts),
// `dmlbench inventory probe FILE` (alpha and B of the hosts' network into the
// database) and `dmlbench inventory import-ec2 JSON` (an inventory from `aws
// ec2 describe-instances` output; an instance without the address is left
// out with a warning that names it).

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/sha256.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/core/programs.h"
#include "orchestrator/launch/link_probe.h"
#include "orchestrator/launch/ssh/ec2_import.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/provision.h"
#include "orchestrator/launch/ssh/session.h"
#include "orchestrator/launch/ssh/ssh_link_probe.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

struct CheckOptions {
  std::string inventory;
  std::string trainer;
  std::string dataset;
};

struct ProbeOptions {
  std::string inventory;
  SshLinkProbeOptions probe;
};

struct ImportOptions {
  std::string json;
  std::string output;
  bool private_address = false;
  std::string user;
};

void Check(const CheckOptions& options) {
  const Inventory inventory = LoadInventory(options.inventory);
  const ProvisionPlan plan =
      options.trainer.empty()
          ? ProvisionPlan{inventory.work_dir, {}}
          : MakeProvisionPlan(inventory.work_dir, options.trainer, options.dataset);
  const std::vector<HostProvision> hosts =
      ProvisionHosts(inventory, plan, [&](const InventoryHost& host) {
        return std::unique_ptr<RemoteShell>(new SshSession(MakeTarget(inventory, host)));
      });
  for (const HostProvision& host : hosts) {
    const HostFacts& facts = host.facts;
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB",
                  static_cast<double>(facts.memory_bytes) / (1024.0 * 1024 * 1024));
    std::cout << facts.name << " (" << facts.address << "): ready in "
              << static_cast<int>(host.seconds * 1000) << " ms, " << host.uploaded
              << " file(s) uploaded to " << host.work_dir << "\n"
              << "  provider  " << facts.provider << "\n"
              << "  cpu       " << facts.cpu_model << "\n"
              << "  cores     " << facts.cores << "\n"
              << "  memory    " << memory << "\n"
              << "  kernel    " << facts.kernel << "\n"
              << "  mpi       " << facts.mpi_version << "\n";
  }
  std::cout << hosts.size() << " host(s) ready\n";
}

void Probe(const ProbeOptions& options, const std::string& db) {
  const Inventory inventory = LoadInventory(options.inventory);
  Store store(db);
  const LinkProbeResult result = ProbeSshLink(inventory, options.probe, [&](const InventoryHost& host) {
    return std::unique_ptr<RemoteShell>(new SshSession(MakeTarget(inventory, host)));
  });
  const std::vector<LinkProbeRow> rows = LinkProbeRows(result);
  store.AddLinkProbe(rows);
  char line[256];
  std::snprintf(line, sizeof line, "%s (%s,%s, unshaped): alpha %.1f us  B %.3f MB/s  %zu sizes stored in ",
                result.profile.c_str(), result.hosts[0].c_str(), result.hosts[1].c_str(), result.fit.alpha_s * 1e6,
                result.fit.bandwidth_bytes_per_s / 1e6, rows.size());
  std::cout << line << db << "\n";
}

void ImportEc2(const ImportOptions& options) {
  std::ifstream in(options.json, std::ios::binary);
  if (!in) throw Error("cannot read " + options.json);
  std::ostringstream text;
  text << in.rdbuf();
  const Ec2Import imported = ImportEc2Inventory(text.str(), options.json, {options.private_address, options.user});
  for (const std::string& skipped : imported.skipped) {
    std::cerr << "dmlbench: warning: " << options.json << ": " << skipped << "; skipped\n";
  }
  if (options.output.empty()) {
    std::cout << imported.inventory_toml;
    return;
  }
  std::ofstream out(options.output, std::ios::binary);
  out << imported.inventory_toml;
  if (!out.flush()) throw Error("cannot write " + options.output);
}

}  // namespace

void AddInventoryCommands(CLI::App& app, const GlobalOptions& global) {
  CLI::App* inventory = app.add_subcommand("inventory", "Check, probe or build SSH host inventories");
  inventory->require_subcommand(1);

  auto check_options = std::make_shared<CheckOptions>();
  CLI::App* check = inventory->add_subcommand(
      "check", "Connect to every host, provision it (work dir, uploads, Open MPI) and print its facts");
  check->add_option("FILE", check_options->inventory, "Inventory (schemas/inventory.md)")->required();
  check->add_option("--trainer", check_options->trainer,
                    "Trainer binary to upload when its sha256 differs (default: none)");
  check->add_option("--dataset", check_options->dataset,
                    "Directory of dataset files to upload when their sha256 differs");
  check->callback([check_options] { Check(*check_options); });

  auto probe_options = std::make_shared<ProbeOptions>();
  probe_options->probe.probe_binary = SiblingProgram("dmlbench-linkprobe");
  CLI::App* probe = inventory->add_subcommand(
      "probe", "Measure latency and bandwidth between two hosts (MPI ping-pong) and store them in the database");
  probe->add_option("FILE", probe_options->inventory, "Inventory (schemas/inventory.md)")->required();
  probe->add_option("--profile", probe_options->probe.profile,
                    "Profile name of the stored rows (default: ssh-<inventory file name>)");
  probe->add_option("--hosts", probe_options->probe.hosts, "A,B: the two hosts, A runs mpirun (default: the first two)")
      ->delimiter(',');
  probe->add_option("--probe", probe_options->probe.probe_binary, "dmlbench-linkprobe binary to upload")
      ->capture_default_str();
  probe->add_option("--seconds-per-size", probe_options->probe.sizes.max_seconds_per_size,
                    "time spent on each message size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  probe->callback([probe_options, &global] { Probe(*probe_options, global.db); });

  auto import_options = std::make_shared<ImportOptions>();
  CLI::App* import = inventory->add_subcommand(
      "import-ec2", "Build an inventory from `aws ec2 describe-instances` JSON (running instances)");
  import->add_option("JSON", import_options->json, "describe-instances output")->required();
  import->add_option("-o,--output", import_options->output, "Write the inventory here (default: stdout)");
  import->add_flag("--private", import_options->private_address,
                   "Use private IP addresses (from inside the VPC)");
  import->add_option("--user", import_options->user, "Login user of the instances (e.g. ec2-user, ubuntu)");
  import->callback([import_options] { ImportEc2(*import_options); });
}

}  // namespace dmlbench
