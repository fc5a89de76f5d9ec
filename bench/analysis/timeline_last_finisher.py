#!/usr/bin/env python3
"""Which worker ends each iteration's exchange last, and does it share a CPU
with the worker whose backward pass ended last?

Reads trainer timelines (schemas/timeline.md; `TIMELINE_DIR` of
bench/cluster/bench_cluster_bounds.sh writes one per run) of runs with overlap off,
one rank per host, host i on CPU i mod CPUS (`cluster up` without
--no-pin). Per iteration of the second half of each run (the first epoch
warms up): the slowest worker s, whose `backward` span ended last; the last
finisher l, whose `exchange.wait` span ended last; and whether l is s, a
worker on s's CPU ("partner"), or another. With w workers on c CPUs each
worker has w/c - 1 partners among the w - 1 others, so were the last
finisher any worker but s at random, it would be a partner in
(w/c - 1)/(w - 1) of the iterations (1/3 for 4 workers on 2 CPUs).

Prints per file, and over all files: iterations, the share in which
l = s; of the others, the share in which l is a partner of s, and its
chance; and the median time from s's own exchange end to l's where l is a
partner (ms). With `cluster up --no-pin` no two hosts keep a CPU, so the
same figure there is a control.

  bench/analysis/timeline_last_finisher.py [--cpus N] TRACE.json ...
  bench/analysis/timeline_last_finisher.py self-test
"""
import argparse
import json
import os
import statistics
import sys


def iterations(trace):
    """Per iteration, {rank: (backward end, exchange end)} in microseconds,
    for the workers (ranks with `backward` spans); the second half only."""
    spans = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid") == 0 and e["name"] in ("backward", "exchange.wait"):
            spans.setdefault(e["pid"], {}).setdefault(e["name"], []).append(e["ts"] + e["dur"])
    for by_name in spans.values():
        for ends in by_name.values():
            ends.sort()
    workers = sorted(r for r, s in spans.items() if "backward" in s)
    if not workers:
        raise ValueError("no backward spans: is this a trainer timeline?")
    n = min(min(len(spans[r].get("backward", [])), len(spans[r].get("exchange.wait", []))) for r in workers)
    if n < 2:
        raise ValueError("fewer than 2 iterations with both backward and exchange.wait on every worker")
    out = []
    for k in range(n // 2, n):
        out.append({r: (spans[r]["backward"][k], spans[r]["exchange.wait"][k]) for r in workers})
    return out


def classify(its, cpus):
    """Counts of (same, partner, other) and the partners' lateness (ms)."""
    same = partner = other = 0
    late = []
    for it in its:
        s = max(it, key=lambda r: it[r][0])
        last = max(it, key=lambda r: it[r][1])
        if last == s:
            same += 1
        elif last % cpus == s % cpus:
            partner += 1
            late.append((it[last][1] - it[s][1]) / 1e3)
        else:
            other += 1
    return same, partner, other, late


def chance(workers, cpus):
    per_cpu = workers / cpus
    return (per_cpu - 1) / (workers - 1) if workers > 1 else 0.0


def report(label, its, cpus):
    same, partner, other, late = classify(its, cpus)
    workers = len(its[0])
    print_row(label, same, partner, other, late, workers, cpus)
    return same, partner, other, late


def print_row(label, same, partner, other, late, workers, cpus):
    n = same + partner + other
    median_late = "%.2f" % statistics.median(late) if late else "-"
    of_others = "%.0f%%" % (100 * partner / (partner + other)) if partner + other else "-"
    print("%-40s %6d %6.0f%% %10s %7.0f%% %8s" % (
        label[-40:], n, 100 * same / n, of_others, 100 * chance(workers, cpus), median_late))


def self_test():
    # 4 workers, 2 CPUs: rank 2 computes last; rank 0 (its partner on
    # CPU 0) finishes last in 3 of 4 iterations, 0.5 ms after rank 2.
    def iteration(t, last):
        ends = {0: (t + 1.0, t + 5.0), 1: (t + 1.0, t + 5.1), 2: (t + 2.0, t + 5.2), 3: (t + 1.5, t + 5.0)}
        b, _ = ends[last]
        ends[last] = (b, t + 5.7)
        return {r: (1e3 * b, 1e3 * x) for r, (b, x) in ends.items()}
    its = [iteration(10 * k, last) for k, last in enumerate([0, 0, 3, 0])]
    same, partner, other, late = classify(its, 2)
    assert (same, partner, other) == (0, 3, 1), (same, partner, other)
    assert all(abs(x - 0.5) < 1e-9 for x in late), late
    assert abs(chance(4, 2) - 1 / 3) < 1e-12
    trace = {"traceEvents": [
        {"ph": "X", "tid": 0, "pid": r, "name": name, "ts": 1000 * k + off, "dur": 100}
        for r in range(2) for k in range(4) for name, off in (("backward", 0), ("exchange.wait", 200))]}
    its = iterations(trace)
    assert len(its) == 2 and its[0][1] == (2100, 2300), its
    print("self-test passed")


def main():
    if sys.argv[1:] == ["self-test"]:
        self_test()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    print("%-40s %6s %7s %10s %8s %8s" % ("trace", "its", "l = s", "partner", "chance", "late ms"))
    total = [0, 0, 0, []]
    first = None
    for path in args.traces:
        with open(path) as f:
            its = iterations(json.load(f))
        first = first or its
        same, partner, other, late = report(os.path.basename(path), its, args.cpus)
        total = [total[0] + same, total[1] + partner, total[2] + other, total[3] + late]
    if len(args.traces) > 1:
        print_row("all", *total, len(first[0]), args.cpus)


if __name__ == "__main__":
    main()
