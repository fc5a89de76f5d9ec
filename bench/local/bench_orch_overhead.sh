#!/usr/bin/env bash
# Orchestration overhead per run, and `dmlbench plan` of a 10,000-run matrix.
#
# Overhead: RUNS tiny runs (1 worker, synthetic data, 1 iteration) through
# `dmlbench run`, in blocks of 5, each block followed by the very same mpirun
# command lines (read back from the database) run directly by the shell.
# Reported, as medians:
#   orchestrator overhead = per-run time under dmlbench - the same command run directly
#   (also per block: (whole `dmlbench run` wall - sum of direct runs) / 5)
#   outside the trainer's own clock = attempt wall - run_end.total_wall_s
#   (mpirun start-up, MPI_Init/Finalize, process exit: not the orchestrator's)
# Targets: orchestrator overhead <= 150 ms per run; plan of 10,000 runs <= 1 s.
# Usage: bench/local/bench_orch_overhead.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
RUNS=${2:-20}
DMLBENCH=$BUILD/orchestrator/dmlbench
TRAINER=$(realpath "$BUILD/trainer/dmlbench-trainer")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

median() { awk -f bench/column_medians.awk; }
now() { date +%s.%N; }

# Blocks of 5 runs, each block a sweep then the same 5 commands run
# directly, so that both halves of a pair see the same machine load.
BLOCK=5
: > "$work/orchestrated"; : > "$work/direct"; : > "$work/outside"; : > "$work/block"
for ((b = 1; b <= (RUNS + BLOCK - 1) / BLOCK; b++)); do
  cat > "$work/tiny$b.toml" <<TOML
[experiment]
name = "overhead-$b"
[defaults]
dataset = "synthetic"
epochs = 1
batch_size = 10
max_iterations_per_epoch = 1
[matrix]
architecture = ["ring"]
workers = [1]
[execution]
repetitions = $BLOCK
seed = $((b * 1000))
timeout_s = 120
attempts = 1
TOML
  start=$(now)
  "$DMLBENCH" --db "$work/results.db" run "$work/tiny$b.toml" --trainer "$TRAINER" > "$work/run.out" 2> "$work/run.err"
  sweep=$(echo "$(now) - $start" | bc -l)
  ids="SELECT run_id FROM runs r JOIN experiments e USING (experiment_id) WHERE e.name = 'overhead-$b'"
  complete=$(sqlite3 "$work/results.db" "SELECT count(*) FROM runs WHERE status = 'complete' AND run_id IN ($ids)")
  [[ $complete -eq $BLOCK ]] || { echo "only $complete of $BLOCK runs completed" >&2; cat "$work/run.out" >&2; exit 1; }
  sqlite3 "$work/results.db" "SELECT end_unix_s - start_unix_s FROM attempts WHERE run_id IN ($ids) ORDER BY run_id" \
    >> "$work/orchestrated"
  sqlite3 "$work/results.db" "SELECT end_unix_s - start_unix_s - total_wall_s FROM attempts WHERE run_id IN ($ids)" \
    >> "$work/outside"
  direct_sum=0
  while IFS= read -r command; do
    s=$(now)
    eval "$command" < /dev/null > /dev/null 2>&1
    d=$(echo "$(now) - $s" | bc -l)
    echo "$d" >> "$work/direct"
    direct_sum=$(echo "$direct_sum + $d" | bc -l)
  done < <(sqlite3 "$work/results.db" "SELECT command_line FROM runs WHERE run_id IN ($ids) ORDER BY run_id")
  echo "($sweep - $direct_sum) / $BLOCK" | bc -l >> "$work/block"
done

paste "$work/orchestrated" "$work/direct" | awk '{print $1 - $2}' > "$work/overhead"
printf 'runs: %d tiny runs (ring, 1 worker, synthetic, 1 iteration), in blocks of %d\n' \
  "$(wc -l < "$work/direct")" "$BLOCK"
printf 'per run under dmlbench (attempt window), median: %.3f s\n' "$(median < "$work/orchestrated")"
printf 'same mpirun command run directly, median:       %.3f s\n' "$(median < "$work/direct")"
printf 'orchestrator overhead per run, median of pairs: %.0f ms\n' "$(echo "$(median < "$work/overhead") * 1000" | bc -l)"
printf 'whole `dmlbench run` per run, median of blocks: %.0f ms  (process start, hosts, plan, DB, per run)\n' \
  "$(echo "$(median < "$work/block") * 1000" | bc -l)"
printf 'time outside the trainer clock, median:        %.0f ms  (mpirun + MPI_Init/Finalize + exit)\n' \
  "$(echo "$(median < "$work/outside") * 1000" | bc -l)"

# plan of a 10,000-run matrix: 4 architectures x 25 worker counts x 10 batch
# sizes x 10 repetitions, diffed against the database above.
workers=$(seq -s, 1 25)
cat > "$work/big.toml" <<TOML
[experiment]
name = "plan-10000"
[defaults]
dataset = "fashion-mnist"
[matrix]
architecture = ["ring", "mpi", "ps", "p2p"]
servers = [1]
workers = [$workers]
batch_size = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
[execution]
repetitions = 10
TOML
: > "$work/plan"
for i in 1 2 3 4 5; do
  s=$(now)
  "$DMLBENCH" --db "$work/results.db" plan "$work/big.toml" --trainer "$TRAINER" > "$work/plan.out"
  echo "$(now) - $s" | bc -l >> "$work/plan"
done
printf 'plan of %s runs (dataset hashed, every key looked up), median of 5: %.3f s\n' \
  "$(tail -1 "$work/plan.out" | sed 's/^plan-10000: \([0-9]*\) runs.*/\1/')" "$(median < "$work/plan")"
