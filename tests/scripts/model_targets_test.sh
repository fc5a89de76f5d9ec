#!/usr/bin/env bash
# bench/model_targets.sh on the committed sweeps: the summed excess of the
# corrected model over its error targets that README and DESIGN.md quote
# (10.1 / 80.0 / 118.2 / 81.5 / 175.3 fitted; 13.9 on the committed study with
# a rank's own bytes held at the measured 0.2 ns), the 31 validation
# configurations whose error has one sign on all five sweeps,
# corrected+overlap's on the committed study and on the sweep with overlap calibration runs (12.7,
# 76.0), and a clear failure for a parameter the model does not fit.
# Usage: model_targets_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(BY=configuration "$source_dir/bench/model_targets.sh" "$build_dir")
echo "$out"
sum() { awk -v sweep="$1" '$1 == sweep && $2 == "all" { print $NF }' <<< "$2"; }
[[ $(sum paper-reproduction "$out") == 10.1 ]] || fail "committed study's excess is not 10.1"
[[ $(sum paper-reproduction-rerun "$out") == 80.0 ]] || fail "rerun's excess is not 80.0"
[[ $(sum paper-reproduction-rerun2 "$out") == 118.2 ]] || fail "rerun2's excess is not 118.2"
[[ $(sum paper-reproduction-adaptive "$out") == 81.5 ]] || fail "the adaptive sweep's excess is not 81.5"
[[ $(sum paper-reproduction-rerun3 "$out") == 175.3 ]] || fail "rerun3's excess is not 175.3"
grep -q '^paper-reproduction  *ring  *2.8%  *6.5%  *6.6%  *0.0$' <<< "$out" || fail "the committed study's ring row"
# Each validation configuration on every sweep, and whether its sign holds.
grep -q '^mpi w=3 b=100 1e+09bit/s 0s cap=40  *+10.5  *+24.6  *+23.0  *+13.6  *+18.3  +$' <<< "$out" ||
  fail "mpi at 3 workers on 1 Gbit/s is not too slow on every sweep"
grep -q '^ring w=4 b=50 1e+09bit/s 0s cap=80  *-4.4  *-8.1  *+22.6  *-2.3  *-18.5 *$' <<< "$out" ||
  fail "ring at batch 50 is given a sign"
[[ $(grep -c ' [+-]$' <<< "$out") == 31 ]] || fail "not 31 configurations of one sign on every sweep"

overlap=$(MODEL=corrected+overlap SWEEPS="paper-reproduction paper-reproduction-rerun3" \
  "$source_dir/bench/model_targets.sh" "$build_dir")
echo "$overlap"
[[ $(sum paper-reproduction "$overlap") == 12.7 ]] || fail "corrected+overlap: the committed study's excess is not 12.7"
[[ $(sum paper-reproduction-rerun3 "$overlap") == 76.0 ]] || fail "corrected+overlap: rerun3's excess is not 76.0"

held=$("$source_dir/bench/model_targets.sh" "$build_dir" --fix cpu_per_byte_s=2e-10)
[[ $(sum paper-reproduction "$held") == 13.9 ]] || fail "held bytes: the committed study's excess is not 13.9"

if err=$("$source_dir/bench/model_targets.sh" "$build_dir" --fix cpu_per_bite_s=1 2>&1); then
  fail "a parameter the model does not fit was accepted"
fi
grep -q 'fits no parameter "cpu_per_bite_s" to hold' <<< "$err" || fail "no reason given: $err"
echo "model_targets: ok"
