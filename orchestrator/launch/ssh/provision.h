// Provision: per host a work dir, trainer and dataset uploaded only when the
// remote sha256 differs (each host keeps the hashes of its copies, reused
// while a copy is unchanged), the output directories of killed orchestrators
// removed, one Open MPI version everywhere, hosts reaching each other over
// ssh as mpirun will, and HostFacts; all through RemoteShell, no
// connection kept. ProvisionHosts() runs one thread per host; the rest is pure.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_PROVISION_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_PROVISION_H_

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/core/error.h"

#include "orchestrator/core/run_spec.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/session.h"

namespace dmlbench {

// A host that is reachable but unusable (mpirun missing, versions or paths
// that differ between hosts, hosts that cannot reach each other). what()
// names the host(s) and what to fix.
class ProvisionError : public Error {
 public:
  using Error::Error;
};

struct ProvisionFile {
  std::string local_path;
  std::string remote_name;  // relative to the work dir, e.g. "dataset/train-images-idx3-ubyte.gz"
  std::string sha256;       // of the local file, hex
};

// What every host gets. Private keys are never part of it.
struct ProvisionPlan {
  std::string work_dir;             // remote, from the inventory ("~/" = remote home)
  std::vector<ProvisionFile> files;
};

// The trainer as "dmlbench-trainer" and each regular file of dataset_dir
// (if not "") as "dataset/<name>", with their sha256. Throws Sha256Error.
ProvisionPlan MakeProvisionPlan(const std::string& work_dir, const std::string& trainer_path,
                                const std::string& dataset_dir);

struct HostProvision {
  HostFacts facts;
  std::string work_dir;   // absolute, as resolved on the host
  int uploaded = 0;       // files sent because their sha256 differed or they were missing
  double seconds = 0;     // wall time of this host's provisioning
};

// Provisions one host. Throws SshError or ProvisionError.
HostProvision ProvisionHost(RemoteShell& shell, const InventoryHost& host, const ProvisionPlan& plan);

// The command run on `from` to check it reaches each of `to` over ssh with
// the agent and arguments mpirun will use (plm_rsh_agent / plm_rsh_args of
// mpi_args), all at once. Prints one line per host of `to`, in any order:
// "ok <k>" or "fail <k> <ssh's last stderr line>", k its index in `to`.
std::string PeerCheckCommand(const std::vector<InventoryHost>& to,
                             const std::vector<std::string>& mpi_args, double timeout_s);

// The hosts (indices into the inventory of `hosts`) that host `host` checks
// it reaches over ssh: each host the next one, the last the first, and,
// when mpirun starts on the first host (`mpirun_on_first_host`; not on an
// emulated cluster, whose mpirun runs on the orchestrator's machine), the
// first host every other; 2 (hosts - 1) ssh starts in all (hosts without
// it), none with one host. provision.cc says why that is what mpirun needs.
std::vector<size_t> PeerCheckTargets(size_t host, size_t hosts, bool mpirun_on_first_host);

// Opens one shell per host (`connect`), in parallel: provisions each, then
// (with more than one host) checks the hosts reach each other
// (PeerCheckTargets; mpirun on the first host unless the inventory is an
// emulated cluster's). Returns
// the hosts in inventory order. Throws the failure of a host when one host
// failed (SshError naming the host, or ProvisionError), a ProvisionError
// with every failing host's message when several did ("2 of 3 hosts cannot
// be used:\n  host 'a' ...\n  host 'b' ..."), or a ProvisionError for a
// mismatch between hosts.
using ConnectFunction = std::function<std::unique_ptr<RemoteShell>(const InventoryHost&)>;
std::vector<HostProvision> ProvisionHosts(const Inventory& inventory, const ProvisionPlan& plan,
                                          const ConnectFunction& connect);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_PROVISION_H_
