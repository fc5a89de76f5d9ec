// PeerToPeer: the `p2p` scheme (DESIGN.md section 1). Every worker owns
// shard j of each bucket (~1/w of it): it sends shard j of its gradient to
// peer j, sums the w gradients of its own shard in worker order, applies SGD
// to it and sends the updated shard to every peer: 2(w-1) messages of ~W/w
// per iteration. Each value is computed once by its owner and copied, so all
// workers end bit-identical. Not thread-safe (one instance per rank).
#ifndef DMLBENCH_TRAINER_PEER_TO_PEER_H_
#define DMLBENCH_TRAINER_PEER_TO_PEER_H_

#include <memory>
#include <span>

#include "trainer/exchange.h"

namespace dmlbench {

// The `p2p` scheme over MPI_COMM_WORLD; every rank is a worker. Options are
// validated by MakeExchange.
std::unique_ptr<Exchange> MakePeerToPeerExchange(const ExchangeOptions& options,
                                                 std::span<float> params,
                                                 std::span<float> grads, Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_PEER_TO_PEER_H_
