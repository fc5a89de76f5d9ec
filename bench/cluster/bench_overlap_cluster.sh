#!/usr/bin/env bash
# Overlap of communication with the backward pass, per architecture, on the
# emulated cluster: one rank per host, so ranks do not compete for cores.
# WORKERS workers (ps: plus k server hosts), 784-128-32-10, local batch 100,
# synthetic data, overlap off and on: REPS pairs of runs, off then on side by
# side, 2 epochs each, and only the second epoch counts (the first warms up).
#
# The table shows medians over runs of per-iteration means over workers, ms:
#   iter      epoch wall time / iterations
#   compute   forward + backward
#   exchange  time in the scheme's calls, update included
#   exposed   part of exchange the worker was blocked
#   comm      time the exchange was in flight, hidden or not
# and per architecture the target figure
#   iter(on) / max(compute(off), exchange(off))   goal <= 1.05
# of the medians, and pair by pair (the median over the pairs, and their
# least and largest), which the machine's drift during a run moves less.
# Then, per architecture, the phases of every rank in the last run with
# overlap off and on (ms per iteration; cpu = the process's CPU time, what
# the quota charges: cpu / CPU is the iteration a quota-bound rank can reach),
# to tell where an iteration above the bound goes.
#
# Needs root (it makes its own cluster and removes it at the end). The
# trainer is uploaded to every host (each has its own /tmp, /dev/shm and
# root's home), so the build may lie anywhere.
#   bench/cluster/bench_overlap_cluster.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
#   env: WORKERS (4), SERVERS ("1": the ps k values to run), CPU (cores per
#   host; default the largest of 0.4 and 0.9 * cores / hosts that fits),
#   BANDWIDTH (1gbit), BUCKET_BYTES (16384), ITERATIONS (200), REPS (5),
#   ARCHITECTURES ("ring mpi p2p ps"), TIMELINE_DIR (when set: a Chrome
#   trace of the last overlap-on run of each architecture goes there; it
#   must be a directory the hosts see: not under /tmp, /dev/shm or root's
#   home, refused at start).
set -euo pipefail
DMLBENCH=${1:-build/orchestrator/dmlbench}
TRAINER=$(realpath "${2:-build/trainer/dmlbench-trainer}")
WORKERS=${WORKERS:-4}
SERVERS=${SERVERS:-1}
BANDWIDTH=${BANDWIDTH:-1gbit}
BUCKET_BYTES=${BUCKET_BYTES:-16384}
ITERATIONS=${ITERATIONS:-200}
REPS=${REPS:-5}
ARCHITECTURES=${ARCHITECTURES:-ring mpi p2p ps}
BATCH=100
PYTHON=/usr/bin/python3

[ -x "$TRAINER" ] || { echo "bench_overlap_cluster.sh: no trainer at $TRAINER; build it first" >&2; exit 1; }
most_servers=0
if [[ " $ARCHITECTURES " == *" ps "* ]]; then
  for k in $SERVERS; do ((k > most_servers)) && most_servers=$k; done
fi
HOSTS=$((WORKERS + most_servers))
# The cluster refuses shares summing to more than 0.9 of the cores.
CPU=${CPU:-$("$PYTHON" -c "import os; print(min(0.4, int(90 * os.cpu_count() / $HOSTS) / 100))")}

source "$(dirname "$0")/cluster_lib.sh"
[[ -z ${TIMELINE_DIR:-} ]] || hosts_see_dir "$TIMELINE_DIR" TIMELINE_DIR
cluster_up ov "$HOSTS" "$BANDWIDTH" "$CPU"
TRAINER=$(cluster_upload "$TRAINER")  # the hosts start their own copy

# One run; prints "iter compute exchange exposed comm" in ms for the last
# epoch, and leaves the events in $work/last.jsonl.
run_once() {
  local arch=$1 servers=$2 overlap=$3 ranks=$WORKERS extra=()
  if [ "$arch" = ps ]; then ranks=$((WORKERS + servers)); extra=(--servers "$servers"); fi
  if [ "$overlap" = on ]; then extra+=(--overlap); fi
  if [ -n "${TIMELINE_DIR:-}" ] && [ "$overlap" = on ]; then
    extra+=(--timeline "$TIMELINE_DIR/$arch${servers/#0/}-overlap.json")
  fi
  mpirun "${mpi_args[@]}" -H "$(hosts_list "$ranks")" -np "$ranks" "$TRAINER" \
    --architecture "$arch" "${extra[@]}" --bucket-bytes "$BUCKET_BYTES" \
    --synthetic $((ITERATIONS * BATCH * WORKERS)) --epochs 2 --batch-size "$BATCH" \
    --no-evaluate --quiet --events - | grep '^{' > "$work/last.jsonl"
  "$PYTHON" - "$work/last.jsonl" <<'EOF'
import json, sys
e = [x for x in map(json.loads, open(sys.argv[1])) if x["event"] == "epoch"][-1]
n, p = e["iterations"], e["phases"]
ms = lambda s: 1e3 * s / n
print(ms(e["wall_s"]), ms(p["forward"]["mean_s"] + p["backward"]["mean_s"]),
      ms(p["exchange"]["mean_s"] + p["update"]["mean_s"]), ms(p["exposed_comm"]["mean_s"]),
      ms(p["comm"]["mean_s"]))
EOF
}

# Every rank's phases in the run whose events FILE holds, ms per iteration.
phases() {
  "$PYTHON" - "$1" <<'EOF'
import json, sys
e = [x for x in map(json.loads, open(sys.argv[1])) if x["event"] == "epoch"][-1]
n = e["iterations"]
print("    rank role    forward backward exchange   update  exposed     comm     wait      cpu")
for r in e["ranks"]:
    print("    %4d %-6s" % (r["rank"], r["role"]) + "".join(
        " %8.3f" % (1e3 * r[k] / n) for k in ("forward_s", "backward_s", "exchange_s", "update_s",
                                              "exposed_comm_s", "comm_s", "wait_s", "cpu_s")))
EOF
}

# REPS pairs of runs of ARCH with K servers, overlap off then on, side by
# side so that the machine's drift falls on both alike: each run's line
# goes to $work/off.txt or $work/on.txt, the last pair's events to
# $work/last-off.jsonl and $work/last-on.jsonl.
measure_pairs() {
  : > "$work/off.txt"
  : > "$work/on.txt"
  for _ in $(seq "$REPS"); do
    for overlap in off on; do
      run_once "$1" "$2" "$overlap" >> "$work/$overlap.txt"
      cp "$work/last.jsonl" "$work/last-$overlap.jsonl"
    done
  done
}
medians() { awk -f "$(dirname "$0")/../column_medians.awk" "$1"; }
# The target's ratio of each pair, iter(on) / max(compute, exchange)(off):
# "median min max" over the pairs.
paired_ratios() {
  paste -d' ' "$work/off.txt" "$work/on.txt" |
    awk '{ m = ($2 > $3) ? $2 : $3; print $6 / m }' | sort -g > "$work/ratios.txt"
  printf '%.3f %.3f %.3f' "$(medians "$work/ratios.txt")" "$(head -1 "$work/ratios.txt")" \
    "$(tail -1 "$work/ratios.txt")"
}

printf '%d workers, one per host, %s links, %s core per host, batch %d, %s-byte buckets, %d iterations, median of %d\n' \
  "$WORKERS" "$BANDWIDTH" "$CPU" "$BATCH" "$BUCKET_BYTES" "$ITERATIONS" "$REPS"
printf '%-5s %-7s %8s %8s %9s %8s %8s\n' arch overlap iter compute exchange exposed comm
summary=() details=()
for arch in $ARCHITECTURES; do
  if [ "$arch" = ps ]; then ks=$SERVERS; else ks=0; fi
  for k in $ks; do
    label=$arch; [ "$arch" = ps ] && label="ps$k"
    measure_pairs "$arch" "$k"
    read -r off_iter off_compute off_exchange off_exposed off_comm <<<"$(medians "$work/off.txt")"
    read -r on_iter on_compute on_exchange on_exposed on_comm <<<"$(medians "$work/on.txt")"
    read -r pair_median pair_min pair_max <<<"$(paired_ratios)"
    details+=("  $label, overlap off:" "$(phases "$work/last-off.jsonl")")
    details+=("  $label, overlap on:" "$(phases "$work/last-on.jsonl")")
    printf '%-5s %-7s %8.3f %8.3f %9.3f %8.3f %8.3f\n' \
      "$label" off "$off_iter" "$off_compute" "$off_exchange" "$off_exposed" "$off_comm" \
      "$label" on "$on_iter" "$on_compute" "$on_exchange" "$on_exposed" "$on_comm"
    summary+=("$(awk -v a="$label" -v on="$on_iter" -v c="$off_compute" -v e="$off_exchange" \
      -v pm="$pair_median" -v lo="$pair_min" -v hi="$pair_max" \
      'BEGIN { m = (c > e) ? c : e
               printf "%-5s iter(on) / max(compute, exchange)(off) = %.3f / %.3f = %.3f;", a, on, m, on / m
               printf " pair by pair %.3f (%.3f-%.3f)", pm, lo, hi }')")
  done
done
echo
printf '%s\n' "${summary[@]}"
echo
echo "per rank, last run of each configuration (ms per iteration):"
printf '%s\n' "${details[@]}"
