#!/usr/bin/env python3
"""Where a single parameter server's iteration goes, turn by turn, from a
trainer timeline (schemas/timeline.md) of ps with 1 server.

For every iteration of the run's second half (the first warms up): R, the
end of the server's ps.reduce_update (the new model exists); then, in the
order the workers got it, the end of each worker's ps.pull (its new model
arrived). Turn 0 lasts from R to the first arrival, turn i from arrival
i - 1 to arrival i; with pulls in turn each is one pull of W bytes and its
acknowledgement, with pulls at once they share the link. Prints per turn
the median, and per worker served i - 1 whether its next push was on the
wire during turn i (its ps.push span overlapping the turn): a turn that
overlaps a push shares the server's download direction with it. Then the
tail, from the last arrival until the next model exists (the worker served
last computes and pushes in it), with that worker's push, and the whole
iteration.

  bench/analysis/ps_turns.py TRACE.json [--bytes-per-s B] [--gradient-bytes W]
"""
import argparse
import json
import statistics


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--bytes-per-s", type=float, default=0, help="probed link rate; prints W/B beside")
    parser.add_argument("--gradient-bytes", type=float, default=419752)
    args = parser.parse_args()
    with open(args.trace) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    roles = {}
    for e in events:
        if e["name"].startswith("ps.reduce_update"):
            roles[e["pid"]] = "server"
    servers = set(roles)
    if len(servers) != 1:
        raise SystemExit(f"ps_turns: expected one parameter server in {args.trace}, found {len(servers)}")
    server = servers.pop()
    updates = sorted(e["ts"] + e["dur"] for e in events if e["pid"] == server and e["name"] == "ps.reduce_update")
    pulls, pushes = {}, {}
    for e in events:
        if e["pid"] == server:
            continue
        if e["name"] == "ps.pull":
            pulls.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
        elif e["name"] == "ps.push":
            pushes.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
    turns, overlapped, tails, last_pushes, iterations = {}, {}, [], [], []
    for k in range(len(updates) // 2, len(updates) - 1):
        r, next_r = updates[k], updates[k + 1]
        arrivals = []
        for worker, ends in pulls.items():
            after = [t for t in ends if r < t < next_r]
            if after:
                arrivals.append((after[0], worker))
        arrivals.sort()
        if len(arrivals) != len(pulls):
            continue
        start = r
        for i, (t, worker) in enumerate(arrivals):
            turns.setdefault(i, []).append(t - start)
            if i > 0:
                previous = arrivals[i - 1][1]
                busy = any(a < t and b > start for a, b in pushes.get(previous, []))
                overlapped.setdefault(i, []).append(busy)
            start = t
        # The tail: from the last arrival until the server has the next
        # model; in it the worker served last computes and pushes.
        last_t, last_worker = arrivals[-1]
        tails.append(next_r - last_t)
        iterations.append(next_r - r)
        for a, b in pushes.get(last_worker, []):
            if last_t < a < next_r:
                last_pushes.append(b - a)
                break
    if not turns:
        raise SystemExit(f"ps_turns: no whole iteration found in {args.trace}")
    wb = args.gradient_bytes / args.bytes_per_s * 1e6 if args.bytes_per_s else 0
    print(f"{args.trace}: {len(turns[0])} iterations" + (f"; W/B = {wb / 1e3:.2f} ms" if wb else ""))
    print("turn  median_ms  p10_ms  p90_ms" + ("  over_W/B_ms" if wb else "") + "  previous worker pushing")
    for i in sorted(turns):
        d = sorted(turns[i])
        pick = lambda q: d[min(len(d) - 1, int(q * len(d)))]
        line = f"{i:4d}  {statistics.median(d) / 1e3:9.2f}  {pick(0.1) / 1e3:6.2f}  {pick(0.9) / 1e3:6.2f}"
        if wb:
            line += f"  {(statistics.median(d) - wb) / 1e3:12.2f}"
        if i in overlapped:
            line += f"  {100 * sum(overlapped[i]) / len(overlapped[i]):.0f} % of iterations"
        print(line)
    print(f"tail (last arrival -> next model): median {statistics.median(tails) / 1e3:.2f} ms; the last-served "
          f"worker's push {statistics.median(last_pushes) / 1e3:.2f} ms" if last_pushes else "")
    d = sorted(iterations)
    print(f"iteration (model -> next model): median {statistics.median(d) / 1e3:.2f} ms, mean "
          f"{statistics.fmean(d) / 1e3:.2f} ms, p90 {d[int(0.9 * len(d))] / 1e3:.2f} ms, max {d[-1] / 1e3:.2f} ms")


if __name__ == "__main__":
    main()
