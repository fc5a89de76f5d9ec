// ParameterServer: the `ps` scheme (DESIGN.md section 1). The last k ranks each
// own a shard balanced in bytes; per bucket every worker pushes each server its
// part of the gradient and pulls the new values back once that server has summed
// the w parts in worker order and applied SGD. Synchronous. Not thread-safe.
#ifndef DMLBENCH_TRAINER_PARAMETER_SERVER_H_
#define DMLBENCH_TRAINER_PARAMETER_SERVER_H_

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "trainer/bucketed_exchange.h"
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

// The order a worker starts the exchanges of `buckets` (PlanBuckets' order,
// indices into it) over `servers` shards of `parameters`. The parts of one
// bucket (partition_bytes) are ready together; started in buffer order, a
// worker would send every part for the last server's shard before the first
// for the next, and as its link's queue is first in, first out, the next
// server would get nothing until the last had everything: its download idle
// at first, its pulls late. So the parts of one bucket take the servers in
// turn: the first part for each server (the last it touches), then the
// second, and so on; buckets keep their order. With 2 servers and 16 KiB
// parts at 100 Mbit/s the iteration went from 103 to 82 ms.
std::vector<std::size_t> PushOrder(const std::vector<Bucket>& buckets, std::size_t parameters,
                                   int servers);

}  // namespace dmlbench

#endif  // DMLBENCH_TRAINER_PARAMETER_SERVER_H_
