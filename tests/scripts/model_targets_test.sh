#!/usr/bin/env bash
# bench/analysis/model_targets.sh on the committed sweeps, checked for what
# the script must do whatever the model's figures (those are `model
# judge`'s, recorded in docs/model-judgements.md): a row per sweep and
# architecture, each excess the points by which its median, p95 and max
# exceed 5 / 10 / 15 %, each sweep's "all" row their sum; with
# BY=configuration each validation configuration on every sweep, marked +
# or - exactly when its error has one sign on all of them; a held parameter
# (--fix) changes the fit; and a clear failure for a parameter the model
# does not fit.
# Usage: model_targets_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
sweeps="paper-reproduction paper-reproduction-rerun paper-reproduction-rerun2 paper-reproduction-rerun3 paper-reproduction-adaptive"

out=$(BY=configuration "$source_dir/bench/analysis/model_targets.sh" "$build_dir")
echo "$out"
sum() { awk -v sweep="$1" '$1 == sweep && $2 == "all" { print $NF }' <<< "$2"; }
# Each architecture row's excess from its own figures, and their sum.
check_excess() {
  awk -v sweep="$1" '
    function over(x, limit) { sub(/%/, "", x); x = x + 0; return x > limit ? x - limit : 0 }
    $1 == sweep && $2 != "all" && $NF ~ /^[0-9.]+$/ && NF >= 6 {
      rows++
      e = over($(NF-3), 5) + over($(NF-2), 10) + over($(NF-1), 15)
      if (e - $NF > 0.15 || $NF - e > 0.15) { print "excess " $NF " of " $0 " is not " e; bad = 1 }
      total += $NF
    }
    $1 == sweep && $2 == "all" { all = $NF }
    END {
      if (rows != 6) { print sweep ": " rows " architecture rows, not 6"; bad = 1 }
      if (total - all > 0.1 * rows || all - total > 0.1 * rows) { print sweep ": all " all " is not the sum " total; bad = 1 }
      exit bad
    }' <<< "$2" || fail "$1: the excess is not the rows' own"
}
for sweep in $sweeps; do
  [[ -n $(sum "$sweep" "$out") ]] || fail "no row of all for $sweep"
  check_excess "$sweep" "$out"
done
# Each validation configuration: five signed errors, marked exactly when they agree.
configurations=$(grep -E ' [+-][0-9]+\.[0-9]( +[+-][0-9]+\.[0-9]){4}( +[+-])? *$' <<< "$out") ||
  fail "no validation configuration compared across the sweeps"
[[ $(wc -l <<< "$configurations") == 66 ]] || fail "not 66 validation configurations compared across the sweeps"
awk '{
  marked = ($NF == "+" || $NF == "-"); n = marked ? NF - 1 : NF
  pos = 0; neg = 0
  for (i = n - 4; i <= n; i++) { if ($i + 0 > 0) pos++; else if ($i + 0 < 0) neg++ }
  same = (pos == 5 ? "+" : neg == 5 ? "-" : "")
  if ((marked ? $NF : "") != same) { print "wrongly marked: " $0; bad = 1 }
} END { exit bad }' <<< "$configurations" || fail "a sign marked where the sweeps disagree, or left out where they agree"

held=$("$source_dir/bench/analysis/model_targets.sh" "$build_dir" --fix cpu_per_byte_s=2e-10)
check_excess paper-reproduction "$held"
[[ $(grep '^paper-reproduction ' <<< "$held") != $(grep '^paper-reproduction ' <<< "$out") ]] ||
  fail "holding cpu_per_byte_s changed nothing"

if err=$("$source_dir/bench/analysis/model_targets.sh" "$build_dir" --fix cpu_per_bite_s=1 2>&1); then
  fail "a parameter the model does not fit was accepted"
fi
grep -q 'fits no parameter "cpu_per_bite_s" to hold' <<< "$err" || fail "no reason given: $err"
echo "model_targets: ok"
