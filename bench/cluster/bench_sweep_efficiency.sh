#!/usr/bin/env bash
# A sweep's efficiency (its steady epochs over its wall time) and where the
# rest went, two builds side by side on one emulated cluster of 11 hosts at
# 0.15 core, as the committed study runs. The matrix is a stated subset of
# experiments/paper-reproduction.toml: its six schemes (ps with 1, 2 and 4
# servers, p2p, ring, mpi) at 2, 4 and 6 workers on both of its networks
# with its epoch caps, 3 repetitions: 108 runs a sweep. The builds' sweeps
# go in turn (A B B A A B ...), SWEEPS each, each sweep a whole new
# experiment of that matrix into the build's own database. B's matrix may
# add lines (B_EXTRA, e.g. `warmup_iterations = 5`) to [defaults] and
# (B_EXECUTION, e.g. `runs_per_job = 6`) to [execution]: what B's build
# can do that A's cannot; A_EXTRA and A_EXECUTION do the same for A.
#
# Prints each sweep's closing line (efficiency and largest overheads), the
# median efficiency per build, the median seconds of each phase per run,
# and `dmlbench compare A.db B.db` of the steady epochs (B's dmlbench).
#   bench/cluster/bench_sweep_efficiency.sh A_DMLBENCH A_TRAINER B_DMLBENCH B_TRAINER
#   env: SWEEPS (3), A_SWEEPS (SWEEPS: A sits out the sweeps after these, when
#        its figures are known and only the compare needs its runs), REPETITIONS (3; the subset has 108 runs at 3),
#        A_EXTRA, B_EXTRA, A_EXECUTION, B_EXECUTION (""), CPU (0.15), DATASET
#        (/usr/share/datasets/fashion-mnist), KEEP (a directory: A.db and B.db are copied there at the end)
# Each sweep's runs are new ones: sweep s seeds its repetitions from
# (s - 1) REPETITIONS + 1 on (a run's seed is the matrix's plus its
# repetition, and a run already complete in the database is not run again).
# The compare can test a configuration only with runs enough a side: with
# its 36 configurations, 7 each (e.g. SWEEPS=7 REPETITIONS=1: A and B in
# turn, sweep by sweep, so that the machine's load falls on both alike).
set -euo pipefail
if (($# != 4)); then
  echo "usage: bench/cluster/bench_sweep_efficiency.sh A_DMLBENCH A_TRAINER B_DMLBENCH B_TRAINER" >&2
  exit 2
fi
A_DMLBENCH=$(realpath "$1")
A_TRAINER=$(realpath "$2")
B_DMLBENCH=$(realpath "$3")
B_TRAINER=$(realpath "$4")
SWEEPS=${SWEEPS:-3}
A_SWEEPS=${A_SWEEPS:-$SWEEPS}
REPETITIONS=${REPETITIONS:-3}
A_EXTRA=${A_EXTRA:-}
B_EXTRA=${B_EXTRA:-}
A_EXECUTION=${A_EXECUTION:-}
B_EXECUTION=${B_EXECUTION:-}
CPU=${CPU:-0.15}
DATASET=${DATASET:-/usr/share/datasets/fashion-mnist}
PYTHON=/usr/bin/python3
DMLBENCH=$B_DMLBENCH  # the cluster's own commands

source "$(dirname "$0")/cluster_lib.sh"
cluster_before_down() {
  [[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP" && cp "$work"/A.db* "$work"/B.db* "$KEEP"/ 2>/dev/null || true; }
}
cluster_up ef 11 1gbit "$CPU"

matrix() {  # sweep number, extra [defaults] lines, extra [execution] lines
  cat <<TOML
[experiment]
name = "efficiency-$1"
description = "a subset of paper-reproduction: every scheme at 2, 4, 6 workers on both networks, 3 repetitions"
[defaults]
epochs = 2
hidden = [128, 32]
batch_size = 100
learning_rate = 0.05
bucket_bytes = 16384
dataset = "fashion-mnist"
overlap = false
$2
[networks.100mbit]
bandwidth_mbit_per_s = 100
[networks.1gbit]
bandwidth_mbit_per_s = 1000
[matrix]
architecture = ["ps", "p2p", "ring", "mpi"]
servers = [1, 2, 4]
workers = [2, 4, 6]
[[zip]]
network = ["100mbit", "1gbit"]
max_iterations_per_epoch = [10, 40]
[execution]
provider = "cluster"
inventory = "cluster/inventory.toml"
repetitions = $REPETITIONS
seed = $(( ($1 - 1) * REPETITIONS + 1 ))
timeout_s = 300
attempts = 2
order = "shuffled"
$3
[split]
calibration = { workers = [2, 4] }
TOML
}

for ((sweep = 1; sweep <= SWEEPS; sweep++)); do
  sides=(A B)
  ((sweep % 2 == 1)) || sides=(B A)
  for side in "${sides[@]}"; do
    if [[ $side == A ]] && ((sweep > A_SWEEPS)); then continue; fi
    if [[ $side == A ]]; then
      dmlbench=$A_DMLBENCH trainer=$A_TRAINER extra=$A_EXTRA execution=$A_EXECUTION
    else
      dmlbench=$B_DMLBENCH trainer=$B_TRAINER extra=$B_EXTRA execution=$B_EXECUTION
    fi
    matrix "$sweep" "$extra" "$execution" > "$work/$side-$sweep.toml"
    "$dmlbench" run "$work/$side-$sweep.toml" --db "$work/$side.db" --trainer "$trainer" --dataset-dir "$DATASET" \
        > "$work/$side-$sweep.out" 2>&1 || { cat "$work/$side-$sweep.out"; exit 1; }
    line=$(grep '^sweep ' "$work/$side-$sweep.out" | tail -n 1)
    echo "sweep $sweep, $side: $line"
    echo "$line" | sed -E 's/.*efficiency ([0-9.]+)%.*/\1/' >> "$work/$side.efficiency"
  done
done

echo
for side in A B; do
  echo "$side: median efficiency $(awk -f "$(dirname "$0")/../column_medians.awk" "$work/$side.efficiency") % over $(wc -l < "$work/$side.efficiency") sweeps"
done

echo
echo "where a run's time went, median seconds per complete run (attempt_phases):"
"$PYTHON" "$(dirname "$0")/phase_medians.py" A="$work/A.db" B="$work/B.db"

echo
echo "dmlbench compare A.db B.db, steady epochs:"
"$B_DMLBENCH" compare "$work/A.db" "$work/B.db" --factor 1.03 --fail-if different || true
