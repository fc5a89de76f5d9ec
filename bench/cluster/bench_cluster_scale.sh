#!/usr/bin/env bash
# Provisioning and launch on many hosts: brings up an emulated cluster of
# HOSTS hosts at a small CPU share and runs bench_cluster_scale on it (its
# opening comment says what it times). Needs root.
#   bench/cluster/bench_cluster_scale.sh path/to/dmlbench path/to/dmlbench-trainer \
#       path/to/bench_cluster_scale[:path/to/another/bench_cluster_scale] [DATASET_DIR]
#   env: HOSTS (64), REPS (5), CPU (cores per host; default 0.9 * cores / hosts,
#   down to the hundredth: `cluster up` gives hosts at most 0.9 of the cores),
#   ROUNDS (1): with two builds' bench_cluster_scale separated by ':', each
#   is run ROUNDS times in turn on the one cluster (A/B side by side)
set -euo pipefail
DMLBENCH=$1
TRAINER=$2
IFS=: read -r -a SCALE <<< "$3"
DATASET=${4:-}
PYTHON=${PYTHON:-python3}
HOSTS=${HOSTS:-64}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-1}
CPU=${CPU:-$(awk -v c="$(nproc)" -v h="$HOSTS" 'BEGIN { print int(90 * c / h) / 100 }')}
# shellcheck source=cluster_lib.sh
source "$(dirname "$0")/cluster_lib.sh"

start=$(date +%s.%N)
cluster_up sc "$HOSTS" 1gbit "$CPU"
printf 'cluster up: %d hosts of %s core in %.1f s; load average %s\n' "$HOSTS" "$CPU" \
  "$(echo "$(date +%s.%N) - $start" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= ROUNDS; ++round)); do
  for scale in "${SCALE[@]}"; do
    [[ ${#SCALE[@]} -gt 1 || $ROUNDS -gt 1 ]] && echo "== round $round: $scale"
    "$scale" --state-dir "$state" --trainer "$TRAINER" ${DATASET:+--dataset "$DATASET"} --reps "$REPS"
  done
done
