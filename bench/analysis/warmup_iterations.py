#!/usr/bin/env python3
"""How many iterations of a run's first epoch a scheme needs before its
iterations take what they take in the steady epoch, per architecture and
network, from the per-iteration times (table `iterations`, rank 0's wall
time of each iteration) of a study's complete runs.

The rule: after K leading iterations, the rest of epoch 1 runs as the same
iterations of epoch 2 do. For each K, every run's time of epoch 1's
iterations K+1.. over the time of epoch 2's iterations K+1.. (the same
positions, because an epoch's first iteration differs from the rest in
every epoch: it follows the epoch's barrier and the evaluation before it);
K_rest is the smallest K whose median of that ratio over the scheme's
runs lies within REST_TOLERANCE (3 %) of 1, K below the shortest run's
iterations per epoch, n. In a long epoch a slow first iteration or two
hardly move that sum, so also, iteration by iteration: the median over the
runs of epoch 1's iteration i / epoch 2's iteration i; K_lead is the
number of leading iterations before the first whose ratio lies within
ITERATION_TOLERANCE (5 %) of 1. The warm-up a scheme needs is K, the larger
of the two. Prints, per scheme and network, the runs, the
median over runs of epoch 1's iteration i / epoch 2's iteration i for the
first iterations (where the warm-up shows), K, and epoch 2's own spread for
scale (the median over runs of each iteration / the run's epoch-2 median).
The last line is the largest K.

  bench/analysis/warmup_iterations.py reports/data/paper-reproduction.db [--rest-tolerance 0.03]
      [--iteration-tolerance 0.05] [--shown 6]
"""
import argparse
import collections
import sqlite3
import statistics


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database")
    parser.add_argument("--rest-tolerance", type=float, default=0.03,
                        help="fraction of 1 the rest of epoch 1 over epoch 2's may differ by")
    parser.add_argument("--iteration-tolerance", type=float, default=0.05,
                        help="fraction of 1 one iteration over epoch 2's may differ by")
    parser.add_argument("--shown", type=int, default=6, help="leading ratios printed")
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    rows = db.execute("""
        SELECT r.architecture, r.servers, r.network, i.attempt_id, i.epoch, i.wall_s
        FROM iterations i JOIN runs r ON r.complete_attempt_id = i.attempt_id
        WHERE i.epoch IN (1, 2)
        ORDER BY i.attempt_id, i.epoch, i.iteration""").fetchall()
    if not rows:
        raise SystemExit(f"warmup_iterations: {args.database} has no iteration times of complete runs")
    epochs = collections.defaultdict(lambda: {1: [], 2: []})
    scheme = {}
    for architecture, servers, network, attempt, epoch, wall_s in rows:
        epochs[attempt][epoch].append(wall_s)
        scheme[attempt] = (architecture + (f" k={servers}" if architecture == "ps" else ""), network or "unshaped")
    groups = collections.defaultdict(list)
    for attempt, times in epochs.items():
        if times[1] and times[2]:
            groups[scheme[attempt]].append(times)

    print(f"{'scheme':8} {'network':9} {'runs':>4} {'iters':>5}  epoch 1 / epoch 2, iteration 1..{args.shown}"
          f"{'':{max(0, 7 * args.shown - 36)}}  K_rest K_lead  K   epoch 2 / its median, 1..{args.shown}")
    largest = 0
    for key in sorted(groups):
        runs = groups[key]
        n = min(min(len(t[1]), len(t[2])) for t in runs)
        ratio = [statistics.median(t[1][i] / t[2][i] for t in runs if t[2][i] > 0) for i in range(n)]
        own = [statistics.median(t[2][i] / statistics.median(t[2]) for t in runs) for i in range(n)]
        k_rest = next((k for k in range(n) if abs(statistics.median(
            sum(t[1][k:]) / sum(t[2][k:]) for t in runs) - 1) <= args.rest_tolerance), n)
        k_lead = next((i for i in range(n) if abs(ratio[i] - 1) <= args.iteration_tolerance), n)
        k = max(k_rest, k_lead)
        largest = max(largest, k)
        shown = " ".join(f"{x:6.2f}" for x in ratio[:args.shown])
        spread = " ".join(f"{x:5.2f}" for x in own[:args.shown])
        print(f"{key[0]:8} {key[1]:9} {len(runs):4} {n:5}  {shown}  {k_rest:6} {k_lead:6} {k:2}   {spread}")
    print(f"largest K: {largest}")


if __name__ == "__main__":
    main()
