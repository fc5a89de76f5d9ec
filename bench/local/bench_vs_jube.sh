#!/usr/bin/env bash
# dmlbench against JUBE (Debian's `jube`) on the same 12 trainer commands:
# experiments/quickstart.toml run by `dmlbench run` into a fresh SQLite file,
# and the same trainer command lines (as dmlbench stored them, without the
# dataset cache and the per-rank output files dmlbench adds) run by one JUBE
# benchmark of 12 workpackages, one after another. The two go in turn,
# dmlbench then JUBE, REPS pairs after one pair of warm-up; each side's wall
# seconds are printed per repetition, then the medians and the median of the
# pairs' ratios dmlbench/JUBE.
#
# dmlbench prepares its host (its dataset cache keeps the decoded IDX files
# between runs; every run is stored and its events checked), JUBE runs each
# command as a user types it and keeps its output in a work directory.
#
# Usage: [REPS=5] bench/local/bench_vs_jube.sh BUILD_DIR [DATASET_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(realpath "${1:?usage: bench_vs_jube.sh BUILD_DIR [DATASET_DIR]}")
DATASET=${2:-/usr/share/datasets/fashion-mnist}
REPS=${REPS:-5}
DMLBENCH=$BUILD/orchestrator/dmlbench
command -v jube >/dev/null || { echo "bench_vs_jube: jube is not installed (apt-get install jube)" >&2; exit 2; }
[[ -x $DMLBENCH ]] || { echo "bench_vs_jube: no $DMLBENCH" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-vs-jube.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

run_dmlbench() {  # $1: database
  "$DMLBENCH" --db "$1" run experiments/quickstart.toml --trainer "$BUILD/trainer/dmlbench-trainer" --dataset-dir "$DATASET" >"$work/dmlbench.log" 2>&1
}

# The commands: one sweep by dmlbench, its stored command lines, without the
# options that only dmlbench's preparation gives (the dataset cache, the
# ranks' output files).
run_dmlbench "$work/commands.db"
mapfile -t commands < <(sqlite3 -readonly "$work/commands.db" \
  "SELECT command_line FROM attempts WHERE status = 'ok' ORDER BY attempt_id" |
  sed -E 's/ --dataset-cache [^ ]+//; s/ --output-filename [^ ]+//')
if ((${#commands[@]} != 12)); then
  echo "bench_vs_jube: expected 12 stored commands, got ${#commands[@]}" >&2
  exit 1
fi

{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo '<jube>'
  echo "  <benchmark name=\"quickstart\" outpath=\"$work/jube-runs\">"
  echo '    <parameterset name="runs">'
  printf '      <parameter name="run" type="int">'
  seq -s, 0 $((${#commands[@]} - 1)) | tr -d '\n'
  echo '</parameter>'
  echo '    </parameterset>'
  echo '    <step name="train">'
  echo '      <use>runs</use>'
  echo "      <do>sh $work/command-\$run.sh</do>"
  echo '    </step>'
  echo '  </benchmark>'
  echo '</jube>'
} >"$work/quickstart.xml"
for i in "${!commands[@]}"; do
  printf 'exec %s\n' "${commands[$i]}" >"$work/command-$i.sh"
done

run_jube() {
  jube run "$work/quickstart.xml" >"$work/jube.log" 2>&1
  # Every workpackage must have run its command to the end.
  local done
  done=$(find "$work/jube-runs" -name done | wc -l)
  rm -rf "$work/jube-runs"
  ((done == ${#commands[@]})) || { echo "bench_vs_jube: JUBE finished $done of ${#commands[@]}" >&2; exit 1; }
}

seconds() {  # the wall seconds of "$@"
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

echo "# dmlbench_s jube_s ratio   (12 quickstart trainer commands, dmlbench then JUBE, $REPS pairs after one warm-up pair)"
run_dmlbench "$work/warm.db" && run_jube
for ((r = 0; r < REPS; ++r)); do
  a=$(seconds run_dmlbench "$work/run-$r.db")
  rows=$(sqlite3 -readonly "$work/run-$r.db" "SELECT count(*) FROM attempts WHERE status = 'ok'")
  ((rows == 12)) || { echo "bench_vs_jube: dmlbench stored $rows runs of 12" >&2; exit 1; }
  b=$(seconds run_jube)
  printf '%.3f %.3f %.4f\n' "$a" "$b" "$(echo "$a / $b" | bc -l)"
done | tee "$work/pairs"
awk -f bench/column_medians.awk -v names="dmlbench_s jube_s ratio" "$work/pairs"
