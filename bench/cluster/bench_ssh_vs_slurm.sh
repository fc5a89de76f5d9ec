#!/usr/bin/env bash
# Does launching through Slurm change what a sweep measures? One emulated
# cluster with Slurm on it (`cluster up --slurm`: 5 hosts, 100 Mbit/s links
# both ways, 0.15 core each as in the study), and one matrix — a subset of
# experiments/paper-reproduction.toml: ring, mpi, p2p and ps (1 server) at 2
# and 4 workers, Fashion-MNIST, batch 100, 10 iterations per epoch, 3 epochs
# (2 steady), REPS repetitions — each repetition run through SSH (provider
# "cluster") and through Slurm (provider "slurm", a job step per run), in
# turn, each provider into its own database; then `dmlbench compare ssh.db slurm.db` (B = Slurm) and,
# per provider, the median of each phase of its runs' attempts (where their
# time went, attempt_phases: start-up, epochs, exit). Needs root and the
# Slurm packages. The trainer is started by Slurm
# at its own path, so it must lie where the hosts see it (not under /tmp,
# /dev/shm or root's home); the SSH sweep uploads it as always.
#   bench/cluster/bench_ssh_vs_slurm.sh path/to/dmlbench path/to/dmlbench-trainer
#   env: REPS (6), CPU (0.15), BANDWIDTH (100mbit), DATASET
#        (/usr/share/datasets/fashion-mnist)
set -euo pipefail
if (($# != 2)); then
  echo "usage: bench/cluster/bench_ssh_vs_slurm.sh DMLBENCH TRAINER" >&2
  exit 2
fi
DMLBENCH=$(realpath "$1")
TRAINER=$(realpath "$2")
REPS=${REPS:-6}
CPU=${CPU:-0.15}
BANDWIDTH=${BANDWIDTH:-100mbit}
DATASET=${DATASET:-/usr/share/datasets/fashion-mnist}
PYTHON=/usr/bin/python3
for program in slurmctld slurmd munged srun; do
  if ! command -v "$program" >/dev/null && [[ ! -x /usr/sbin/$program ]]; then
    echo "bench_ssh_vs_slurm: needs $program (scripts/setup installs Slurm)" >&2
    exit 1
  fi
done

source "$(dirname "$0")/cluster_lib.sh"
hosts_see_dir "$(dirname "$TRAINER")" "the trainer, which Slurm starts at its own path,"
SLURM=on cluster_up sv 5 "$BANDWIDTH" "$CPU"
cat "$work/cluster-up.txt"
export SLURM_CONF
SLURM_CONF=$(sed -n 's/^for provider "slurm": export SLURM_CONF=//p' "$work/cluster-up.txt")

matrix() {  # provider, then its own lines of [execution]
  cat <<TOML
[experiment]
name = "ssh-vs-slurm"
description = "a subset of paper-reproduction at 100 Mbit/s, through SSH and through Slurm"
[defaults]
epochs = 3
hidden = [128, 32]
batch_size = 100
learning_rate = 0.05
max_iterations_per_epoch = 10
dataset = "fashion-mnist"
overlap = false
[matrix]
architecture = ["ps", "p2p", "ring", "mpi"]
servers = [1]
workers = [2, 4]
[execution]
provider = "$1"
repetitions = $REPS
seed = 1
timeout_s = 300
attempts = 2
order = "shuffled"
$2
TOML
}
matrix cluster 'inventory = "cluster/inventory.toml"' > "$work/ssh.toml"
matrix slurm '[slurm]
ranks = "per-node"' > "$work/slurm.toml"

# The repetitions alternate between the providers, and so does which goes
# first, so that a change of this machine's load falls on both alike.
for ((rep = 0; rep < REPS; rep++)); do
  sides=(ssh slurm)
  ((rep % 2 == 0)) || sides=(slurm ssh)
  for side in "${sides[@]}"; do
    start=$(date +%s)
    "$DMLBENCH" run "$work/$side.toml" --db "$work/$side.db" --trainer "$TRAINER" --dataset-dir "$DATASET" \
        --only "repetition=$rep" > "$work/$side.out" 2>&1 || { cat "$work/$side.out"; exit 1; }
    echo "repetition $rep, $side: $(tail -n 1 "$work/$side.out") ($(( $(date +%s) - start )) s)"
  done
done

echo
echo "dmlbench compare ssh.db slurm.db (A = SSH, B = Slurm):"
"$DMLBENCH" compare "$work/ssh.db" "$work/slurm.db"

echo
echo "where a run's time went, median seconds per complete run (attempt_phases; A = SSH, B = Slurm):"
"$PYTHON" "$(dirname "$0")/phase_medians.py" SSH="$work/ssh.db" Slurm="$work/slurm.db"
