#!/usr/bin/env bash
# Our trainer against PyTorch DDP (gloo) on the 4-host cluster of the first
# comparisons: 4 hosts, 1 Gbit/s, 0.4 core each. bench/cluster/bench_cluster_bounds.sh
# does the work (each scheme against its own lower bound, bench/BOUNDS.md);
# this runs it with that sizing, where ps (which needs 5 to 8 hosts) does
# not fit. Any of its environment variables may be given.
#   bench/cluster/bench_cluster_vs_ddp.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
set -euo pipefail
HOSTS=${HOSTS:-4} CPU=${CPU:-0.4} CONFIGS=${CONFIGS:-ring mpi p2p ddp} \
  exec "$(dirname "$0")/bench_cluster_bounds.sh" "$@"
