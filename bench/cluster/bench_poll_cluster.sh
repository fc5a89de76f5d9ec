#!/usr/bin/env bash
# Does a change to how the trainer waits cost throughput where ranks run
# under a CPU quota? Two trainer binaries, A and B (e.g. one built from main
# and one from a branch; or one binary with two sets of options), side by side on one emulated cluster: 4 hosts,
# 1 Gbit/s links both ways, 0.4 core each (--cpu), one rank per host, the
# 784-128-32-10 MLP at local batch 100, synthetic data, the schemes in
# SCHEMES (`ring` and `mpi` unless set; `ps1`, `ps2`, ... add that many
# server hosts), overlap off. Runs alternate A, B for each scheme, REPS times.
#
# Prints per run and then, per binary and scheme, medians over REPS of the
# second epoch's (the first warms up): samples/s, ms per iteration, the
# CPU time per iteration of a rank (mean over ranks: what the quota charges),
# with B / A for throughput, and the share of quota periods in which a host
# ran out of its quota (thr%, mean over ranks; near 100 the quota binds).
# Needs root. Both trainers are uploaded to every host (each has its own
# /tmp, /dev/shm and root's home), so they may lie anywhere.
#   bench/cluster/bench_poll_cluster.sh path/to/dmlbench path/to/trainer-A path/to/trainer-B
#   env: REPS (5), ITERATIONS per epoch (400), BANDWIDTH (1gbit), CPU (0.4),
#        WORKERS (4), SCHEMES ("ring mpi"; also p2p, ps1, ps2, ps4),
#        ARGS_A, ARGS_B (more trainer options for A and B, e.g. "--partition-bytes 65536")
set -euo pipefail
if (($# != 3)); then
  echo "usage: bench/cluster/bench_poll_cluster.sh DMLBENCH TRAINER_A TRAINER_B" >&2
  exit 2
fi
DMLBENCH=$1
TRAINER_A=$(realpath "$2")
TRAINER_B=$(realpath "$3")
REPS=${REPS:-5}
ITERATIONS=${ITERATIONS:-400}
BANDWIDTH=${BANDWIDTH:-1gbit}
CPU=${CPU:-0.4}
WORKERS=${WORKERS:-4}
SCHEMES=${SCHEMES:-ring mpi}
BATCH=100
servers_of() { [[ $1 == ps* ]] && echo "${1#ps}" || echo 0; }
max_servers=0
for scheme in $SCHEMES; do
  s=$(servers_of "$scheme")
  ((s > max_servers)) && max_servers=$s
done
PYTHON=/usr/bin/python3
for t in "$TRAINER_A" "$TRAINER_B"; do
  [[ -x $t ]] || { echo "bench_poll_cluster: no trainer at $t" >&2; exit 1; }
done

source "$(dirname "$0")/cluster_lib.sh"
cluster_up pc $((WORKERS + max_servers)) "$BANDWIDTH" "$CPU"
cat "$work/cluster-up.txt"
# The hosts start their own copies, under names of their own.
HOSTS_TRAINER_A=$(cluster_upload "$TRAINER_A" dmlbench-trainer-A)
HOSTS_TRAINER_B=$(cluster_upload "$TRAINER_B" dmlbench-trainer-B)

all_hosts=("${addresses[@]}")
hosts=$(hosts_list "$WORKERS")
# Where mpirun says each rank runs: the trainer spins before sleeping only
# when every rank of the job is on its machine (trainer/poll.h).
echo "ranks on the rank's machine / ranks, per rank:" $(mpirun "${mpi_args[@]}" -H "$hosts" \
    -np "$WORKERS" sh -c 'echo "$OMPI_COMM_WORLD_LOCAL_SIZE/$OMPI_COMM_WORLD_SIZE"')

# One run: "samples/s ms/iteration cpu-ms/iteration" of the second epoch.
run() {
  local trainer=$1 scheme=$2 extra=$3
  local servers; servers=$(servers_of "$scheme")
  local ranks=$((WORKERS + servers))
  local architecture=$scheme
  [[ $scheme == ps* ]] && architecture=ps
  mpirun "${mpi_args[@]}" -H "$(IFS=,; echo "${all_hosts[*]:0:$ranks}")" -np "$ranks" "$trainer" \
      --architecture "$architecture" --servers "$servers" \
      --synthetic $((ITERATIONS * BATCH * WORKERS)) --epochs 2 \
      --batch-size "$BATCH" $extra --events - --no-evaluate --quiet |
    "$PYTHON" -c '
import json, sys
e = [json.loads(l) for l in sys.stdin if l.startswith("{") and "\"epoch\"" in l]
e = [x for x in e if x.get("event") == "epoch"][-1]
n = e["iterations"]
cpu = sum(r["cpu_s"] for r in e["ranks"]) / len(e["ranks"])
# Periods in which a host ran out of its quota, as a share of its periods
# (mean over ranks; nan from a trainer that does not report its quota).
q = [r["throttled_periods"] / r["quota_periods"] for r in e["ranks"] if r.get("quota_periods")]
print(e["throughput_samples_per_s"], 1e3 * e["wall_s"] / n, 1e3 * cpu / n,
      100 * sum(q) / len(q) if q else float("nan"))'
}

median() { awk -f "$(dirname "$0")/../column_medians.awk"; }

declare -A tp it cpu thr
for ((i = 1; i <= REPS; i++)); do
  for architecture in $SCHEMES; do
    for which in A B; do
      if [[ $which == A ]]; then trainer=$HOSTS_TRAINER_A extra=${ARGS_A:-}
      else trainer=$HOSTS_TRAINER_B extra=${ARGS_B:-}; fi
      read -r t m c q < <(run "$trainer" "$architecture" "$extra")
      key="$which.$architecture"
      tp[$key]+="$t "; it[$key]+="$m "; cpu[$key]+="$c "; thr[$key]+="$q "
      printf 'rep %d %-4s %s: %8.0f samples/s  %.3f ms/it  %.3f cpu-ms/it  %.1f%% of periods throttled\n' \
        "$i" "$architecture" "$which" "$t" "$m" "$c" "$q"
    done
  done
done

printf '\n%d hosts, %s, %s core, batch %d, %d iterations per epoch, median of %d\n' \
  "$WORKERS" "$BANDWIDTH" "$CPU" "$BATCH" "$ITERATIONS" "$REPS"
printf 'A = %s %s\nB = %s %s\n' "$TRAINER_A" "${ARGS_A:-}" "$TRAINER_B" "${ARGS_B:-}"
printf '%-5s %12s %12s %10s %10s %14s %14s %8s %8s %8s\n' scheme A_samples/s B_samples/s A_ms/it B_ms/it \
  A_cpu_ms/it B_cpu_ms/it B/A A_thr% B_thr%
for architecture in $SCHEMES; do
  a=$(tr ' ' '\n' <<< "${tp[A.$architecture]}" | grep . | median)
  b=$(tr ' ' '\n' <<< "${tp[B.$architecture]}" | grep . | median)
  am=$(tr ' ' '\n' <<< "${it[A.$architecture]}" | grep . | median)
  bm=$(tr ' ' '\n' <<< "${it[B.$architecture]}" | grep . | median)
  ac=$(tr ' ' '\n' <<< "${cpu[A.$architecture]}" | grep . | median)
  bc=$(tr ' ' '\n' <<< "${cpu[B.$architecture]}" | grep . | median)
  aq=$(tr ' ' '\n' <<< "${thr[A.$architecture]}" | grep . | median)
  bq=$(tr ' ' '\n' <<< "${thr[B.$architecture]}" | grep . | median)
  printf '%-5s %12.0f %12.0f %10.3f %10.3f %14.3f %14.3f %7.3fx %8.1f %8.1f\n' "$architecture" "$a" "$b" \
    "$am" "$bm" "$ac" "$bc" "$(echo "$b / $a" | bc -l)" "$aq" "$bq"
done
