#!/usr/bin/env bash
# `dmlbench model fit` + `dmlbench model validate` on the committed study's
# database (a copy: fits and predictions are added to it), REPS times;
# prints the median wall time of each and of both together.
# Target (issue: performance model): fit + validate <= 2 s on this machine.
# Usage: bench/local/bench_model.sh [BUILD_DIR] [DATABASE] [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
DB=${2:-reports/data/paper-reproduction.db}
REPS=${3:-7}
DMLBENCH=$BUILD/orchestrator/dmlbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { awk -f bench/column_medians.awk; }
now() { date +%s.%N; }

: > "$work/fit"; : > "$work/validate"; : > "$work/both"
for ((i = 1; i <= REPS; i++)); do
  cp "$DB" "$work/copy.db"
  t0=$(now); "$DMLBENCH" --db "$work/copy.db" model fit > /dev/null
  t1=$(now); "$DMLBENCH" --db "$work/copy.db" model validate > /dev/null
  t2=$(now)
  awk "BEGIN {print $t1 - $t0}" >> "$work/fit"
  awk "BEGIN {print $t2 - $t1}" >> "$work/validate"
  awk "BEGIN {print $t2 - $t0}" >> "$work/both"
done
printf 'model fit (all models)        median %.3f s over %d runs\n' "$(median < "$work/fit")" "$REPS"
printf 'model validate (all models)   median %.3f s\n' "$(median < "$work/validate")"
printf 'fit + validate                median %.3f s (target <= 2 s)\n' "$(median < "$work/both")"
