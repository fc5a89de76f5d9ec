#!/usr/bin/env bash
# Hang hunter for the MPI trainer, a diagnostic run by hand (not part of the
# test suite). Launches many short dmlbench-trainer jobs through mpirun,
# round-robin over world sizes and every scheme (ring, mpi, p2p, ps with 1 to
# w-1 servers; overlap off and on), optionally under CPU load it makes itself
# (busy loops, in the caller's cgroup), and counts the jobs that end, fail or
# hang. A job still running after TIMEOUT_S seconds counts as hung: the
# stacks (gdb) and TCP sockets (ss) of its ranks go into its log, kept under
# KEEP_DIR, and the job is ended.
#
# It also counts the IPv4 addresses this machine lost meanwhile (ip monitor).
# Open MPI's TCP transport uses every interface present at MPI_Init; when one
# vanishes (an emulated cluster's bridge, as cluster tests make and delete),
# a job that has not yet connected over it loses a message and can hang, so
# zero hangs with zero addresses lost proves little. The trainer keeps jobs
# on one machine on the loopback (trainer/poll.h); to see the hang, give
# Open MPI its own choice back:
#   MPIRUN_ARGS="--mca btl_tcp_if_exclude 127.0.0.1/8,sppp"
#
# Usage: scripts/diagnostics/stress_trainer_hangs.sh [BUILD_DIR]
#   env: RUNS (300) launches; RANKS ("2 3 4 5") world sizes; ARCHS ("ring mpi
#   p2p ps"); PARALLEL (2) jobs at once; LOAD (2) busy loops; TIMEOUT_S (60);
#   KEEP_DIR (a new directory under /tmp) for the logs of failed and hung
#   jobs; MPIRUN_ARGS (extra mpirun arguments, split on spaces).
# Prints one line per failed or hung job, then a summary:
#   runs 300 ok 300 failed 0 hung 0; addresses lost meanwhile 12 (load 2, ...)
# Exit status 1 if a job failed or hung.
set -uo pipefail

BUILD_DIR=${1:-build}
TRAINER=$BUILD_DIR/trainer/dmlbench-trainer
RUNS=${RUNS:-300}
RANKS=${RANKS:-"2 3 4 5"}
ARCHS=${ARCHS:-"ring mpi p2p ps"}
PARALLEL=${PARALLEL:-2}
LOAD=${LOAD:-2}
TIMEOUT_S=${TIMEOUT_S:-60}
KEEP_DIR=${KEEP_DIR:-$(mktemp -d /tmp/dmlbench-stress.XXXXXX)}
read -r -a mpirun_args <<<"${MPIRUN_ARGS:-}"

[ -x "$TRAINER" ] || { echo "stress_trainer_hangs.sh: no trainer at $TRAINER; build it first" >&2; exit 2; }
command -v gdb >/dev/null || echo "stress_trainer_hangs.sh: no gdb; hung jobs get no stacks" >&2
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$KEEP_DIR"
work=$(mktemp -d)
helpers=()  # busy loops and the address monitor
cleanup() {
  for pid in "${helpers[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

ip -4 monitor address >"$work/addresses" 2>/dev/null &
helpers+=($!)
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  helpers+=($!)
done

# The configurations: "ranks arch servers overlap".
configs=()
for ranks in $RANKS; do
  for arch in $ARCHS; do
    for overlap in off on; do
      if [ "$arch" = ps ]; then
        for ((k = 1; k < ranks; k++)); do configs+=("$ranks ps $k $overlap"); done
      else
        configs+=("$ranks $arch 0 $overlap")
      fi
    done
  done
done

# Launch i; the last line of its log is "ok", "failed <status>" or "hung".
launch() {
  local i=$1 ranks arch servers overlap extra=()
  read -r ranks arch servers overlap <<<"${configs[i % ${#configs[@]}]}"
  [ "$arch" = ps ] && extra+=(--servers "$servers")
  [ "$overlap" = on ] && extra+=(--overlap --bucket-bytes 256)
  local log=$work/$i.log
  echo "launch $i: -np $ranks --architecture $arch ${extra[*]}" >"$log"
  mpirun -q --oversubscribe --mca btl self,tcp --mca odls_base_sigkill_timeout 0 \
    "${mpirun_args[@]}" -np "$ranks" "$TRAINER" --architecture "$arch" "${extra[@]}" \
    --synthetic 200 --epochs 2 --batch-size 10 --hidden 16,8 --learning-rate 0.1 \
    --max-iterations-per-epoch 3 --quiet --events "$work/$i.events" >>"$log" 2>&1 &
  local job=$! waited=0
  while kill -0 "$job" 2>/dev/null && ((waited < TIMEOUT_S)); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$job" 2>/dev/null; then
    # Hung: the stacks and TCP sockets of every rank (mpirun's children).
    for rank_pid in $(pgrep -P "$job"); do
      echo "--- pid $rank_pid: $(tr '\0' ' ' <"/proc/$rank_pid/cmdline" | cut -c1-80)" >>"$log"
      gdb -q -batch -p "$rank_pid" -ex "thread apply all bt" >>"$log" 2>&1
      ss -tnpi 2>/dev/null | grep -A1 "pid=$rank_pid," >>"$log"
    done
    kill -TERM "$job" 2>/dev/null
    wait "$job" 2>/dev/null
    echo hung >>"$log"
    return
  fi
  wait "$job"
  local status=$?
  if [ $status = 0 ]; then echo ok >>"$log"; else echo "failed $status" >>"$log"; fi
}

ok=0 failed=0 hung=0 i=0
while ((i < RUNS)); do
  batch=() pids=()
  for ((j = 0; j < PARALLEL && i < RUNS; j++, i++)); do
    launch "$i" &
    batch+=("$i") pids+=($!)
  done
  wait "${pids[@]}"
  for n in "${batch[@]}"; do
    result=$(tail -n 1 "$work/$n.log")
    case $result in
      ok) ok=$((ok + 1)) ;;
      hung) hung=$((hung + 1)) ;;
      *) failed=$((failed + 1)) ;;
    esac
    if [ "$result" != ok ]; then
      cp "$work/$n.log" "$KEEP_DIR/"
      echo "$result: $(head -n 1 "$work/$n.log") (log $KEEP_DIR/$n.log)"
    fi
    rm -f "$work/$n.log" "$work/$n.events"
  done
done
lost=$(grep -c '^Deleted' "$work/addresses")
echo "runs $RUNS ok $ok failed $failed hung $hung; addresses lost meanwhile $lost" \
     "(load $LOAD, parallel $PARALLEL, timeout $TIMEOUT_S s${MPIRUN_ARGS:+, mpirun $MPIRUN_ARGS})"
((failed == 0 && hung == 0))
