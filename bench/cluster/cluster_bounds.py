#!/usr/bin/env python3
"""Lower bound on a trainer run's iteration time, from first principles
(bench/BOUNDS.md), and the table of bench/cluster/bench_cluster_bounds.sh.

  cluster_bounds.py bound EVENTS --bandwidth-bytes-per-s B --alpha-s A
                    --burst-s BETA --cpu Q [--label L]
      reads the trainer's JSON Lines events (schemas/trainer-events.md),
      takes the last epoch (the first one warms up) and prints one JSON line:
      measured iteration time, the bound, every term of it, per-rank figures.
  cluster_bounds.py ddp RESULT_JSON --label L
      turns bench/cluster/ddp_peer.py's rank-0 line into a line of the same shape.
  cluster_bounds.py line [--prefix P] < RESULT_LINE
      one result as a line of text.
  cluster_bounds.py table RESULTS_JSONL
      medians per configuration, ratio to the bound (/nocpu: to the bound
      without its CPU-quota term) and to DDP; exits 1 when
      a run beat its own bound (the bound is then wrong: find out why).
  cluster_bounds.py link TC_LINE
      from a link's tbf line as `tc qdisc show` prints it, prints beta (the
      bucket in seconds at the rate) and B (the payload it passes per
      second): "BETA B".
  cluster_bounds.py self-test
      checks the arithmetic against a hand-computed example.

Units: seconds, bytes, bytes per second, cores.
"""
import argparse
import json
import math
import re
import statistics
import sys

# A full TCP segment on the emulated links: 1,448 bytes of payload (the MSS
# with timestamps) in a 1,514-byte frame (Ethernet 14, IP 20, TCP 32). tbf on
# a veth counts the frame whole, so a link shaped at R bit/s carries
# R/8 * 1448/1514 bytes of payload per second when it never idles
# (bench/cluster/bench_link_stream.sh measures 119.60 MB/s at 1 Gbit/s: 119.55).
SEGMENT_PAYLOAD_BYTES = 1448
SEGMENT_FRAME_BYTES = 1514


def link_terms(tc_line):
    """(beta s, B bytes/s) of a tbf line of `tc qdisc show`."""
    units = {"b": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3}
    rate_units = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    burst = re.search(r"burst (\d+(?:\.\d+)?)([KMG]?b)\b", tc_line)
    rate = re.search(r"rate (\d+(?:\.\d+)?)([KMG]?bit)\b", tc_line)
    if not burst or not rate:
        raise SystemExit(f"cannot read rate and burst from tc's line: {tc_line}")
    bits_per_s = float(rate[1]) * rate_units[rate[2].lower()]
    return (float(burst[1]) * units[burst[2].lower()] * 8 / bits_per_s,
            bits_per_s / 8 * SEGMENT_PAYLOAD_BYTES / SEGMENT_FRAME_BYTES)


def busiest_link(architecture, workers, servers, gradient_bytes):
    """Bytes through the busiest link per iteration in each direction, and
    the number of message latencies that must follow one another."""
    w, k, W = workers, servers, gradient_bytes
    if architecture in ("ring", "mpi"):
        # Any allreduce over w hosts: every host sends (and receives)
        # 2(w-1)/w of the gradient. The ring's 2(w-1) steps depend on each
        # other (Open MPI 4.1 runs the same ring for w >= 4).
        return 2 * (w - 1) / w * W, 2 * (w - 1)
    if architecture == "p2p":
        # Scatter: (w-1) shards of W/w out and in; gather: the same again.
        return 2 * (w - 1) / w * W, 2
    if architecture == "ps":
        # Push W from each worker, w*W/k into each server; the pull mirrors it.
        return max(W, w * W / k), 2
    raise ValueError(f"unknown architecture {architecture!r}")


def read_events(path):
    start, epochs = None, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{number}: not JSON: {e}")
            if event.get("event") == "run_start":
                start = event
            elif event.get("event") == "epoch":
                epochs.append(event)
    if start is None or not epochs:
        raise SystemExit(f"{path}: no run_start or no epoch event (did the run fail?)")
    return start, epochs[-1]


def bound(start, epoch, bandwidth_bytes_per_s, alpha_s, burst_s, cpu_cores):
    """The bound for one epoch; see bench/BOUNDS.md for each term."""
    config = start["config"]
    architecture, overlap = config["architecture"], bool(config["overlap"])
    w, k, W = start["workers"], start["servers"], start["parameter_bytes"]
    iterations = epoch["iterations"]
    measured_s = epoch["wall_s"] / iterations
    link_bytes, latencies = busiest_link(architecture, w, k, W)
    link_s = link_bytes / bandwidth_bytes_per_s
    # Exchange window after the gradient exists: the dependent latencies, or
    # the bytes less what the link's token bucket saved up while idle.
    window_s = max(latencies * alpha_s, link_s - burst_s, 0.0)
    ranks = []
    schedule_s = 0.0
    cpu_floor_s = 0.0
    for r in epoch["ranks"]:
        forward = r["forward_s"] / iterations
        backward = r["backward_s"] / iterations
        if "cpu_s" not in r:
            raise SystemExit("epoch event has no cpu_s per rank: the trainer is older than the bound needs")
        cpu = r["cpu_s"] / iterations
        if r["role"] == "worker":
            if overlap:
                # The exchange runs behind backward and behind the next
                # forward pass, which reads each block of fc1 as it arrives.
                rank_bound = max(forward + backward + alpha_s, window_s)
            else:
                rank_bound = forward + backward + window_s
            schedule_s = max(schedule_s, rank_bound)
        if cpu_cores > 0:
            # The epoch may begin with up to one period's quota unspent.
            cpu_floor_s = max(cpu_floor_s, (r["cpu_s"] / cpu_cores - cpu_period_s(cpu_cores)) / iterations)
        ranks.append({"rank": r["rank"], "role": r["role"], "forward_s": forward, "backward_s": backward,
                      "exchange_s": r["exchange_s"] / iterations, "update_s": r["update_s"] / iterations,
                      "cpu_s": cpu, "cpu_share": cpu / measured_s,
                      "bytes_sent": r["bytes_sent"] / iterations,
                      "bytes_received": r["bytes_received"] / iterations,
                      # Share of the epoch's quota periods in which the host
                      # ran out of its quota; None without a quota, or from
                      # a trainer that does not report it.
                      "throttled_share": (r["throttled_periods"] / r["quota_periods"]
                                          if r.get("quota_periods") else None)})
    # Over the epoch the bucket gives at most one burst beyond the rate.
    rate_s = link_s - burst_s / iterations
    terms = {"schedule": schedule_s, "link rate": rate_s, "cpu quota": cpu_floor_s}
    binding = max(terms, key=terms.get)
    bound_s = terms[binding]
    whole_s = whole_shards_s(architecture, overlap, config.get("partition_bytes", 0), w, k, W,
                             bandwidth_bytes_per_s, alpha_s, burst_s, ranks)
    samples = iterations * config["batch_size"] * w
    return {
        "architecture": architecture, "servers": k, "overlap": overlap, "workers": w,
        "partition_bytes": config.get("partition_bytes", 0), "pulls_in_turn": config.get("pulls_in_turn", False),
        "iterations": iterations, "measured_s": measured_s,
        "throughput_samples_per_s": samples / epoch["wall_s"],
        "bound_s": bound_s, "bound_samples_per_s": config["batch_size"] * w / bound_s,
        "ratio": bound_s / measured_s, "binding": binding,
        "link_bytes": link_bytes, "link_s": link_s, "window_s": window_s,
        "latencies": latencies, "terms": terms, "ranks": ranks,
        "whole_shards_s": whole_s,
    }


def whole_shards_s(architecture, overlap, partition_bytes, w, k, W, bandwidth_bytes_per_s, alpha_s, burst_s,
                   ranks):
    """A parameter server that answers its whole shard only once every
    worker's gradient for it is in (no parts, no overlap) cannot beat
    (w + 1) W / (k B) + fwd + bwd per iteration (bench/BOUNDS.md): its w
    pulls of W/k leave through one link, and the worker served last then
    computes and pushes its next W/k before the server can answer again.
    None where the scheme is another; the compute is the fastest worker's,
    since any of them may be served last."""
    if architecture != "ps" or overlap or partition_bytes:
        return None
    shard_s = W / k / bandwidth_bytes_per_s
    compute_s = min(r["forward_s"] + r["backward_s"] for r in ranks if r["role"] == "worker")
    return max(w * shard_s - burst_s, alpha_s) + compute_s + max(shard_s - burst_s, alpha_s)


def cpu_period_s(cores):
    """The quota's period, as `cluster up` sets it (CpuPeriodUs in
    orchestrator/launch/cluster/cgroup.cc): 10 ms, longer when the quota
    would fall under 1 ms."""
    if cores * 0.01 >= 0.001:
        return 0.01
    return min(0.1, math.ceil(0.001 / cores * 1e6) / 1e6)


def config_label(result):
    name = result["architecture"]
    if name == "ps":
        name += str(result["servers"])
    if name == "ddp":
        return name
    if result.get("partition_bytes"):
        name += f"@{result['partition_bytes'] // 1024}k"
    if result.get("pulls_in_turn"):
        name += "+turn"
    return name + (" +ov" if result["overlap"] else "")


def median(values):
    return statistics.median(values)


def table(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                result = json.loads(line)
                rows.setdefault(config_label(result), []).append(result)
    ddp = rows.get("ddp")
    ddp_throughput = median([r["throughput_samples_per_s"] for r in ddp]) if ddp else None
    beaten = []
    print(f"{'config':<10} {'reps':>4} {'samples/s':>10} {'ms/it':>7} {'bound ms':>9} {'bound/s':>9} "
          f"{'/bound':>7} {'max':>6} {'/nocpu':>7} {'/whole':>7} {'/DDP':>6}  binding; per it: fwd+bwd, cpu (max rank); "
          f"periods throttled (most throttled host)")
    for label, results in rows.items():
        throughput = median([r["throughput_samples_per_s"] for r in results])
        versus_ddp = f"{throughput / ddp_throughput:5.2f}x" if ddp_throughput else "     -"
        if label == "ddp":
            print(f"{label:<10} {len(results):>4} {throughput:>10.0f} "
                  f"{median([r['measured_s'] for r in results]) * 1e3:>7.2f} {'-':>9} {'-':>9} "
                  f"{'-':>7} {'-':>6} {'-':>7} {'-':>7} {versus_ddp:>6}")
            continue
        ratios = [r["ratio"] for r in results]
        bindings = sorted({r["binding"] for r in results})
        compute = median([max(x["forward_s"] + x["backward_s"] for x in r["ranks"]) for r in results])
        cpu = median([max(x["cpu_s"] for x in r["ranks"]) for r in results])
        throttled = [max(x["throttled_share"] for x in r["ranks"]) for r in results
                     if all(x.get("throttled_share") is not None for x in r["ranks"])]
        throttled_text = f"{median(throttled) * 100:.0f}%" if throttled else "-"
        # Whole shards: the bound with that schedule's term beside the others.
        wholes = [max(r["whole_shards_s"], r["bound_s"]) / r["measured_s"] for r in results if r.get("whole_shards_s")]
        versus_whole = f"{median(wholes) * 100:>6.1f}%" if wholes else f"{'-':>7}"
        print(f"{label:<10} {len(results):>4} {throughput:>10.0f} "
              f"{median([r['measured_s'] for r in results]) * 1e3:>7.2f} "
              f"{median([r['bound_s'] for r in results]) * 1e3:>9.2f} "
              f"{median([r['bound_samples_per_s'] for r in results]):>9.0f} "
              f"{median(ratios) * 100:>6.1f}% {max(ratios) * 100:>5.1f}% "
              f"{median([max(r['terms']['schedule'], r['terms']['link rate']) / r['measured_s'] for r in results]) * 100:>6.1f}% "
              f"{versus_whole} {versus_ddp:>6}  "
              f"{'/'.join(bindings)}; {compute * 1e3:.2f} ms, {cpu * 1e3:.2f} ms; {throttled_text}")
        beaten += [(label, r) for r in results if r["ratio"] > 1]
        beaten += [(label + " (whole shards)", r) for r in results
                   if r.get("whole_shards_s") and r["whole_shards_s"] > r["measured_s"]]
    for label, r in beaten:
        print(f"WRONG BOUND: a {label} run took {r['measured_s'] * 1e3:.3f} ms/it, below its bound "
              f"{r['bound_s'] * 1e3:.3f} ms/it; terms {json.dumps(r['terms'])}; ranks {json.dumps(r['ranks'])}",
              file=sys.stderr)
    return 1 if beaten else 0


def self_test():
    W = 419752
    def rank(r, role, fwd, bwd, cpu):
        return {"rank": r, "role": role, "forward_s": fwd, "backward_s": bwd, "exchange_s": 0.5,
                "update_s": 0.01, "cpu_s": cpu, "bytes_sent": 0, "bytes_received": 0}
    start = {"config": {"architecture": "ring", "overlap": False, "batch_size": 100},
             "workers": 4, "servers": 0, "parameter_bytes": W}
    epoch = {"iterations": 100, "wall_s": 0.7,
             "ranks": [rank(r, "worker", 0.02, 0.2, 0.2) for r in range(4)]}
    # ring: 1.5 W = 629,628 B at 100 MB/s = 6.29628 ms; window 6.29628 - 1 = 5.29628 ms;
    # schedule 0.2 + 2 + 5.29628 = 7.49628 ms per iteration.
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    checks = [(b["link_s"], 6.29628e-3), (b["bound_s"], 7.49628e-3), (b["ratio"], 7.49628 / 7)]
    assert b["binding"] == "schedule", b["binding"]
    assert all(r["throttled_share"] is None for r in b["ranks"])
    epoch["ranks"][3].update(quota_periods=70, throttled_periods=14, throttled_s=0.03)
    checks.append((bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)["ranks"][3]["throttled_share"], 0.2))
    # Overlap: the schedule gives max(0.2 + 2 + 0.01, 5.29628) ms, below what
    # the link's rate allows over 100 iterations: 6.29628 - 1/100 ms.
    start["config"]["overlap"] = True
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    assert b["binding"] == "link rate" and abs(b["terms"]["schedule"] - 5.29628e-3) < 1e-12, b["terms"]
    checks.append((b["bound_s"], 6.28628e-3))
    # CPU-bound: 0.35 s of CPU over 100 iterations at 0.4 core, less one
    # 10 ms period: (0.875 - 0.01) / 100 = 8.65 ms per iteration.
    epoch["ranks"][2]["cpu_s"] = 0.35
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    assert b["binding"] == "cpu quota", b["binding"]
    checks.append((b["bound_s"], 8.65e-3))
    checks.append((cpu_period_s(0.05), 0.02))
    # ps(1), 4 workers: 4 W into the server, the rate term binds (no compute).
    start["config"].update(architecture="ps", overlap=False)
    start["servers"] = 1
    epoch["ranks"] = [rank(r, "worker", 0.0, 0.0, 0.0) for r in range(4)] + [rank(4, "server", 0, 0, 0)]
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    assert b["binding"] == "link rate", b["binding"]
    checks.append((b["bound_s"], 4 * W / 100e6 - 1e-3 / 100))
    assert busiest_link("ps", 4, 4, W) == (W, 2) and busiest_link("p2p", 4, 0, W) == (1.5 * W, 2)
    # Whole shards: the server's 4 pulls of W (4.19752 ms at 100 MB/s) less
    # one burst, the fastest worker's compute, then its push of W less one
    # burst: 15.79008 + 0.3 + 3.19752 ms.
    epoch["ranks"][1].update(forward_s=0.01, backward_s=0.02)
    epoch["ranks"][2].update(forward_s=0.03, backward_s=0.05)
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    checks.append((b["whole_shards_s"], (4 * W / 100e6 - 1e-3) + 0.0 + (W / 100e6 - 1e-3)))
    epoch["ranks"] = [rank(r, "worker", 0.01 * (r + 1), 0.02, 0.0) for r in range(4)] + [rank(4, "server", 0, 0, 0)]
    b = bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)
    checks.append((b["whole_shards_s"], (4 * W / 100e6 - 1e-3) + 0.3e-3 + (W / 100e6 - 1e-3)))
    start["config"]["partition_bytes"] = 16384
    assert bound(start, epoch, 100e6, 10e-6, 1e-3, 0.4)["whole_shards_s"] is None
    for got, want in checks:
        assert abs(got - want) < 1e-12 + 1e-9 * want, (got, want)
    assert config_label({"architecture": "ps", "servers": 1, "overlap": False, "pulls_in_turn": True}) == "ps1+turn"
    assert config_label({"architecture": "ps", "servers": 1, "overlap": False}) == "ps1"
    beta, payload = link_terms("qdisc tbf 10: root refcnt 3 rate 1Gbit burst 125000b lat 200ms")
    assert abs(beta - 1e-3) < 1e-12 and abs(payload - 119.5508587e6) < 1, (beta, payload)
    beta, payload = link_terms("qdisc tbf 10: root refcnt 3 rate 100Mbit burst 16Kb lat 200ms")
    assert abs(beta - 16384 * 8 / 1e8) < 1e-12 and abs(payload - 11.95508587e6) < 1, (beta, payload)
    print("self-test passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("bound")
    p.add_argument("events")
    p.add_argument("--bandwidth-bytes-per-s", type=float, required=True, help="B: payload rate of one link direction")
    p.add_argument("--alpha-s", type=float, required=True, help="alpha: latency of one message")
    p.add_argument("--burst-s", type=float, required=True, help="beta: the links' token bucket, seconds at the rate")
    p.add_argument("--cpu", type=float, required=True, help="each host's CPU share in cores (0 = uncapped)")
    p.add_argument("--label", default="")
    p = commands.add_parser("ddp")
    p.add_argument("result")
    p.add_argument("--label", default="")
    p = commands.add_parser("line", help="one line of a result (JSON on standard input)")
    p.add_argument("--prefix", default="")
    p = commands.add_parser("table")
    p.add_argument("results")
    p = commands.add_parser("link")
    p.add_argument("tc_line")
    commands.add_parser("self-test")
    args = parser.parse_args()
    if args.command == "bound":
        start, epoch = read_events(args.events)
        result = bound(start, epoch, args.bandwidth_bytes_per_s, args.alpha_s, args.burst_s, args.cpu)
        result["label"] = args.label
        print(json.dumps(result))
    elif args.command == "ddp":
        with open(args.result) as f:
            peer = json.loads(f.readline())
        if "throughput_samples_per_s" not in peer:
            raise SystemExit(f"{args.result}: not rank 0's line of bench/cluster/ddp_peer.py")
        print(json.dumps({"architecture": "ddp", "servers": 0, "overlap": True, "label": args.label,
                          "throughput_samples_per_s": peer["throughput_samples_per_s"],
                          "measured_s": peer["wall_s"] / peer["iterations"]}))
    elif args.command == "line":
        r = json.loads(sys.stdin.readline())
        text = f"{args.prefix}{config_label(r):<9} {r['throughput_samples_per_s']:>8.0f} samples/s, " \
               f"{r['measured_s'] * 1e3:.2f} ms/it"
        if "bound_s" in r:
            text += f", bound {r['bound_s'] * 1e3:.2f} ms ({r['binding']}): {r['ratio'] * 100:.1f}%"
        print(text)
    elif args.command == "table":
        return table(args.results)
    elif args.command == "link":
        print("%.9g %.9g" % link_terms(args.tc_line))
    else:
        return self_test()
    return 0


if __name__ == "__main__":
    sys.exit(main())
