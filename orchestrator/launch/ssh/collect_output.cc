#include "orchestrator/launch/ssh/collect_output.h"

#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include "orchestrator/core/shell_quote.h"

namespace dmlbench {
namespace {

constexpr double kListTimeoutS = 10;  // listing and removing a few files

}  // namespace

std::string RemoteOutputDir(const std::string& work_dir, const std::string& run_key, const std::string& local_dir) {
  const std::filesystem::path local = std::filesystem::path(local_dir + "/").parent_path();
  return work_dir + "/.output-" + run_key + "-" + local.filename().string();
}

void CollectOutput(const Inventory& inventory, const std::vector<size_t>& hosts, const std::string& remote_dir,
                   const std::string& local_dir, SshSession* head) {
  const std::string list = "cd " + ShellQuote(remote_dir) +
                           " 2>/dev/null && for f in rank.*/stdout rank.*/stderr; do [ -f \"$f\" ] && echo \"$f\"; "
                           "done; true";
  std::set<std::string> collected;  // "rank.N/stream": hosts sharing a file system see each other's files
  for (size_t n = 0; n < hosts.size(); ++n) {
    try {
      std::unique_ptr<SshSession> own;
      if (n > 0 || head == nullptr) own = std::make_unique<SshSession>(MakeTarget(inventory, inventory.hosts[hosts[n]]));
      SshSession& session = own ? *own : *head;
      std::istringstream files(session.Exec(list, kListTimeoutS).out);
      for (std::string file; std::getline(files, file);) {
        if (!collected.insert(file).second) continue;
        std::filesystem::create_directories(std::filesystem::path(local_dir) / file.substr(0, file.find('/')));
        session.Download(remote_dir + "/" + file, local_dir + "/" + file);
      }
      session.Exec("rm -rf -- " + ShellQuote(remote_dir), kListTimeoutS);
    } catch (const SshError&) {
      // The output of this host's ranks is missing; the run's outcome stands.
    }
  }
}

}  // namespace dmlbench
