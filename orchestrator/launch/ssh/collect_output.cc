#include "orchestrator/launch/ssh/collect_output.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "orchestrator/core/shell_quote.h"

namespace dmlbench {
namespace {

constexpr double kListTimeoutS = 10;  // listing and removing a few files

// Calls step(n) for every n < count, each in a thread of its own, and
// returns when all have.
void OnEveryHost(size_t count, const std::function<void(size_t n)>& step) {
  std::vector<std::thread> threads;
  for (size_t n = 0; n < count; ++n) threads.emplace_back(step, n);
  for (std::thread& thread : threads) thread.join();
}

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
  // The hosts are served at once, each over its own session (a connection's
  // start is most of a host's cost), in three steps: each lists its files;
  // each file goes to the first host that listed it (hosts sharing a file
  // system see each other's files) and each host downloads its own; each
  // removes the directory once every download is done. A host that fails a
  // step (SshError) is left out of the later ones.
  std::vector<std::unique_ptr<SshSession>> own(hosts.size());
  std::vector<SshSession*> sessions(hosts.size(), nullptr);
  std::vector<std::vector<std::string>> listed(hosts.size());
  OnEveryHost(hosts.size(), [&](size_t n) {
    try {
      if (n > 0 || head == nullptr) own[n] = std::make_unique<SshSession>(MakeTarget(inventory, inventory.hosts[hosts[n]]));
      SshSession& session = own[n] ? *own[n] : *head;
      std::istringstream files(session.Exec(list, kListTimeoutS).out);
      for (std::string file; std::getline(files, file);) listed[n].push_back(file);
      sessions[n] = &session;
    } catch (const SshError&) {
      // The output of this host's ranks is missing; the run's outcome stands.
    }
  });
  std::set<std::string> collected;  // "rank.N/stream"
  for (size_t n = 0; n < hosts.size(); ++n) {
    std::vector<std::string> mine;
    for (const std::string& file : listed[n]) {
      if (sessions[n] && collected.insert(file).second) mine.push_back(file);
    }
    listed[n] = std::move(mine);
  }
  OnEveryHost(hosts.size(), [&](size_t n) {
    if (!sessions[n]) return;
    try {
      for (const std::string& file : listed[n]) {
        std::filesystem::create_directories(std::filesystem::path(local_dir) / file.substr(0, file.find('/')));
        sessions[n]->Download(remote_dir + "/" + file, local_dir + "/" + file);
      }
    } catch (const SshError&) {
      sessions[n] = nullptr;
    }
  });
  OnEveryHost(hosts.size(), [&](size_t n) {
    if (!sessions[n]) return;
    try {
      sessions[n]->Exec("rm -rf -- " + ShellQuote(remote_dir), kListTimeoutS);
    } catch (const SshError&) {
    }
  });
}

}  // namespace dmlbench
