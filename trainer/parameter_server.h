// ParameterServer: the `ps` scheme (DESIGN.md section 1). The last k ranks each
// own a shard balanced in bytes; per bucket every worker pushes each server its
// part of the gradient and pulls the new values back once that server has summed
// the w parts in worker order and applied SGD. Synchronous. Not thread-safe.
//
// A server sends the new values to every worker at once, so the pulls share
// its link and end together, and the workers then push together. With
// options.pulls_in_turn (1 server, whole exchange) it sends them one worker
// at a time, each acknowledged before the next (MPI_Issend: a 0.42 MB eager
// send completes as soon as the kernel's socket buffer has it, so posting
// in turn alone would not serialise the link): the first workers compute
// and push their next gradient while the server still sends to the rest.
// An iteration then takes about (w + 1) W / B instead of 2 w W / B
// (bench/BOUNDS.md: no schedule of whole shards does better). The model is
// the same bit for bit either way.
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

// A worker whose exchange is partitioned keeps at most this many parts per
// server in flight (a part is for the last server whose shard it touches): it
// pushes the next part only when an earlier one's pull is back. All at once,
// the parts of the fastest workers filled the queue of a server's link while
// the part every worker must deliver before the server can answer was still
// behind in the slowest one's flow; each pull waited for the slowest, and the
// two directions overlapped less and less as workers were added. A window keeps
// the workers in step, as BytePS's credits do. Per server, so that with overlap
// a ready part for one server need not wait behind the parts of another.
// Measured as one window over all k servers' parts of 0 (none) / k / 2k / more
// parts, which with the parts in turn is 1 and 2 per server (4 workers, 16 KiB
// parts, ms per iteration, median of 3): 1 server at 100 Mbit/s 152.1 / 144.5 /
// 148.3 / 151.8 (bound 140.2), at 1 Gbit/s 18.29 / 15.16 / 15.22 / 15.31; 2
// servers at 100 Mbit/s 81.3 / 73.6 / 75.1 (bound 70.1), at 1 Gbit/s 8.88 /
// 8.74 / 8.16 / 8.13; 4 servers at 100 Mbit/s and 0.2 core 56.2 / 43.9 / 41.8.
// Two per server is best or within 3 % of it everywhere; with overlap and 2
// servers, 16 KiB parts, 100 Mbit/s: 76.6 ms (bound 70.1), where a window over
// all servers took 136 and none 91.
inline constexpr std::size_t kPartsInFlightPerServer = 2;

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
