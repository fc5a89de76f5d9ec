#include "orchestrator/launch/ssh/provision.h"

#include <cctype>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/sha256.h"
#include "orchestrator/core/shell_quote.h"
#include "orchestrator/launch/job_output.h"

namespace dmlbench {
namespace {

constexpr double kCommandTimeoutS = 60;    // one provisioning command (hashing a dataset included)
constexpr double kUploadRenameTimeoutS = 30;
constexpr double kRemoveTimeoutS = 30;       // a killed orchestrator's output directories

// The hashes of a host's copies, kept in its work dir so that an unchanged
// file is not read again (46 MB of trainer and dataset, 0.17 s of CPU, at
// every provisioning of every host). Run in the work dir with the files'
// names as arguments, it prints "<sha256>  <name>" for each file there is,
// as sha256sum does. A line of the cache is "<sha256> <identity> <name>",
// the identity being stat's device, inode, size, mtime and ctime: a hash is
// reused while the file's identity is the one it had when it was hashed.
// Any write or rename changes its ctime, which no user can set back. The
// identity is taken after `now`, and one whose mtime or ctime is not older
// than `now` is not recorded (hashed again next time): a write later in the
// same second as the one recorded would otherwise leave it unchanged at the
// resolution of seconds. The lines of files not asked about are kept (the
// link probe's upload asks about its own). srand() returns the time of day
// it seeded (POSIX).
// Arguments: -v cache=<file> -v tmp=<file beside it, unique to the run>.
constexpr const char* kHashCache = ".sha256-cache";
constexpr const char* kCachedHashes = R"awk(
function quote(s) { gsub(/'/, "'\\''", s); return "'" s "'" }
BEGIN {
  srand(); now = srand()
  for (i = 1; i < ARGC; ++i) asked[ARGV[i]] = 1
  while ((getline line < cache) > 0) {
    identity = substr(line, 66)
    if (substr(identity, index(identity, " ") + 1) in asked) {
      known[identity] = substr(line, 1, 64)
      ++recorded
    } else {
      entries[++kept] = line
    }
  }
  others = kept
  close(cache)
  stat = "stat -c '%d:%i:%s:%Y:%Z %n' --"
  for (i = 1; i < ARGC; ++i) stat = stat " " quote(ARGV[i])
  stat = stat " 2>/dev/null"
  while ((stat | getline line) > 0) {
    name = substr(line, index(line, " ") + 1)
    if (line in known) {
      hash = known[line]
    } else {
      hasher = "sha256sum -- " quote(name)
      out = ""
      hasher | getline out
      close(hasher)
      hash = substr(out, substr(out, 1, 1) == "\\" ? 2 : 1, 64)
      changed = 1
    }
    if (length(hash) != 64) continue
    print hash "  " name
    split(line, id, ":")
    if (id[4] + 0 < now && id[5] + 0 < now) entries[++kept] = hash " " line
  }
  close(stat)
  if (changed || kept - others != recorded) {
    printf "" > tmp
    for (k = 1; k <= kept; ++k) print entries[k] > tmp
    close(tmp)
    system("mv -f -- " quote(tmp) " " quote(cache))
  }
})awk";

std::string HostLabel(const InventoryHost& host) { return "host '" + host.name + "'"; }

// The remote command's output, cut at "@@<section>" marker lines.
std::map<std::string, std::vector<std::string>> Sections(const std::string& out) {
  std::map<std::string, std::vector<std::string>> sections;
  std::string current;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("@@", 0) == 0) {
      current = line.substr(2);
      sections[current];
    } else if (!current.empty()) {
      sections[current].push_back(line);
    }
  }
  return sections;
}

std::string AfterColon(const std::string& line) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return "";
  const size_t start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? "" : line.substr(start);
}

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

// Why a remote command failed: its last line on stderr; for one that timed
// out, the time and the last lines it wrote on stderr by then (a slow shell
// start-up file, a prompt), which are what tells why.
std::string RemoteFailure(const ExecResult& result, double timeout_s) {
  if (!result.timed_out) return LastLine(result.err);
  std::vector<std::string> lines;
  std::istringstream in(result.err);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  std::string message = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
  if (lines.empty()) return message + ", with nothing on its standard error";
  message += "; its standard error ends:";
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) message += " " + lines[i] + " |";
  message.pop_back();
  message.pop_back();
  return message;
}

HostFacts ParseFacts(const InventoryHost& host, const std::vector<std::string>& lines,
                     const std::vector<std::string>& mpi) {
  HostFacts facts;
  facts.name = host.name;
  facts.address = host.address;
  for (const std::string& line : lines) {
    if (line.rfind("model name", 0) == 0) {
      facts.cpu_model = AfterColon(line);
    } else if (line.rfind("MemTotal:", 0) == 0) {
      facts.memory_bytes = std::stoll(AfterColon(line)) * 1024;
    } else if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
      facts.cores = std::stoi(line);
    } else if (!line.empty()) {
      facts.kernel = line;
    }
  }
  facts.mpi_version = mpi.empty() ? "" : mpi.front();
  const auto provider = host.tags.find("provider");
  facts.provider = provider != host.tags.end() ? provider->second : "ssh";
  facts.tags_json = nlohmann::json(host.tags).dump();
  return facts;
}

// ssh agent and arguments mpirun will use, from its MCA settings.
std::vector<std::string> RshCommand(const std::vector<std::string>& mpi_args) {
  std::string agent = "ssh";
  std::string args;
  for (size_t i = 0; i + 2 < mpi_args.size(); ++i) {
    if (mpi_args[i] != "--mca" && mpi_args[i] != "-mca") continue;
    if (mpi_args[i + 1] == "plm_rsh_agent") agent = mpi_args[i + 2];
    if (mpi_args[i + 1] == "plm_rsh_args") args = mpi_args[i + 2];
  }
  std::vector<std::string> command;
  std::istringstream words(agent + " " + args);
  for (std::string word; words >> word;) command.push_back(word);
  return command;
}

// Removes the output directories in `work_dir` (listed in `names`) whose
// orchestrator was killed during a job and never collected them
// (job_output.h OrphanedOutputDir). One that cannot be removed stays for
// the next sweep: a leftover is no reason to refuse the host.
void RemoveOrphanedOutput(RemoteShell& shell, const std::string& work_dir, const std::vector<std::string>& names) {
  std::string orphans;
  for (const std::string& name : names) {
    if (OrphanedOutputDir(name)) orphans += " " + ShellQuote(work_dir + "/" + name);
  }
  if (!orphans.empty()) shell.Exec("rm -rf --" + orphans, kRemoveTimeoutS);
}

}  // namespace

ProvisionPlan MakeProvisionPlan(const std::string& work_dir, const std::string& trainer_path,
                                const std::string& dataset_dir) {
  ProvisionPlan plan;
  plan.work_dir = work_dir;
  plan.files.push_back({trainer_path, "dmlbench-trainer", Sha256FileHex(trainer_path)});
  if (!dataset_dir.empty()) {
    std::vector<std::filesystem::path> names;
    for (const auto& entry : std::filesystem::directory_iterator(dataset_dir)) {
      if (entry.is_regular_file()) names.push_back(entry.path());
    }
    std::sort(names.begin(), names.end());
    for (const auto& path : names) {
      plan.files.push_back({path.string(), "dataset/" + path.filename().string(),
                            Sha256FileHex(path.string())});
    }
  }
  return plan;
}

HostProvision ProvisionHost(RemoteShell& shell, const InventoryHost& host, const ProvisionPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  HostProvision result;
  // One round trip: work dir, remote hashes, Open MPI version, facts; the
  // version (an MPI start-up) runs while the files are hashed.
  std::string command = "mkdir -p " + ShellQuotePath(plan.work_dir) + " " +
                        ShellQuotePath(plan.work_dir + "/dataset") + " && cd " +
                        ShellQuotePath(plan.work_dir) +
                        " && { echo @@pwd; pwd; v=.mpirun-version.$$; { if command -v mpirun "
                        ">/dev/null 2>&1; then mpirun --version 2>&1 | head -n 1; fi; } >\"$v\" & "
                        "echo @@sha256; ";
  if (!plan.files.empty()) {
    command += "awk -v cache=" + std::string(kHashCache) + " -v tmp=" + kHashCache + ".$$ " +
               ShellQuote(kCachedHashes);
    for (const ProvisionFile& file : plan.files) command += " " + ShellQuote(file.remote_name);
    command += "; ";
  }
  command +=
      "echo @@outputs; for d in .output-*; do [ -d \"$d\" ] && echo \"$d\"; done; "
      "echo @@facts; grep -m1 '^model name' /proc/cpuinfo; nproc; grep -m1 '^MemTotal' /proc/meminfo; "
      "uname -srm; wait; echo @@mpirun; cat \"$v\"; rm -f \"$v\"; } </dev/null";
  const ExecResult probe = shell.Exec(command, kCommandTimeoutS);
  if (probe.exit_status != 0) {
    throw ProvisionError(HostLabel(host) + ": cannot prepare work dir " + plan.work_dir + ": " +
                         RemoteFailure(probe, kCommandTimeoutS));
  }
  auto sections = Sections(probe.out);
  if (sections["pwd"].empty()) {
    throw ProvisionError(HostLabel(host) + ": unexpected output from the remote shell: " +
                         LastLine(probe.out));
  }
  result.work_dir = sections["pwd"].front();
  if (sections["mpirun"].empty()) {
    throw ProvisionError(HostLabel(host) +
                         ": mpirun not found on the remote PATH; install Open MPI (the same "
                         "version on every host)");
  }
  result.facts = ParseFacts(host, sections["facts"], sections["mpirun"]);
  RemoveOrphanedOutput(shell, result.work_dir, sections["outputs"]);

  std::map<std::string, std::string> remote_hashes;
  for (const std::string& line : sections["sha256"]) {
    const size_t space = line.find("  ");
    if (space == 64) remote_hashes[line.substr(space + 2)] = line.substr(0, 64);
  }
  std::string renames;
  for (const ProvisionFile& file : plan.files) {
    if (remote_hashes[file.remote_name] == file.sha256) continue;
    const std::string final_path = result.work_dir + "/" + file.remote_name;
    const std::string temp_path = final_path + ".tmp-" + host.name;
    shell.Upload(file.local_path, temp_path);
    renames += (renames.empty() ? "" : " && ") + std::string("mv -f -- ") + ShellQuote(temp_path) +
               " " + ShellQuote(final_path);
    ++result.uploaded;
  }
  if (!renames.empty()) {
    const ExecResult moved = shell.Exec(renames, kUploadRenameTimeoutS);
    if (moved.exit_status != 0) {
      throw ProvisionError(HostLabel(host) + ": cannot move uploaded files into place: " +
                           RemoteFailure(moved, kUploadRenameTimeoutS));
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string PeerCheckCommand(const std::vector<InventoryHost>& to,
                             const std::vector<std::string>& mpi_args, double timeout_s) {
  std::vector<std::string> ssh = RshCommand(mpi_args);
  ssh.push_back("-o");
  ssh.push_back("BatchMode=yes");
  ssh.push_back("-o");
  ssh.push_back("ConnectTimeout=" + std::to_string(static_cast<int>(timeout_s + 0.999)));
  // Options end before the address, so that no address is read as one (the
  // inventory refuses them too); only ssh is known to take "--".
  if (std::filesystem::path(ssh.front()).filename() == "ssh") ssh.push_back("--");
  // One ssh per peer in the background; each prints its one short line with
  // one write, so that lines never mix.
  std::string command;
  for (size_t k = 0; k < to.size(); ++k) {
    const std::string index = std::to_string(k);
    command += "{ if out=$(" + ShellJoin(ssh) + " " + ShellQuote(to[k].address) +
               " true 2>&1 </dev/null); then echo 'ok " + index + "'; else echo \"fail " + index +
               " $(printf %s \"$out\" | tail -n 1)\"; fi; } & ";
  }
  return command + "wait";
}

// Reachability over ssh in 2 (n - 1) ssh starts rather than every pair's
// n (n - 1), which at 64 hosts of 0.02 core took longer than 13 minutes.
// What an MPI job needs: mpirun on its launching host starts a daemon on
// each other host over ssh. With tree spawn (Open MPI 4.1's default,
// plm_rsh_no_tree_spawn false, which the launchers keep) a daemon also
// starts those below it in the routing tree (routed radix, 64 children a
// node), so up to 65 hosts the launching host starts them all itself.
//  - The first host reaches every other: the SSH provider's launching host
//    is the first free host of a run in inventory order, the first host
//    whenever it is up and free (every run of a sweep that runs one at a
//    time). Not on an emulated cluster: its mpirun runs on the
//    orchestrator's machine, so no host starts the daemons of the others
//    below 66 hosts, and its own ssh to them is what every launch uses.
//  - Each other host reaches the next, the last the first: every host's own
//    ssh (its key, known_hosts, agent) works, and every host's sshd lets a
//    peer in, which is what another host needs to launch a job or to start
//    daemons of a tree.
// Given up: a block between one particular pair of other hosts (a firewall
// rule, a known_hosts missing one peer's key on one host only); mpirun
// reports it at launch, as a host's daemon that could not start. Neither
// check covers the ranks' own TCP connections to each other.
std::vector<size_t> PeerCheckTargets(size_t host, size_t hosts, bool mpirun_on_first_host) {
  if (hosts < 2) return {};
  if (host != 0 || !mpirun_on_first_host) return {(host + 1) % hosts};
  std::vector<size_t> all;
  for (size_t j = 1; j < hosts; ++j) all.push_back(j);
  return all;
}

std::vector<HostProvision> ProvisionHosts(const Inventory& inventory, const ProvisionPlan& plan,
                                          const ConnectFunction& connect) {
  const size_t n = inventory.hosts.size();
  const bool mpirun_on_first_host = inventory.emulated_cluster_toml.empty();
  std::vector<HostProvision> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      try {
        const InventoryHost& host = inventory.hosts[i];
        std::unique_ptr<RemoteShell> shell = connect(host);
        results[i] = ProvisionHost(*shell, host, plan);
        std::vector<InventoryHost> peers;
        for (const size_t j : PeerCheckTargets(i, n, mpirun_on_first_host)) peers.push_back(inventory.hosts[j]);
        if (peers.empty()) return;
        // As long as the ssh starts would take one after another: on a host
        // of a small CPU share they share its CPU.
        const double timeout_s = (inventory.connect_timeout_s + 5) * static_cast<double>(peers.size());
        const ExecResult checked =
            shell->Exec(PeerCheckCommand(peers, inventory.mpi_args, inventory.connect_timeout_s), timeout_s);
        std::vector<std::string> answers(peers.size());  // by index into peers: "ok" or "fail <why>"
        std::istringstream lines(checked.out);
        for (std::string line; std::getline(lines, line);) {
          std::istringstream words(line);
          std::string verdict;
          size_t k = 0;
          if (!(words >> verdict >> k) || k >= peers.size()) continue;
          std::string why;
          std::getline(words >> std::ws, why);
          while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
          answers[k] = why.empty() ? verdict : verdict + " " + why;
        }
        for (size_t k = 0; k < peers.size(); ++k) {
          const std::string& answer = answers[k];
          if (answer == "ok") continue;
          const std::string silent = checked.timed_out ? RemoteFailure(checked, timeout_s) : "no answer";
          std::vector<std::string> ssh = RshCommand(inventory.mpi_args);
          ssh.push_back(peers[k].address);
          throw ProvisionError(HostLabel(host) + " cannot reach " + HostLabel(peers[k]) +
                               " over ssh as mpirun will (" + ShellJoin(ssh) + "): " +
                               (answer.size() > 5 ? answer.substr(5) : silent) +
                               "; the hosts of an MPI job must reach each other over ssh");
        }
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // One failing host: its own error. Several: every host's, since one
  // host's failure may be only the sign of another's (a cannot reach b
  // because b's host key changed; b's own error has the fingerprints).
  std::vector<std::exception_ptr> failed;
  for (const std::exception_ptr& error : errors) {
    if (error) failed.push_back(error);
  }
  if (failed.size() == 1) std::rethrow_exception(failed.front());
  if (!failed.empty()) {
    std::string message = std::to_string(failed.size()) + " of " + std::to_string(n) + " hosts cannot be used:";
    for (const std::exception_ptr& error : failed) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        message += std::string("\n  ") + e.what();
      }
    }
    throw ProvisionError(message);
  }
  for (size_t i = 1; i < n; ++i) {
    const HostFacts& first = results[0].facts;
    const HostFacts& other = results[i].facts;
    if (other.mpi_version != first.mpi_version) {
      throw ProvisionError("Open MPI differs between hosts: '" + first.name + "' has '" +
                           first.mpi_version + "', '" + other.name + "' has '" +
                           other.mpi_version + "'; every host needs the same version");
    }
    if (results[i].work_dir != results[0].work_dir) {
      throw ProvisionError("work_dir resolves to " + results[0].work_dir + " on '" + first.name +
                           "' but to " + results[i].work_dir + " on '" + other.name +
                           "'; mpirun needs one path on every host: set an absolute work_dir");
    }
  }
  return results;
}

}  // namespace dmlbench
