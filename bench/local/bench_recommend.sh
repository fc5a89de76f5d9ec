#!/usr/bin/env bash
# `dmlbench model recommend` of 10,000 candidates on the committed study's
# database with the emulated cluster's catalog: 4 types x 2,500
# configurations (ring, mpi, p2p, and ps with 1 and 2 servers; 1-50
# workers; 10 batch sizes), the whole command as a user runs it, REPS
# times. Prints the median wall and CPU (user + system) seconds of the
# table, and of --json, which writes every candidate.
# Target (issue: recommend a cluster): the table <= 1 s.
# Usage: bench/local/bench_recommend.sh [BUILD_DIR] [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
REPS=${2:-11}
DMLBENCH=$BUILD/orchestrator/dmlbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { awk -f bench/column_medians.awk; }
search=(--db reports/data/paper-reproduction.db model recommend
        --catalog experiments/instances/emulated-cluster.toml --epochs 10 --deadline 30m
        --workers "$(seq -s, 1 50)" --servers 1,2 --batch 10,20,50,100,150,200,250,300,400,500)

# The search is the one stated above: its first line after the header counts it.
"$DMLBENCH" "${search[@]}" > "$work/table"
grep -q '^10000 candidates ' "$work/table" || { echo "bench_recommend: not 10,000 candidates:" >&2; head -3 "$work/table" >&2; exit 1; }

TIMEFORMAT='%R %U %S'
: > "$work/text"; : > "$work/json"
for ((i = 1; i <= REPS; i++)); do
  { time "$DMLBENCH" "${search[@]}" > /dev/null; } 2>> "$work/text"
  { time "$DMLBENCH" "${search[@]}" --json > /dev/null; } 2>> "$work/json"
done
summary() { awk '{print $1, $2 + $3}' "$1" | median; }
read -r text_wall text_cpu < <(summary "$work/text")
read -r json_wall json_cpu < <(summary "$work/json")
printf 'recommend, 10,000 candidates, the table   median %.3f s wall, %.3f s CPU over %d runs (target <= 1 s)\n' \
  "$text_wall" "$text_cpu" "$REPS"
printf 'recommend, 10,000 candidates, --json      median %.3f s wall, %.3f s CPU\n' "$json_wall" "$json_cpu"
