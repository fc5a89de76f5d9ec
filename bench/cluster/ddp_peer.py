#!/usr/bin/env python3
"""The peer our trainer is compared with: PyTorch DistributedDataParallel
(gloo) training the same 784-128-32-10 MLP with plain SGD, local batch 100,
one thread per rank. One process per rank; bench/cluster/bench_cluster_vs_ddp.sh
starts one on each emulated host. Data is synthetic (like the trainer's
--synthetic), since the data does not change the work per iteration.

Every rank prints one JSON line with its CPU cgroup (so the benchmark can
check that it ran under its host's quota):
  {"peer": "ddp-gloo", "rank": r, "cpu_cgroup": "/..."}
rank 0's line also has "workers", "iterations", "wall_s" and
"throughput_samples_per_s" = n*b*w/t, where t is measured from a barrier after
the warm-up iterations to a barrier after the last one (the slowest rank),
like the trainer's epoch wall_s.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def cpu_cgroup():
    """This process's cgroup for the cpu controller (v1), or its v2 group."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    for _, controllers, path in lines:
        if "cpu" in controllers.split(","):
            return path
    return next((path for hierarchy, _, path in lines if hierarchy == "0"), "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--master", required=True, help="ADDRESS:PORT of rank 0")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warm-up", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--samples", type=int, default=10000)
    args = parser.parse_args()

    torch.set_num_threads(1)
    address, port = args.master.rsplit(":", 1)
    dist.init_process_group("gloo", init_method=f"tcp://{address}:{port}",
                            rank=args.rank, world_size=args.world_size)
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 32), nn.ReLU(), nn.Linear(32, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(1 + args.rank)
    images = torch.rand(args.samples, 784, generator=generator)
    labels = torch.randint(0, 10, (args.samples,), generator=generator)
    batches = args.samples // args.batch_size

    def step(i):
        j = (i % batches) * args.batch_size
        optimizer.zero_grad()
        loss = loss_fn(ddp(images[j:j + args.batch_size]), labels[j:j + args.batch_size])
        loss.backward()
        optimizer.step()

    for i in range(args.warm_up):
        step(i)
    dist.barrier()
    start = time.perf_counter()
    for i in range(args.iterations):
        step(i)
    dist.barrier()
    wall = time.perf_counter() - start
    report = {"peer": "ddp-gloo", "rank": args.rank, "cpu_cgroup": cpu_cgroup()}
    if args.rank == 0:
        samples = args.iterations * args.batch_size * args.world_size
        report.update({"workers": args.world_size, "iterations": args.iterations,
                       "wall_s": wall, "throughput_samples_per_s": samples / wall})
    print(json.dumps(report), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
