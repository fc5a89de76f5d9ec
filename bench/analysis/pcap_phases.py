#!/usr/bin/env python3
"""MPI's allreduce phase by phase, from packet captures of every rank's
host (bench/cluster/bench_mpi_phases.sh).

  pcap_phases.py --workers W --addresses A0,A1,... --events EVENTS.jsonl
                 --bytes-per-s B RANK0.pcap RANK1.pcap ...

Each capture holds the packets of one host's eth0, given in rank order
(rank r runs on the r-th of --addresses, as mpirun -H places them); a
packet counts once, where it left: on its sender's host.
With w > 4 (libnbc folds w - 4 ranks into their partners) every iteration
of the second epoch is cut at rank 1's fold (its half to rank 0, then the
reduced half: about W bytes in one burst) and at rank 0's first byte of the
result back to rank 1. Prints medians in ms and in W/B. Units: seconds,
bytes, bytes per second.
"""
import argparse
import json
import statistics
import struct
import sys

GAP_S = 0.002  # a pause longer than this ends a burst of one flow


def packets(path, address_rank, sender):
    """(time, sender rank, receiver rank, TCP payload bytes) of the IPv4/TCP
    packets with a payload that rank `sender` sent to another rank."""
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return []
        magic = struct.unpack("<I", header[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            raise SystemExit(f"{path}: not a little-endian pcap file")
        fraction = 1e-9 if magic == 0xA1B23C4D else 1e-6
        out = []
        while True:
            record = f.read(16)
            if len(record) < 16:
                break
            seconds, sub, captured, _ = struct.unpack("<IIII", record)
            frame = f.read(captured)
            if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
                continue
            ip = frame[14:]
            ip_header = (ip[0] & 15) * 4
            total = struct.unpack(">H", ip[2:4])[0]
            if len(ip) < ip_header + 13:
                continue
            payload = total - ip_header - (ip[ip_header + 12] >> 4) * 4
            source, dest = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
            if payload > 0 and address_rank.get(source) == sender and dest in address_rank:
                out.append((seconds + sub * fraction, address_rank[source], address_rank[dest], payload))
        return out


def bursts(flow):
    """[start, end, bytes] of each run of packets without a pause over GAP_S."""
    out = []
    for t, _, _, size in flow:
        if out and t - out[-1][1] < GAP_S:
            out[-1][1] = t
            out[-1][2] += size
        else:
            out.append([t, t, size])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--addresses", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--bytes-per-s", type=float, required=True)
    parser.add_argument("captures", nargs="+")
    args = parser.parse_args()
    events = [json.loads(line) for line in open(args.events) if line.startswith("{")]
    start = next(e for e in events if e["event"] == "run_start")
    epochs = [e for e in events if e["event"] == "epoch"]
    W = start["parameter_bytes"]
    unit_ms = W / args.bytes_per_s * 1e3
    steady = epochs[-1]
    iteration_ms = statistics.median(steady["iteration_wall_us"]) / 1e3
    w = args.workers
    line = f"w={w}: iteration {iteration_ms:6.1f} ms = {iteration_ms / unit_ms:.2f} W/B (trainer, median of epoch 2)"
    if w <= 4 or w & (w - 1) == 0:
        print(line + "; no fold")
        return 0
    address_rank = {a: r for r, a in enumerate(args.addresses.split(","))}
    if len(args.captures) != w:
        raise SystemExit(f"w={w}: {len(args.captures)} captures, expected one per rank")
    ordered = sorted(p for rank, path in enumerate(args.captures) for p in packets(path, address_rank, rank))
    folds = [b for b in bursts([p for p in ordered if p[1:3] == (1, 0)]) if b[2] > 0.8 * W]
    results = [p for p in ordered if p[1:3] == (0, 1)]
    rows = []
    for fold, following in zip(folds, folds[1:]):
        back = [p[0] for p in results if fold[1] < p[0] < following[0]]
        if back:
            rows.append((following[0] - fold[0], fold[1] - fold[0], back[0] - fold[1], following[0] - back[0]))
    rows = rows[-steady["iterations"] + 1:]  # the second epoch's
    if not rows:
        raise SystemExit(f"w={w}: no fold found in the captures (rank 1 -> rank 0 bursts of about {W} B)")
    print(line)
    for name, column in (("period", 0), ("fold", 1), ("halving+doubling", 2), ("final", 3)):
        values = [r[column] * 1e3 for r in rows]
        m = statistics.median(values)
        print(f"  {name:<17} {m:7.1f} ms = {m / unit_ms:.2f} W/B  (min {min(values):.1f}, max {max(values):.1f}, "
              f"{len(values)} iterations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
