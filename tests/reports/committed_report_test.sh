#!/usr/bin/env bash
# The committed report is what docs/report.md says regenerates it: the command
#   dmlbench --db reports/data/paper-reproduction.db report reports/paper-reproduction/
# run on the committed database must produce exactly the committed files
# (no file more, none less, every byte the same), and must leave the
# database as it was. The measured throughput of every configuration must
# also stay below the bound line drawn beside it.
#   committed_report_test.sh DMLBENCH SOURCE_DIR
# With DATABASE (relative to SOURCE_DIR) a committed database without a
# committed report (the study run again on another machine): its report
# must be generated, leave the database as it was, and keep every measured
# configuration below its bound.
#   committed_report_test.sh DMLBENCH SOURCE_DIR DATABASE
# With SERIES as well, the throughput figure must also draw that series
# (configurations that differ only in a parameter are never one).
#   committed_report_test.sh DMLBENCH SOURCE_DIR DATABASE SERIES
set -euo pipefail
dmlbench=$1 source_dir=$2
db=$source_dir/${3:-reports/data/paper-reproduction.db}
committed=$source_dir/reports/paper-reproduction
[[ -z ${3:-} ]] || committed=
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[[ -e $db ]] || { echo "$db is missing: configuring the build expands it from $db.tar.xz (reports/README.md)"; exit 1; }
before=$(sha256sum <"$db")
"$dmlbench" --db "$db" report "$work/out" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
[[ $(sha256sum <"$db") == "$before" ]] || { echo "dmlbench report changed $db"; exit 1; }

if [[ -n $committed ]] && ! diff -r "$committed" "$work/out" >"$work/diff"; then
  echo "the committed report differs from what the command of docs/report.md regenerates:"
  head -40 "$work/diff"
  echo "(regenerate it with: dmlbench --db reports/data/paper-reproduction.db report reports/paper-reproduction/;"
  echo " or, if the database was changed since it was expanded (a model fit or validate writes into it),"
  echo " remove reports/data/paper-reproduction.db and configure the build again to take the committed one)"
  exit 1
fi

# Measured median throughput against the bound, configuration by
# configuration (series and workers), from the figure's own data files.
awk -F'\t' '
  NR == FNR { if ($1 !~ /^#/) bound[$1 "|" $4] = $5; next }
  $1 !~ /^#/ {
    key = $1 "|" $6
    if (!(key in bound)) { print "no bound for " $1 " w=" $6; bad = 1; next }
    if ($7 > bound[key]) { printf "%s w=%s: %.0f samples/s beats its bound %.0f\n", $1, $6, $7, bound[key]; bad = 1 }
    n++
  }
  END { if (n == 0) { print "no measured configuration"; bad = 1 } exit bad }
' "$work/out/figures/throughput.bound.tsv" "$work/out/figures/throughput.measured.tsv"
# A database older than a section's columns (these are schema 13, before
# the prediction intervals) loses that section alone: its predictions still
# give the error table and the predicted-against-measured figure.
if [[ -z $committed ]] && (($(sqlite3 -readonly "$db" 'SELECT count(*) FROM predictions') > 0)); then
  for shown in tables/errors.md figures/predicted_vs_measured.svg; do
    [[ -e $work/out/$shown ]] || { echo "the report of $db has predictions but no $shown:"; cat "$work/log"; exit 1; }
  done
fi
if [[ -n ${4:-} ]] && ! cut -f1 "$work/out/figures/throughput.measured.tsv" | grep -qxF "$4"; then
  echo "the throughput figure of $db has no series \"$4\"; it has:"
  cut -f1 "$work/out/figures/throughput.measured.tsv" | grep -v '^#' | sort -u
  exit 1
fi
if [[ -n $committed ]]; then
  echo "committed report reproduced: $(find "$committed" -type f | wc -l) files"
else
  echo "report of $db generated: every measured configuration below its bound"
fi
