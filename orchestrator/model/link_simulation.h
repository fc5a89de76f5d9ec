// Link simulation: a collective's message rounds played over the hosts'
// links, for schedules whose time no closed form follows. Each host has an
// upload and a download link of one rate, each behind a token bucket
// (`tc tbf`, DESIGN.md section 4) that passes what it has saved at once; the
// messages in flight share every link max-min fairly, as TCP flows roughly
// do. A rank posts its round's sends and receives together and starts its
// next round when all of them have completed; a send starts moving as soon
// as it is posted (eagerly: the trainer lets Open MPI send messages up to
// 1 MiB without waiting for the receiver), and a receive completes when its
// message has arrived. Local reductions and latencies are left out: the
// model counts those apart. Nothing here is fitted. Pure; thread-safe
// (RabenseifnerBytes remembers its answers behind a mutex).
#ifndef DMLBENCH_ORCHESTRATOR_MODEL_LINK_SIMULATION_H_
#define DMLBENCH_ORCHESTRATOR_MODEL_LINK_SIMULATION_H_

#include <vector>

namespace dmlbench {

struct Message {
  int peer = 0;        // the rank sent to or received from
  double bytes = 0;
};

// What one rank posts at once.
struct Round {
  std::vector<Message> sends;
  std::vector<Message> receives;
};

// Per rank, its rounds in order. Messages between two ranks are received in
// the order they were sent.
using Schedule = std::vector<std::vector<Round>>;

// libnbc's MPI_Iallreduce by Rabenseifner's algorithm
// (allred_sched_redscat_allgather, Open MPI 4.1) of `gradient_bytes` on
// `ranks` ranks: with p the largest power of two <= ranks and r = ranks - p,
// ranks 0 .. 2r-1 fold in pairs first (each sends the other half of its
// vector, then the odd one sends its reduced half to the even one and waits
// out the rest), the p survivors reduce-scatter by recursive halving and
// allgather by recursive doubling, and each even rank of a pair finally
// sends the whole result to its partner.
Schedule RabenseifnerSchedule(int ranks, double gradient_bytes);

// The time to play `schedule` over links that move one byte per unit of
// time, each with a token bucket of `burst_bytes` full at the start (0 for
// an unshaped link): so the result is in bytes, the bytes in sequence on
// the schedule's critical path at the link's rate. Throws
// std::invalid_argument for a schedule that can never complete (a receive
// no one sends).
double SimulatedBytes(const Schedule& schedule, double burst_bytes);

// SimulatedBytes(RabenseifnerSchedule(ranks, gradient_bytes), burst_bytes),
// each distinct triple played once per process and remembered: a search
// (`model recommend`) predicts thousands of configurations that differ only
// in what the play does not depend on (batch size, CPU share, price).
double RabenseifnerBytes(int ranks, double gradient_bytes, double burst_bytes);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_MODEL_LINK_SIMULATION_H_
