#!/usr/bin/env bash
# The committed report of `model recommend` checked on the emulated cluster
# (reports/recommend-validation/) is what the last command of
# scripts/recommend-validation regenerates from the committed database alone
#   dmlbench --db reports/data/recommend-validation.db report \
#     --definition reports/recommend-validation.toml reports/recommend-validation
# every file, every byte; the database stays as it was; and its summary
# states a coverage and Kendall's tau.
# NAME (default recommend-validation) names another question's database
# and report: reports/data/NAME.db, reports/NAME.
#   recommend_validation_report_test.sh DMLBENCH SOURCE_DIR [NAME]
set -euo pipefail
dmlbench=$1 source_dir=$2 name=${3:-recommend-validation}
db=$source_dir/reports/data/$name.db
committed=$source_dir/reports/$name
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[[ -e $db ]] || { echo "$db is missing: configuring the build expands it from $db.tar.xz (reports/README.md)"; exit 1; }
before=$(sha256sum <"$db")
"$dmlbench" --db "$db" report --definition "$source_dir/reports/recommend-validation.toml" "$work/out" >"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
[[ $(sha256sum <"$db") == "$before" ]] || { echo "dmlbench report changed $db"; exit 1; }
if ! diff -r "$committed" "$work/out" >"$work/diff"; then
  echo "the committed report differs from what scripts/recommend-validation's report command regenerates:"
  head -40 "$work/diff"
  exit 1
fi
# The summary's one row: configurations, runs, fit, level, inside, coverage,
# tau of the epoch time, tau of the cost, ...; each of them a number.
awk -F, 'NR == 2 { for (i = 1; i <= 8; i++) if ($i !~ /^-?[0-9.]+$/) { print "column " i ": \"" $i "\""; bad = 1 } n++ }
         END { if (n != 1) { print "no summary row"; bad = 1 } exit bad }' "$work/out/tables/recommendation_summary.csv"
echo "committed report reproduced: $(find "$committed" -type f | wc -l) files; $(sed -n 2p "$work/out/tables/recommendation_summary.csv")"
