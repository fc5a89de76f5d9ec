// PeerToPeer: the `p2p` scheme (DESIGN.md section 1). Worker j owns shard j of
// each bucket: every worker sends it shard j of its gradient; j sums them in
// worker order, applies SGD and sends the new shard to all: 2(w-1) messages of
// ~W/w per iteration, each value computed once. Not thread-safe.
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
