// CollectOutput: brings what the ranks of a finished job wrote on their own
// hosts (the layout of launch/job_output.h, under a directory of the hosts'
// work directory) into a local directory over SFTP, and removes it on the
// hosts. Used by every launcher whose ranks run on inventory hosts (ssh,
// emulated cluster). Opens its own sessions (or borrows the head's); not
// thread-safe for one remote directory.
#ifndef DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_COLLECT_OUTPUT_H_
#define DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_COLLECT_OUTPUT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "orchestrator/launch/ssh/inventory.h"
#include "orchestrator/launch/ssh/session.h"

namespace dmlbench {

// The directory of the hosts where the ranks of one launch write their
// output: in `work_dir`, named after the run key and the (unique) local
// directory `local_dir` it is collected into.
std::string RemoteOutputDir(const std::string& work_dir, const std::string& run_key, const std::string& local_dir);

// Copies the files rank.N/stdout and rank.N/stderr found under `remote_dir`
// on each of `hosts` (indices into inventory.hosts) into `local_dir`, then
// removes `remote_dir` there. `head`, when not null, is an open session to
// hosts[0], used instead of a new one. A host that cannot be reached keeps
// its files, and the output of its ranks is missing; never throws SshError.
void CollectOutput(const Inventory& inventory, const std::vector<size_t>& hosts, const std::string& remote_dir,
                   const std::string& local_dir, SshSession* head = nullptr);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_LAUNCH_SSH_COLLECT_OUTPUT_H_
