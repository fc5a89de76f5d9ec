// FreePort: a TCP port the kernel finds free on every address, for fixtures
// that start real daemons (sshd, slurmctld). Header-only; thread-safe.
#ifndef DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FREE_PORT_H_
#define DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FREE_PORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace dmlbench::testing {

// Bound to the wildcard, never listening, then closed: no loopback address
// has it at that moment.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    throw std::runtime_error("no free port");
  }
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace dmlbench::testing

#endif  // DMLBENCH_TESTS_ORCHESTRATOR_SUPPORT_FREE_PORT_H_
