#!/usr/bin/env bash
# `dmlbench cluster up` of 8 hosts (1 Gbit/s, 0.4 core each, or the share
# that fits: `cluster up` gives hosts at most 0.9 of the cores) and
# `dmlbench cluster down`, timed; prints the median of REPS runs of each.
# Goals: up <= 10 s, down <= 5 s. Needs root.
#   bench/cluster/bench_cluster_updown.sh [path/to/dmlbench]
#   env: REPS (5), HOSTS (8), CPU (cores per host; default the smaller of
#   0.4 and 0.9 * cores / hosts)
set -euo pipefail
DMLBENCH=${1:-build/orchestrator/dmlbench}
REPS=${REPS:-5}
HOSTS=${HOSTS:-8}
CPU=${CPU:-$(awk -v c="$(nproc)" -v h="$HOSTS" 'BEGIN { s = int(90 * c / h) / 100; print (s < 0.4) ? s : 0.4 }')}
name="bu$(( $$ % 10000 ))"
state=$(mktemp -d)
cleanup() { "$DMLBENCH" cluster --name "$name" --state-dir "$state/cluster" down >/dev/null 2>&1 || true; rm -rf "$state"; }
trap cleanup EXIT

median() { awk -f "$(dirname "$0")/../column_medians.awk"; }
now() { date +%s.%N; }

ups=()
downs=()
for ((i = 1; i <= REPS; i++)); do
  t0=$(now)
  "$DMLBENCH" cluster --name "$name" --state-dir "$state/cluster" up --hosts "$HOSTS" \
    --bandwidth 1gbit --cpu "$CPU" >/dev/null
  t1=$(now)
  "$DMLBENCH" cluster --name "$name" --state-dir "$state/cluster" down >/dev/null
  t2=$(now)
  ups+=("$(echo "$t1 - $t0" | bc -l)")
  downs+=("$(echo "$t2 - $t1" | bc -l)")
  printf 'run %d: up %.2f s, down %.2f s\n' "$i" "${ups[-1]}" "${downs[-1]}"
done
up=$(printf '%s\n' "${ups[@]}" | median)
down=$(printf '%s\n' "${downs[@]}" | median)
printf 'cluster up   %d hosts of %s core: median %.2f s of %d (goal <= 10 s)\n' "$HOSTS" "$CPU" "$up" "$REPS"
printf 'cluster down %d hosts: median %.2f s of %d (goal <= 5 s)\n' "$HOSTS" "$down" "$REPS"
