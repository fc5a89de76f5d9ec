#!/usr/bin/env python3
"""In what order do the workers get their new model, and how far apart?

Reads trainer timelines (schemas/timeline.md; `TIMELINE_DIR` of
bench/cluster/bench_cluster_bounds.sh writes one per run) of runs with overlap off.
Per iteration of the second half of each run (the first epoch warms up),
the workers' (ranks with `backward` spans) `exchange.wait` ends, the
moment each has the whole new model, sorted: the gaps from the first
worker's to the second's, the third's, and so on. Where one host sends the
whole gradient to several at once (a parameter server's pulls, the root
of MPI's binomial tree at 3 workers) and the link were shared equally,
they would all end together; sent one after another, a message's time
(W/B) apart each. (MPI's root is a worker too: it arrives first, once it
has reduced and handed its sends over.) Prints per file, and over all
files, the median gap to each rank of arrival (ms).

  bench/analysis/timeline_arrivals.py TRACE.json ...
  bench/analysis/timeline_arrivals.py self-test
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timeline_last_finisher import iterations  # noqa: E402


def arrivals(trace):
    """Per iteration of the second half, the workers' exchange ends in
    microseconds, sorted (timeline_last_finisher.iterations reads them);
    none with fewer than 2 workers or 2 iterations."""
    try:
        its = iterations(trace)
    except ValueError:
        return []
    if not its or len(its[0]) < 2:
        return []
    return [sorted(end for _, end in it.values()) for it in its]


def gaps(iterations):
    """Median gap (ms) from the first arrival to the k-th, k = 2, 3, ..."""
    if not iterations:
        return []
    width = len(iterations[0])
    return [statistics.median((it[k] - it[0]) / 1000 for it in iterations) for k in range(1, width)]


def self_test():
    def span(pid, name, ts, dur):
        return {"ph": "X", "tid": 0, "pid": pid, "name": name, "ts": ts, "dur": dur}

    events = []
    for i in range(4):  # two workers, the second 3 ms after the first; a server without backward
        events += [span(0, "backward", 10000 * i, 100), span(0, "exchange.wait", 10000 * i + 100, 900),
                   span(1, "backward", 10000 * i, 100), span(1, "exchange.wait", 10000 * i + 100, 3900),
                   span(2, "exchange.wait", 10000 * i, 9000)]
    its = arrivals({"traceEvents": events})
    assert len(its) == 2, its
    assert gaps(its) == [3.0], gaps(its)
    assert arrivals({"traceEvents": events[:2]}) == []
    print("self-test: ok")


def main(argv):
    if argv == ["self-test"]:
        self_test()
        return 0
    if not argv:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    everything = []
    for path in argv:
        with open(path) as f:
            its = arrivals(json.load(f))
        everything += its
        print(f"{path}: {len(its)} iterations, first to k-th arrival (ms, median): "
              + ", ".join(f"{g:.2f}" for g in gaps(its)))
    widths = {len(it) for it in everything}
    if len(widths) == 1:
        print(f"all: {len(everything)} iterations, first to k-th arrival (ms, median): "
              + ", ".join(f"{g:.2f}" for g in gaps(everything)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
