#!/usr/bin/env bash
# Runs a tiny sweep into a fresh SQLite file, then regenerates the report
# from that database alone and checks every table and figure is there and
# holds the runs (and that an unknown split is refused).
set -euo pipefail
dmlbench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$dmlbench" run "$source_dir/tests/reports/tiny.toml" --db "$work/results.db" >"$work/run.log" 2>&1 \
  || { cat "$work/run.log"; exit 1; }
"$source_dir/reports/generate" "$work/results.db" "$work/report"
for f in summary.md summary.csv summary.tex iterations.md iterations.csv iterations.tex \
         failures.md epoch_time.png throughput.png iteration_phases.png index.html; do
  [[ -s $work/report/$f ]] || { echo "missing or empty: $f"; exit 1; }
done
# 4 configurations: a header line plus one CSV line each.
rows=$(($(wc -l < "$work/report/summary.csv") - 1))
[[ $rows -eq 4 ]] || { echo "summary.csv has $rows rows, expected 4"; cat "$work/report/summary.csv"; exit 1; }
grep -q '^ring,0,2,20,' "$work/report/summary.csv" || { echo "no ring w=2 row"; exit 1; }
grep -q '^ps,1,2,20,' "$work/report/summary.csv" || { echo "no ps k=1 w=2 row"; exit 1; }

# The calibration split holds only the 1-worker runs.
"$source_dir/reports/generate" --split calibration "$work/results.db" "$work/cal" >/dev/null
if grep -q '^[a-z0-9]*,[0-9]*,2,' "$work/cal/summary.csv"; then
  echo "calibration report holds a 2-worker run"; exit 1
fi

# The generator never writes to the database.
before=$(sha256sum "$work/results.db")
"$source_dir/reports/generate" "$work/results.db" "$work/again" >/dev/null
[[ $before == $(sha256sum "$work/results.db") ]] || { echo "database changed"; exit 1; }

# Bad input: the message is exact.
msg=$("$source_dir/reports/generate" --split training "$work/results.db" "$work/x" 2>&1) && exit 1
[[ $msg == "reports/generate: --split must be calibration, validation or all, got 'training'" ]] \
  || { echo "unexpected message: $msg"; exit 1; }
msg=$("$source_dir/reports/generate" "$work/none.db" "$work/x" 2>&1) && exit 1
[[ $msg == "reports/generate: $work/none.db: no such database" ]] || { echo "unexpected message: $msg"; exit 1; }
echo "report test passed"
