// SshLinkProbe: latency alpha and bandwidth B of the network between two
// hosts of an SSH/EC2 inventory. Provisions dmlbench-linkprobe on both as the
// trainer is (provision.h: uploaded when its sha256 differs, mpirun and the
// hosts' ssh to each other checked), runs `mpirun -np 2` on the first over
// SSH, one rank per host, and parses and fits its output as every probe does
// (launch/link_probe.h). Does not touch the database. Stateless; through the
// ConnectFunction seam only, so tests may use fake shells.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LINK_PROBE_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LINK_PROBE_H_

#include <string>
#include <vector>

#include "orchestrator/launch/link_probe.h"
#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/provision.h"

namespace dmlbench {

// The probe's name in every host's work dir.
inline constexpr const char* kRemoteProbeName = "dmlbench-linkprobe";

struct SshLinkProbeOptions {
  std::string probe_binary;         // local dmlbench-linkprobe, uploaded as work_dir/dmlbench-linkprobe
  std::vector<std::string> hosts;   // two inventory host names, the first runs mpirun; empty = the first two
  std::string profile;              // link_probes.profile of the rows; "" = DefaultProbeProfile()
  ProbeSizes sizes;
  double timeout_s = 300;           // of the whole mpirun on the host
};

// The profile name of an inventory's probe: "ssh-<file name without its
// extension>" ("ssh-hosts" for hosts.toml). The name is a label: runs of an
// inventory are unshaped (a matrix gives network profiles to the cluster
// only), and the model finds their probe by bandwidth 0 and latency 0.
std::string DefaultProbeProfile(const Inventory& inventory);

// The two hosts probed: the ones named, in that order, else the inventory's
// first two. Throws LinkProbeError for a name the inventory lacks, a count
// other than two, one host twice, or two hosts with one address (mpirun
// would start both ranks on one machine).
std::vector<InventoryHost> ProbeHosts(const Inventory& inventory, const std::vector<std::string>& names);

// The command run on hosts[0]: mpirun with one rank on each host (by
// address), the inventory's mpi_args, and the probe in work_dir (absolute,
// as provisioning resolved it); every word shell-quoted. `timeout` on the
// host ends the job even when this side is gone.
std::string ProbeCommand(const Inventory& inventory, const std::vector<InventoryHost>& hosts,
                         const std::string& work_dir, const SshLinkProbeOptions& options);

// Provisions the two hosts and probes the link between them; the result is
// unshaped (network {}) and named options.profile. Throws LinkProbeError (a
// cluster's inventory, bad hosts, a missing local probe, a failed or
// unparsable probe: what() names the hosts and how mpirun ended), SshError
// (a host that cannot be reached: its name and the cause), ProvisionError
// (no mpirun on a host, hosts that cannot reach each other over ssh).
LinkProbeResult ProbeSshLink(const Inventory& inventory, const SshLinkProbeOptions& options,
                             const ConnectFunction& connect);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_SSH_LINK_PROBE_H_
