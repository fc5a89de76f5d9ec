#!/usr/bin/env bash
# The trainer's start-up to its first iteration on this machine: RANKS ranks
# (2) under mpirun on a dataset directory, each run one iteration long. For
# each way of loading the data (the IDX files decoded every run; read from a
# dataset cache that an unmeasured first run filled), the trainer runs REPEATS
# times (7) and the table shows the medians, in seconds, of run_end's phases
# (schemas/trainer-events.md) up to the first iteration and their sum:
#   mpi_init      the process's start to MPI_Init's return
#   dataset_load  every rank has its data
#   setup         model, scheme, run_start, the barrier before the epoch
#   start-up      the three together: the process's start to the first iteration
#   mpirun        the whole mpirun command, its own start and teardown included
# Run it inside a cgroup with a CPU quota to see start-up at a CPU share.
#
# Usage: bench/local/bench_trainer_startup.sh [BUILD_DIR] [DATASET_DIR]
#   env: REPEATS (7), RANKS (2), MPIRUN_ARGS (extra mpirun options)
set -euo pipefail

BUILD_DIR=${1:-build}
DATASET=${2:-/usr/share/datasets/fashion-mnist}
TRAINER=$BUILD_DIR/trainer/dmlbench-trainer
REPEATS=${REPEATS:-7}
RANKS=${RANKS:-2}

command -v jq >/dev/null || { echo "bench_trainer_startup.sh: needs jq (apt-get install jq)" >&2; exit 1; }
[ -x "$TRAINER" ] || { echo "bench_trainer_startup.sh: no trainer at $TRAINER; build it first" >&2; exit 1; }
[ -d "$DATASET" ] || { echo "bench_trainer_startup.sh: no dataset directory $DATASET" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m 700 "$work/cache"

# One run; prints "mpi_init dataset_load setup start-up mpirun" in seconds.
run_once() {
  local start end
  start=$(date +%s.%N)
  mpirun --oversubscribe ${MPIRUN_ARGS:-} -np "$RANKS" "$TRAINER" --dataset "$DATASET" "$@" \
    --epochs 1 --max-iterations-per-epoch 1 --no-evaluate --quiet --events "$work/events.jsonl"
  end=$(date +%s.%N)
  jq -r --arg wall "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" 'select(.event == "run_end") | .phases as $p |
    [$p.mpi_init_s, $p.dataset_load_s, $p.setup_s, $p.mpi_init_s + $p.dataset_load_s + $p.setup_s,
     ($wall | tonumber)] | map(tostring) | join(" ")' "$work/events.jsonl"
}

# Median of each column over REPEATS runs, to the millisecond.
measure() {
  for _ in $(seq "$REPEATS"); do run_once "$@"; done |
    awk -f "$(dirname "$0")/../column_medians.awk" | awk '{ for (i = 1; i <= NF; ++i) $i = sprintf("%.3f", $i); print }'
}

echo "trainer start-up to the first iteration: $RANKS ranks, $DATASET, medians of $REPEATS runs (s)"
printf '%-22s %9s %13s %7s %9s %7s\n' data mpi_init dataset_load setup start-up mpirun
printf '%-22s %9s %13s %7s %9s %7s\n' "decoded every run" $(measure)
run_once --dataset-cache "$work/cache" >/dev/null   # fills the cache, unmeasured
printf '%-22s %9s %13s %7s %9s %7s\n' "dataset cache" $(measure --dataset-cache "$work/cache")
