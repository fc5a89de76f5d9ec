#!/usr/bin/env bash
# Overlap of communication with the backward pass, per architecture, on this
# machine: 4 workers (ps: plus SERVERS server ranks), 784-128-32-10, local
# batch 100, overlap off and on. For each configuration the trainer runs
# REPEATS times; the table shows medians over runs of per-iteration means
# over workers, in milliseconds:
#   iter      epoch wall time / iterations
#   compute   forward + backward
#   exchange  time in the scheme's calls, update included
#   exposed   part of exchange the worker was blocked
#   comm      time the exchange was in flight, hidden or not
# and per architecture: iter(on) / max(compute(off), exchange(off)).
#
# Usage: bench/local/bench_overlap.sh [BUILD_DIR]
#   env: ITERATIONS (300), REPEATS (3), BUCKET_BYTES (1024: fc3, then fc2
#   and fc1 in 4 row blocks each, 9 buckets), SERVERS (1), DATASET (a directory of IDX files; default a
#   synthetic set of 60,000 samples of the same shape), MPIRUN_ARGS (extra).
set -euo pipefail

BUILD_DIR=${1:-build}
TRAINER=$BUILD_DIR/trainer/dmlbench-trainer
ITERATIONS=${ITERATIONS:-300}
REPEATS=${REPEATS:-3}
BUCKET_BYTES=${BUCKET_BYTES:-1024}
SERVERS=${SERVERS:-1}
WORKERS=4

command -v jq >/dev/null || { echo "bench_overlap.sh: needs jq (apt-get install jq)" >&2; exit 1; }
[ -x "$TRAINER" ] || { echo "bench_overlap.sh: no trainer at $TRAINER; build it first" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if [ -n "${DATASET:-}" ]; then data_args=(--dataset "$DATASET"); else data_args=(--synthetic 60000); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run; prints "iter compute exchange exposed comm ratio" in ms (ratio: the epoch's overlap_ratio).
run_once() {
  local arch=$1 overlap=$2 ranks=$WORKERS extra=()
  if [ "$arch" = ps ]; then ranks=$((WORKERS + SERVERS)); extra=(--servers "$SERVERS"); fi
  if [ "$overlap" = on ]; then extra+=(--overlap); fi
  mpirun --oversubscribe ${MPIRUN_ARGS:-} -np "$ranks" "$TRAINER" --architecture "$arch" \
    "${extra[@]}" --bucket-bytes "$BUCKET_BYTES" "${data_args[@]}" --batch-size 100 \
    --epochs 1 --max-iterations-per-epoch "$ITERATIONS" --no-evaluate --quiet \
    --events "$work/events.jsonl"
  jq -r 'select(.event == "epoch") | .iterations as $n | .phases as $p |
    [1e3 * .wall_s / $n,
     1e3 * ($p.forward.mean_s + $p.backward.mean_s) / $n,
     1e3 * ($p.exchange.mean_s + $p.update.mean_s) / $n,
     1e3 * $p.exposed_comm.mean_s / $n,
     1e3 * $p.comm.mean_s / $n,
     .overlap_ratio] | map(tostring) | join(" ")' "$work/events.jsonl"
}

# Median of each column over REPEATS runs.
measure() {
  for _ in $(seq "$REPEATS"); do run_once "$1" "$2"; done |
    awk -f "$(dirname "$0")/../column_medians.awk"
}

printf '%-5s %-7s %8s %8s %9s %8s %8s %7s\n' arch overlap iter compute exchange exposed comm ratio
summary=()
for arch in ring mpi ps p2p; do
  read -r off_iter off_compute off_exchange off_exposed off_comm off_ratio <<<"$(measure "$arch" off)"
  read -r on_iter on_compute on_exchange on_exposed on_comm on_ratio <<<"$(measure "$arch" on)"
  printf '%-5s %-7s %8.3f %8.3f %9.3f %8.3f %8.3f %7.3f\n' \
    "$arch" off "$off_iter" "$off_compute" "$off_exchange" "$off_exposed" "$off_comm" "$off_ratio" \
    "$arch" on "$on_iter" "$on_compute" "$on_exchange" "$on_exposed" "$on_comm" "$on_ratio"
  summary+=("$(awk -v a="$arch" -v on="$on_iter" -v c="$off_compute" -v e="$off_exchange" \
    'BEGIN { m = (c > e) ? c : e; printf "%-5s iter(on) / max(compute, exchange)(off) = %.3f / %.3f = %.2f", a, on, m, on / m }')")
done
echo
printf '%s\n' "${summary[@]}"
