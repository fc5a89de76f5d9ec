#!/usr/bin/env bash
# The report end to end through the command line: a tiny real sweep into a
# fresh SQLite file, then `dmlbench report` from that file alone — every
# table and figure, the real trainer's per-iteration times, the same bytes
# twice, the database unchanged, and the exact message for a database that
# is not there.
set -euo pipefail
dmlbench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$dmlbench" run "$source_dir/tests/reports/tiny.toml" --db "$work/results.db" >"$work/run.log" 2>&1 \
  || { cat "$work/run.log"; exit 1; }
before=$(sha256sum <"$work/results.db")
"$dmlbench" --db "$work/results.db" report "$work/report" >"$work/report.log"
for f in index.html report.md tables/factors.csv tables/configurations.md tables/configurations.tex \
         tables/speedup.csv figures/throughput.svg figures/throughput.png figures/iteration_series.png; do
  [[ -s $work/report/$f ]] || { echo "missing or empty: $f"; cat "$work/report.log"; exit 1; }
done
# 4 configurations: a header line plus one CSV line each.
rows=$(($(wc -l < "$work/report/tables/configurations.csv") - 1))
[[ $rows -eq 4 ]] || { echo "configurations.csv has $rows rows, expected 4"; cat "$work/report/tables/configurations.csv"; exit 1; }
grep -q '^ring w=2 b=20,validation,1,' "$work/report/tables/configurations.csv" \
  || { echo "no ring w=2 row"; cat "$work/report/tables/configurations.csv"; exit 1; }
grep -q '^ps k=1 w=1 b=20,calibration,1,' "$work/report/tables/configurations.csv" \
  || { echo "no ps k=1 w=1 row"; exit 1; }
# Each configuration has one run: its epoch time alone, no interval of one value.
awk -F, 'NR > 1 && $4 !~ /^[0-9.e-]+$/ { print "row " NR ": \"" $4 "\" is not one time"; bad = 1 } END { exit bad }' \
  "$work/report/tables/configurations.csv" || { cat "$work/report/tables/configurations.csv"; exit 1; }
# The iteration series: ring w=2 and ps k=1 w=2, each 2 epochs of 5
# iterations as the trainer timed them, the first epoch's marked warm-up.
series=$work/report/figures/iteration_series.iterations.tsv
counts=$(awk -F'\t' '!/^#/ && NF { n[$3 ", warm-up " $7]++ } END { for (k in n) print k ":", n[k] }' "$series" \
  | sort | tr '\n' ';')
[[ $counts == "ps k=1 w=2 b=20, warm-up 0: 5;ps k=1 w=2 b=20, warm-up 1: 5;ring w=2 b=20, warm-up 0: 5;ring w=2 b=20, warm-up 1: 5;" ]] \
  || { echo "iteration series per scheme and warm-up: $counts"; cat "$series"; exit 1; }
grep -q 'No per-iteration times' "$work/report/index.html" && { echo "the page says the iteration times are missing"; exit 1; }
grep -q 'not shown: parameters: No model fit in this database' "$work/report.log" \
  || { echo "the missing fit is not reported"; cat "$work/report.log"; exit 1; }

"$dmlbench" --db "$work/results.db" report "$work/again" >/dev/null
diff -r "$work/report" "$work/again" || { echo "two reports of one database differ"; exit 1; }
[[ $before == $(sha256sum <"$work/results.db") ]] || { echo "database changed"; exit 1; }

# Scoped: the runs of ring alone, said at the top of the page and on the
# command's output; every table holds them and no other.
"$dmlbench" --db "$work/results.db" report --experiment report-test --only architecture=ring "$work/ring" \
  >"$work/ring.log"
grep -qF 'covering 2 of the 4 runs: experiment report-test, --only architecture=ring' "$work/ring.log" \
  || { echo "the scope is not said:"; cat "$work/ring.log"; exit 1; }
grep -qF '<p class="scope">Runs covered: 2 of the 4 runs: experiment report-test, --only architecture=ring.</p>' \
  "$work/ring/index.html" || { echo "the page does not say its scope"; exit 1; }
[[ $(cut -d, -f1 "$work/ring/tables/configurations.csv" | tail -n +2 | tr '\n' ';') == "ring w=1 b=20;ring w=2 b=20;" ]] \
  || { echo "the scoped configurations:"; cat "$work/ring/tables/configurations.csv"; exit 1; }
grep -q '^ps' "$work/ring/figures/throughput.measured.tsv" && { echo "a ps series in the ring report"; exit 1; }

# Bad input: the message is exact.
msg=$("$dmlbench" report "$work/results.db" "$work/x" 2>&1) && exit 1
[[ $msg == "dmlbench: error: report takes the database with --db, as every command does: dmlbench --db $work/results.db report $work/x" ]] \
  || { echo "unexpected message: $msg"; exit 1; }
msg=$("$dmlbench" --db "$work/results.db" report --experiment nosuch "$work/x" 2>&1) && exit 1
[[ $msg == "dmlbench: error: --experiment nosuch: no experiment of that name in $work/results.db; it has report-test" ]] \
  || { echo "unexpected message: $msg"; exit 1; }
msg=$("$dmlbench" --db "$work/none.db" report "$work/x" 2>&1) && exit 1
[[ $msg == "dmlbench: error: $work/none.db: no such database (it is created by \`dmlbench run MATRIX\`)" ]] \
  || { echo "unexpected message: $msg"; exit 1; }
echo "report test passed"
