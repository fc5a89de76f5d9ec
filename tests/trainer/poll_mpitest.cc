// poll.h's transport settings through real mpirun and Open MPI: a job whose
// ranks all run on this machine talks TCP over the loopback only, whatever
// other interfaces the machine has (and may lose while the job runs). The
// test main calls SetTransportDefaults() before MPI_Init, as the trainer does;
// the MPI tests run with --mca btl self,tcp (cmake/MpiTest.cmake).
#include <mpi.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace dmlbench {
namespace {

// Inodes of the sockets this process holds.
std::set<std::string> OwnSocketInodes() {
  std::set<std::string> inodes;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.starts_with("socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  return inodes;
}

// "address:port" in hex, as /proc/net/tcp and tcp6 print them.
bool IsLoopback(const std::string& hex_address) {
  const std::string address = hex_address.substr(0, hex_address.find(':'));
  if (address.size() == 8) return address.ends_with("7F");   // 127.x.y.z, little-endian
  return address == "00000000000000000000000001000000" ||  // ::1
         (address.starts_with("0000000000000000FFFF0000") && address.ends_with("7F"));  // ::ffff:127.x
}

// "0100007F:0401" -> "127.0.0.1:1025"; IPv6 addresses stay in hex.
std::string Readable(const std::string& hex_address) {
  const std::size_t colon = hex_address.find(':');
  const std::string address = hex_address.substr(0, colon);
  const std::string port = std::to_string(std::stoi(hex_address.substr(colon + 1), nullptr, 16));
  if (address.size() != 8) return address + ":" + port;
  std::string dotted;
  for (int byte = 3; byte >= 0; --byte) {
    dotted += std::to_string(std::stoi(address.substr(2 * byte, 2), nullptr, 16));
    dotted += byte ? "." : ":";
  }
  return dotted + port;
}

// This process's established TCP connections, "local -> remote" in hex.
std::vector<std::string> OwnConnections(const std::string& table) {
  const std::set<std::string> inodes = OwnSocketInodes();
  std::vector<std::string> connections;
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // column titles
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
        inode;
    constexpr const char* kEstablished = "01";
    if (state == kEstablished && inodes.count(inode)) connections.push_back(local + " -> " + remote);
  }
  return connections;
}

// This process's established TCP connections over IPv4 and IPv6.
std::set<std::string> AllOwnConnections() {
  std::set<std::string> connections;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    for (const std::string& connection : OwnConnections(table)) connections.insert(connection);
  }
  return connections;
}

TEST(Transport, AJobOnOneMachineTalksTcpOverTheLoopbackOnly) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  // Open MPI connects a pair of ranks on their first message; the connections
  // held before (to mpirun) are not MPI traffic.
  const std::set<std::string> before = AllOwnConnections();
  std::vector<int> out(world, rank), in(world);
  MPI_Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has accepted its peers' connections

  std::vector<std::string> opened;
  for (const std::string& connection : AllOwnConnections()) {
    if (!before.count(connection)) opened.push_back(connection);
  }
  for (const std::string& connection : opened) {
    const std::string local = connection.substr(0, connection.find(' '));
    const std::string remote = connection.substr(connection.find('>') + 2);
    EXPECT_TRUE(IsLoopback(local) && IsLoopback(remote))
        << "rank " << rank << " talks to a peer off the loopback: " << Readable(local) << " -> "
        << Readable(remote);
  }
  // Not vacuous: the messages went over connections of their own. Counted
  // for the job, not per rank: a rank that takes its "before" later than its
  // peers connect to it may already hold those connections then, but the
  // rank that connected (within its own MPI_Alltoall, after its own "before")
  // counts each. Everything a rank sends reaches every other rank, so at
  // least w - 1 pairs talked, each over a connection of its own.
  const int mine = static_cast<int>(opened.size());
  int job = 0;
  MPI_Allreduce(&mine, &job, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GE(job, world - 1) << "the job's " << world << " ranks opened " << job
                            << " TCP connections";
}

}  // namespace
}  // namespace dmlbench
