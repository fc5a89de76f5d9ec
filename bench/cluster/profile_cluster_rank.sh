#!/usr/bin/env bash
# Where one rank's CPU goes on the emulated cluster: what its host's quota
# is charged for while the rank trains and, mostly, waits. Brings up
# WORKERS hosts (ps: plus SERVERS server hosts) with BANDWIDTH links and CPU
# cores each, trains ARCHITECTURE on synthetic data, samples one rank's CPU
# with `perf record -g` for SAMPLE_SECONDS seconds once it is past its
# warm-up, and prints the cores its main thread ran and the share of its
# samples under each of a few kernel and library functions (a sample counts
# for every function on its stack, so the shares overlap):
#   handle_softirqs      the kernel's deferred network work run while this
#                        rank was on the CPU: the emulated links' token
#                        buckets, bridge and veths, and the TCP receive of
#                        whichever host the packet was for. Without
#                        CONFIG_IRQ_TIME_ACCOUNTING the kernel charges it to
#                        the running task, and so to its host's quota.
#   finish_task_switch   coming back on the CPU after each sleep of a poll
#   clock_nanosleep      the poll's sleep call, the switch included
#   readv / writev / poll   Open MPI's TCP transport: receiving, sending,
#                        and asking the sockets whether anything came in
#   sgemm                the forward and backward passes
#   opal_progress        a pass of Open MPI's progress engine (under a poll)
#   ReduceAndUpdate      a parameter server summing the workers' gradients
#                        and applying SGD to its shard
# and the whole machine's samples by thread (napi/... are the kernel's
# threads for the veths' receive path, when threaded).
#
# Needs root and perf (Debian: apt-get install linux-perf; with
# THREADED_NAPI=1 also ethtool; neither is a dependency of dmlbench). The
# trainer is uploaded to every host (each has its own /tmp, /dev/shm and
# root's home), so the build may lie anywhere.
#   bench/cluster/profile_cluster_rank.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
#   env: ARCHITECTURE (ring), WORKERS (4), SERVERS (0; ps: 1, 2 or 4),
#        RANK (0: the MPI rank to sample; a ps job's servers are ranks
#        WORKERS and up), TRAINER_ARGS (more trainer options, split at
#        spaces, e.g. "--overlap --bucket-bytes 16384"),
#        BANDWIDTH (100mbit), CPU (0.4), SAMPLE_SECONDS (4), THREADED_NAPI (0; 1
#        turns on GRO and threaded NAPI on every host's veth pair, TSO off,
#        so the veths' receive work runs in kernel threads outside the hosts'
#        cgroups)
set -euo pipefail
DMLBENCH=${1:-build/orchestrator/dmlbench}
TRAINER=$(realpath "${2:-build/trainer/dmlbench-trainer}")
ARCHITECTURE=${ARCHITECTURE:-ring}
WORKERS=${WORKERS:-4}
SERVERS=${SERVERS:-0}
BANDWIDTH=${BANDWIDTH:-100mbit}
CPU=${CPU:-0.4}
SAMPLE_SECONDS=${SAMPLE_SECONDS:-4}
RANK=${RANK:-0}
TRAINER_ARGS=${TRAINER_ARGS:-}
read -r -a trainer_args <<< "$TRAINER_ARGS"
THREADED_NAPI=${THREADED_NAPI:-0}
PYTHON=/usr/bin/python3
command -v perf >/dev/null || { echo "profile_cluster_rank: needs perf (apt-get install linux-perf)" >&2; exit 1; }
if ((THREADED_NAPI)) && ! command -v ethtool >/dev/null; then
  echo "profile_cluster_rank: THREADED_NAPI=1 needs ethtool (apt-get install ethtool)" >&2; exit 1
fi
[[ -x $TRAINER ]] || { echo "profile_cluster_rank: no trainer at $TRAINER" >&2; exit 1; }

source "$(dirname "$0")/cluster_lib.sh"
ranks=$((WORKERS + SERVERS))
cluster_up pr "$ranks" "$BANDWIDTH" "$CPU"
TRAINER=$(cluster_upload "$TRAINER")  # the hosts start their own copy
hosts=$(hosts_list "$ranks")

if ((THREADED_NAPI)); then
  for host in "${names[@]}"; do
    # Host dmlb-<name>-h<i> has the bridge end dmlb-<name>-<i> of its veth
    # pair (orchestrator/launch/cluster/cluster.h, ClusterHost).
    veth="${host%-h*}-${host##*-h}"
    ethtool -K "$veth" gro on tso off >/dev/null
    ip netns exec "$host" ethtool -K eth0 gro on tso off >/dev/null
    echo 1 > "/sys/class/net/$veth/threaded"
    ip netns exec "$host" sh -c 'echo 1 > /sys/class/net/eth0/threaded'
  done
fi

mpirun "${mpi_args[@]}" -H "$hosts" -np "$ranks" "$TRAINER" --architecture "$ARCHITECTURE" \
    --servers "$SERVERS" --synthetic 60000 --epochs 1000 --batch-size 100 --events - \
    --no-evaluate --quiet "${trainer_args[@]}" > "$work/trainer.out" 2>&1 &
job=$!
cluster_before_down() { kill "$job" 2>/dev/null || true; wait "$job" 2>/dev/null || true; }
# Past MPI's start and the first epoch's warm-up.
for _ in $(seq 100); do
  grep -q '"event":"epoch"' "$work/trainer.out" && break
  sleep 0.2
done
# The trainer process of MPI rank RANK (mpirun puts OMPI_COMM_WORLD_RANK
# into each rank's environment).
rank=""
for pid in $(pgrep -x "$(basename "$TRAINER" | cut -c1-15)" || true); do
  if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$RANK"; then rank=$pid; break; fi
done
[[ -n $rank ]] || { echo "profile_cluster_rank: rank $RANK of the trainer did not start:" >&2; cat "$work/trainer.out" >&2; exit 1; }
# The rank's own report of its last epoch before sampling (every thread
# of the process, and its host's quota), to set beside the sampled one:
# sampling at 5 kHz costs the sampled rank CPU too.
unsampled=$("$PYTHON" -c '
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "\"epoch\"" in l]
e = [x for x in e if x.get("event") == "epoch"][-1]
r = [x for x in e["ranks"] if x["rank"] == int(sys.argv[2])][0]
throttled = " (%d of %d quota periods throttled)" % (r["throttled_periods"], r["quota_periods"]) if "quota_periods" in r else ""
print("%.2f ms of CPU per %.2f ms iteration%s" % (1e3 * r["cpu_s"] / e["iterations"], 1e3 * e["wall_s"] / e["iterations"], throttled))' "$work/trainer.out" "$RANK")
read -r before_ns _ < "/proc/$rank/schedstat"
began_ns=$(date +%s%N)
perf record -q -F 4999 -g -p "$rank" -o "$work/rank.data" -- sleep "$SAMPLE_SECONDS" 2>/dev/null
read -r after_ns _ < "/proc/$rank/schedstat"
ended_ns=$(date +%s%N)
perf record -q -F 999 -a -o "$work/all.data" -- sleep "$SAMPLE_SECONDS" 2>/dev/null

printf '%s, %d workers, %d servers, %s, %s core per host, threaded NAPI %s, rank %d\n' "$ARCHITECTURE" "$WORKERS" \
  "$SERVERS" "$BANDWIDTH" "$CPU" "$THREADED_NAPI" "$RANK"
echo "before sampling, the rank reported $unsampled"
printf 'its main thread ran %.3f cores over %.1f s\n' \
  "$(echo "($after_ns - $before_ns) / ($ended_ns - $began_ns)" | bc -l)" \
  "$(echo "($ended_ns - $began_ns) / 1000000000" | bc -l)"
# The latest epoch's wall time per iteration, so that shares become
# milliseconds of CPU per iteration.
iteration_ms=$("$PYTHON" -c '
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "\"epoch\"" in l]
e = [x for x in e if x.get("event") == "epoch"][-1]
print(1e3 * e["wall_s"] / e["iterations"])' "$work/trainer.out")
cpu_ms=$(echo "($after_ns - $before_ns) / ($ended_ns - $began_ns) * $iteration_ms" | bc -l)
printf 'an iteration took %.2f ms, of which the main thread ran %.2f ms\n' "$iteration_ms" "$cpu_ms"
echo "share of the rank's samples under each (they overlap), and that share of its CPU per iteration:"
perf report -i "$work/rank.data" --children --sort sym --stdio 2>/dev/null |
  awk -v cpu_ms="$cpu_ms" '/^ +[0-9.]+%/ { for (i = 3; i <= NF; ++i) if ($i ~ /^(handle_softirqs|finish_task_switch|clock_nanosleep|__GI___readv|__GI___writev|__poll|sgemm_kernel|opal_progress|dmlbench::.*ReduceAndUpdate)/) { name = $i; sub(/(@.*|\.isra.*|_[A-Z]+$)/, "", name); if (!(name in seen)) { seen[name] = $1; order[++n] = name } } }
       END { for (i = 1; i <= n; ++i) printf "  %-22s %7s %7.2f ms\n", order[i], seen[order[i]], cpu_ms * seen[order[i]] / 100 }'
echo "the rank's own functions by their samples (self, the largest):"
perf report -i "$work/rank.data" --no-children --sort sym --stdio 2>/dev/null |
  awk -v cpu_ms="$cpu_ms" '/^ +[0-9.]+%/ { pct = $1; sub(/%/, "", pct); name = ""; for (i = 3; i <= NF; ++i) name = name (i > 3 ? " " : "") $i; printf "  %7s %6.2f ms  %s\n", $1, cpu_ms * pct / 100, substr(name, 1, 70) }' | head -10
echo "the machine's samples by thread (the largest):"
perf report -i "$work/all.data" --sort comm --stdio 2>/dev/null | awk '/^ +[0-9.]+%/ { printf "  %-22s %s\n", $2, $1 }' | head -8
