#!/usr/bin/env bash
# What a run costs outside its trainer on the emulated cluster, before and
# after a change of the launcher: two dmlbench binaries (A, B) run one matrix
# — a subset of experiments/paper-reproduction.toml: ring, ps (1 server) and
# p2p at 2 and 4 workers on 100 Mbit/s (10 iterations per epoch) and 1 Gbit/s
# (40), 2 epochs (1 steady), Fashion-MNIST, REPS repetitions in a shuffled
# order — in turn on one cluster (5 hosts, 0.15 core each as in the study),
# each into its own database, with the same trainer. Prints each sweep's
# closing line (its efficiency: steady-epoch time / sweep wall), `dmlbench
# compare A.db B.db` (the steady epochs must not move), the median of each
# attempt phase per binary (attempt_phases) and the per-run overhead (attempt
# wall − the trainer's own). Needs root.
#   bench/cluster/bench_launch_cost.sh DMLBENCH_A DMLBENCH_B TRAINER
#   env: REPS (2), CPU (0.15), HOSTS (5), DATASET (/usr/share/datasets/fashion-mnist)
set -euo pipefail
if (($# != 3)); then
  echo "usage: bench/cluster/bench_launch_cost.sh DMLBENCH_A DMLBENCH_B TRAINER" >&2
  exit 2
fi
A=$(realpath "$1")
B=$(realpath "$2")
TRAINER=$(realpath "$3")
DMLBENCH=$B  # brings the cluster up and down
REPS=${REPS:-2}
CPU=${CPU:-0.15}
HOSTS=${HOSTS:-5}
DATASET=${DATASET:-/usr/share/datasets/fashion-mnist}
PYTHON=/usr/bin/python3

source "$(dirname "$0")/cluster_lib.sh"
cluster_up lc "$HOSTS" 100mbit "$CPU"
cat "$work/cluster-up.txt"

cat > "$work/matrix.toml" <<TOML
[experiment]
name = "launch-cost"
description = "a subset of paper-reproduction: where a run's time goes outside its trainer"
[defaults]
epochs = 2
hidden = [128, 32]
batch_size = 100
learning_rate = 0.05
dataset = "fashion-mnist"
overlap = false
[networks.100mbit]
bandwidth_mbit_per_s = 100
[networks.1gbit]
bandwidth_mbit_per_s = 1000
[matrix]
architecture = ["ps", "p2p", "ring"]
servers = [1]
workers = [2, 4]
[[zip]]
network = ["100mbit", "1gbit"]
max_iterations_per_epoch = [10, 40]
[execution]
provider = "cluster"
inventory = "cluster/inventory.toml"
repetitions = $REPS
seed = 1
timeout_s = 300
attempts = 2
order = "shuffled"
TOML

# The repetitions alternate between the binaries, and so does which goes
# first, so that a change of this machine's load falls on both alike.
for ((rep = 0; rep < REPS; rep++)); do
  sides=(A B)
  ((rep % 2 == 0)) || sides=(B A)
  for side in "${sides[@]}"; do
    binary=$A
    [[ $side == B ]] && binary=$B
    start=$(date +%s)
    "$binary" run "$work/matrix.toml" --db "$work/$side.db" --trainer "$TRAINER" --dataset-dir "$DATASET" \
        --only "repetition=$rep" > "$work/$side.out" 2>&1 || { cat "$work/$side.out"; exit 1; }
    echo "repetition $rep, $side: $(grep -m1 'efficiency' "$work/$side.out" || tail -n 1 "$work/$side.out") ($(( $(date +%s) - start )) s)"
  done
done

echo
echo "dmlbench compare A.db B.db:"
"$B" compare "$work/A.db" "$work/B.db"

echo
echo "median seconds per complete run (attempt_phases):"
"$PYTHON" "$(dirname "$0")/phase_medians.py" A="$work/A.db" B="$work/B.db"
