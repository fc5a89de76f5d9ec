#include "trainer/exchange.h"

#include <mpi.h>

#include <stdexcept>
#include <string>

#include "trainer/allreduce_mpi.h"
#include "trainer/allreduce_ring.h"
#include "trainer/parameter_server.h"
#include "trainer/peer_to_peer.h"

namespace dmlbench {
namespace {

// Every check depends only on the options and the world size, which all
// ranks share, so every rank throws the same message before any collective.
void Validate(const ExchangeOptions& options, std::size_t parameters, std::size_t gradients,
              int world_size) {
  const std::string& a = options.architecture;
  if (a != "ring" && a != "mpi" && a != "ps" && a != "p2p") {
    throw std::invalid_argument("unknown architecture \"" + a +
                                "\" (expected ring, mpi, ps or p2p)");
  }
  if (options.bucket_bytes == 0) {
    throw std::invalid_argument("bucket size must be positive, got 0 bytes");
  }
  if (parameters != gradients) {
    throw std::invalid_argument("parameter buffer (" + std::to_string(parameters) +
                                " floats) and gradient buffer (" + std::to_string(gradients) +
                                " floats) differ in length");
  }
  std::size_t covered = 0;
  for (std::size_t s = 0; s < options.slices.size(); ++s) {
    if (options.slices[s].offset != covered) {
      throw std::invalid_argument("slices do not tile the parameter buffer: slice " +
                                  std::to_string(s) + " starts at " +
                                  std::to_string(options.slices[s].offset) + ", expected " +
                                  std::to_string(covered));
    }
    covered += options.slices[s].count;
  }
  if (covered != parameters || parameters == 0) {
    throw std::invalid_argument("slices cover " + std::to_string(covered) + " of " +
                                std::to_string(parameters) + " parameters");
  }
  if (options.pulls_in_turn &&
      !PullsInTurnApply(a, options.servers, options.overlap, options.partition_bytes)) {
    throw std::invalid_argument("pulls in turn are for ps with 1 server and a whole exchange (overlap off, no parts)");
  }
  if (a != "ps") return;
  const int k = options.servers;
  if (k < 1) {
    throw std::invalid_argument("ps needs at least 1 server, got " + std::to_string(k));
  }
  if (static_cast<std::size_t>(k) > parameters) {
    throw std::invalid_argument("ps with " + std::to_string(k) + " servers needs at least " +
                                std::to_string(k) + " parameters (one per server), got " +
                                std::to_string(parameters));
  }
  if (world_size < k + 1) {
    throw std::invalid_argument("ps with " + std::to_string(k) + " servers needs at least " +
                                std::to_string(k + 1) + " ranks (" + std::to_string(k) +
                                " servers + 1 worker), got " + std::to_string(world_size));
  }
}

}  // namespace

bool PullsInTurnApply(const std::string& architecture, int servers, bool overlap, std::size_t partition_bytes) {
  return architecture == "ps" && servers == 1 && !overlap && partition_bytes == 0;
}

std::unique_ptr<Exchange> MakeExchange(const ExchangeOptions& options, std::span<float> params,
                                       std::span<float> grads, Timeline* timeline) {
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  Validate(options, params.size(), grads.size(), world_size);
  if (options.architecture == "ring") return MakeRingExchange(options, params, grads, timeline);
  if (options.architecture == "mpi") return MakeMpiExchange(options, params, grads, timeline);
  if (options.architecture == "ps") {
    return MakeParameterServerExchange(options, params, grads, timeline);
  }
  return MakePeerToPeerExchange(options, params, grads, timeline);
}

}  // namespace dmlbench
