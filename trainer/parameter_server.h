// ParameterServer: the `ps` scheme (DESIGN.md section 1). The last k ranks each
// own a shard balanced in bytes; per bucket every worker pushes each server its
// part of the gradient and pulls the new values back once that server has summed
// the w parts in worker order and applied SGD. Synchronous. Not thread-safe.
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
