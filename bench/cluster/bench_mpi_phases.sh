#!/usr/bin/env bash
# Where MPI's allreduce (libnbc's Rabenseifner, `--architecture mpi`) spends
# an iteration on the emulated cluster, phase by phase, from the packets:
# tcpdump runs in every host's namespace while the trainer runs, and
# bench/analysis/pcap_phases.py cuts each iteration of the second epoch into
#   fold               rank 1 -> rank 0: its half, then the reduced half (W)
#   halving+doubling   from the fold's end to rank 0's first byte of the result
#   final              rank 0 -> rank 1: the result (W), to the next fold
# (for w = 5, 6, 7, where libnbc folds w - 4 ranks into their partners), or
# the whole period with 4 workers, as medians in ms and in W/B (W the
# gradient's bytes, B the probed rate). The model counts 1 + 1.5 + 1 W/B
# (README, "Where the model still misses").
#
# Needs root (its own cluster, removed at the end) and tcpdump (installed
# with apt-get when missing: a diagnostic, not something dmlbench needs).
# The trainer is uploaded to every host (each has its own /tmp, /dev/shm and
# root's home), so the build may lie anywhere.
#   bench/cluster/bench_mpi_phases.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
#   env: WORKERS ("4 5 6 7"), BANDWIDTH (100mbit), CPU (cores per host;
#   unset: uncapped), ITERATIONS (20 per epoch)
set -euo pipefail
DMLBENCH=${1:-build/orchestrator/dmlbench}
TRAINER=$(realpath "${2:-build/trainer/dmlbench-trainer}")
WORKERS=${WORKERS:-4 5 6 7}
BANDWIDTH=${BANDWIDTH:-100mbit}
ITERATIONS=${ITERATIONS:-20}
BATCH=100
PYTHON=/usr/bin/python3
HERE=$(realpath "$(dirname "$0")")

[ -x "$TRAINER" ] || { echo "bench_mpi_phases.sh: no trainer at $TRAINER; build it first" >&2; exit 1; }
if ! command -v tcpdump >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tcpdump >/dev/null
fi
hosts=0
for w in $WORKERS; do ((w > hosts)) && hosts=$w; done

captures=()
cluster_before_down() { for pid in "${captures[@]}"; do kill "$pid" 2>/dev/null || true; done; }
source "$(dirname "$0")/cluster_lib.sh"
cluster_up mp "$hosts" "$BANDWIDTH" "${CPU:-}"
TRAINER=$(cluster_upload "$TRAINER")  # the hosts start their own copy
cluster_probe  # B as the probe measures it (quota lifted)
namespaces=("${names[@]}")

share="uncapped"
[ -n "${CPU:-}" ] && share="$CPU core per host"
printf '%s links (probe: B %s MB/s), %s, batch %d, %d iterations per epoch; medians over the second epoch\n' \
  "$BANDWIDTH" "$bandwidth_mb" "$share" "$BATCH" "$ITERATIONS"
for w in $WORKERS; do
  captures=()
  for ((i = 0; i < w; i++)); do
    ip netns exec "${namespaces[$i]}" tcpdump -i eth0 -s 96 -U -w "$work/rank$i.pcap" tcp 2>/dev/null &
    captures+=($!)
  done
  sleep 1
  mpirun "${mpi_args[@]}" -H "$(hosts_list "$w")" -np "$w" "$TRAINER" --architecture mpi \
    --synthetic $((ITERATIONS * BATCH * w)) --epochs 2 --batch-size "$BATCH" \
    --no-evaluate --quiet --events - | grep '^{' > "$work/events.jsonl"
  sleep 1
  for pid in "${captures[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${captures[@]}"; do wait "$pid" 2>/dev/null || true; done
  captures=()
  addr_list=$(IFS=,; echo "${addresses[*]:0:$w}")
  in_rank_order=()
  for ((i = 0; i < w; i++)); do in_rank_order+=("$work/rank$i.pcap"); done
  "$PYTHON" "$HERE/../analysis/pcap_phases.py" --workers "$w" --addresses "$addr_list" --events "$work/events.jsonl" \
    --bytes-per-s "$("$PYTHON" -c "print($bandwidth_mb * 1e6)")" "${in_rank_order[@]}"
  rm -f "$work"/rank*.pcap
done
