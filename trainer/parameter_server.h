// ParameterServer: the `ps` scheme (DESIGN.md section 1). The last k ranks
// are servers; each owns one shard of the flat buffer, shards balanced in
// bytes. Per bucket, every worker pushes its gradient, the part in shard s to
// server s, and pulls the updated part back; server s sums the w
// contributions in worker order, applies SGD to its shard and sends the new
// values to every worker. Synchronous: a worker's FinishIteration() returns
// only with the whole new model. Not thread-safe (one instance per rank).
#ifndef DMLBENCH_TRAINER_PARAMETER_SERVER_H_
#define DMLBENCH_TRAINER_PARAMETER_SERVER_H_

#include <memory>
#include <span>

#include "trainer/exchange.h"

namespace dmlbench {

// The `ps` scheme over MPI_COMM_WORLD with options.servers servers. Servers
// answer through Serve(); their LastStats() counts the whole Serve() call:
// update_s is SGD on the shard, wait_s (also reported as exposed_comm_s) the
// time with nothing to do, comm_s the time serving. Options are validated by
// MakeExchange.
std::unique_ptr<Exchange> MakeParameterServerExchange(const ExchangeOptions& options,
                                                      std::span<float> params,
                                                      std::span<float> grads,
                                                      Timeline* timeline);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_PARAMETER_SERVER_H_
