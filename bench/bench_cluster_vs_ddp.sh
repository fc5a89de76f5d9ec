#!/usr/bin/env bash
# Our trainer (`ring` and `mpi`) against PyTorch DistributedDataParallel
# (gloo) on the same emulated cluster in the same run: 4 hosts, 1 Gbit/s
# links both ways, 0.4 core each, one rank per host, one thread per rank,
# the 784-128-32-10 MLP at local batch 100, synthetic data.
#
# Reports throughput (samples/s, median of REPS) and two ratios:
#   ours / DDP                   goal >= 3
#   ours / physical bound        goal >= 0.70, where the bound per iteration
#     is the compute time at the host's CPU share (a 1-worker run on one
#     host: no communication, over ten times the iterations) + 2(w-1)/w * W/B
#     (W = 104,938 * 4 bytes).
# Needs root. Installs Debian's python3-torch if it is missing (the peer
# only; the project itself does not need it). The hosts run the trainer and
# bench/ddp_peer.py from where they lie on this machine, which they see
# except for root's home, /tmp and /dev/shm (each host has its own): keep
# the tree elsewhere.
#   bench/bench_cluster_vs_ddp.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
set -euo pipefail
DMLBENCH=${1:-build/orchestrator/dmlbench}
TRAINER=$(realpath "${2:-build/trainer/dmlbench-trainer}")
REPS=${REPS:-3}
ITERATIONS=${ITERATIONS:-150}
WORKERS=4
BATCH=100
BANDWIDTH_BITS=1000000000
PYTHON=/usr/bin/python3
PEER=$(realpath "$(dirname "$0")/ddp_peer.py")

if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch >/dev/null
fi

name="dd$(( $$ % 10000 ))"
work=$(mktemp -d)
state="$work/cluster"
cleanup() { "$DMLBENCH" cluster --name "$name" --state-dir "$state" down >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$DMLBENCH" cluster --name "$name" --state-dir "$state" up --hosts "$WORKERS" --bandwidth 1gbit --cpu 0.4

# Hosts and mpirun settings exactly as the inventory has them.
mapfile -t addresses < <("$PYTHON" -c '
import sys, tomllib
for h in tomllib.load(open(sys.argv[1], "rb"))["host"]: print(h["address"])' "$state/inventory.toml")
mapfile -t names < <("$PYTHON" -c '
import sys, tomllib
for h in tomllib.load(open(sys.argv[1], "rb"))["host"]: print(h["name"])' "$state/inventory.toml")
# As for every mpirun dmlbench starts (kMpirunEnvironment, orchestrator/launch/launcher.h).
export OMPI_MCA_rtc_hwloc_vmhole=none
mapfile -t mpi_args < <("$PYTHON" -c '
import sys, tomllib
for a in tomllib.load(open(sys.argv[1], "rb"))["mpi_args"]: print(a)' "$state/inventory.toml")
# The cluster's key and known_hosts (in its runtime directory), as the inventory names them.
identity=$("$PYTHON" -c '
import sys, tomllib
print(tomllib.load(open(sys.argv[1], "rb"))["host"][0]["identity_file"])' "$state/inventory.toml")
known_hosts=$("$PYTHON" -c '
import sys, tomllib
print(tomllib.load(open(sys.argv[1], "rb"))["known_hosts"])' "$state/inventory.toml")
ssh_to() {
  local host=$1; shift
  ssh -F none -i "$identity" -o UserKnownHostsFile="$known_hosts" -o StrictHostKeyChecking=yes \
      -o BatchMode=yes -o LogLevel=ERROR "root@$host" "$@"
}
hosts_list() { local IFS=,; echo "${addresses[*]:0:$1}"; }

# Throughput of our trainer: the second epoch's (the first one warms up).
ours() {
  local architecture=$1 workers=$2 iterations=${3:-$ITERATIONS}
  mpirun "${mpi_args[@]}" -H "$(hosts_list "$workers")" -np "$workers" "$TRAINER" \
      --architecture "$architecture" --synthetic $((iterations * BATCH * workers)) --epochs 2 \
      --batch-size "$BATCH" --events - --no-evaluate --quiet |
    "$PYTHON" -c '
import json, sys
epochs = [json.loads(l) for l in sys.stdin if l.startswith("{") and "\"epoch\"" in l]
e = [x for x in epochs if x.get("event") == "epoch"][-1]
print(e["throughput_samples_per_s"], e["wall_s"] / e["iterations"],
      e["phases"]["exchange"]["mean_s"] / e["iterations"],
      (e["phases"]["forward"]["mean_s"] + e["phases"]["backward"]["mean_s"]) / e["iterations"])'
}

ddp() {
  local port=$((29500 + RANDOM % 1000)) pids=() r out
  out="$work/ddp.out"
  for ((r = WORKERS - 1; r >= 0; r--)); do
    ssh_to "${addresses[$r]}" "GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 $PYTHON $PEER --rank $r \
        --world-size $WORKERS --master ${addresses[0]}:$port --iterations $ITERATIONS \
        --batch-size $BATCH" > "$work/ddp.$r" &
    pids+=($!)
  done
  wait "${pids[@]}"
  # Every DDP rank must have run under its own host's CPU quota, as ours do.
  for ((r = 0; r < WORKERS; r++)); do
    in_cgroup "${names[$r]}" "$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["cpu_cgroup"])' "$work/ddp.$r")" "DDP rank $r"
  done
  "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["throughput_samples_per_s"])' "$work/ddp.0"
}

# in_cgroup HOST CGROUP WHO: fails the benchmark unless CGROUP is HOST's.
in_cgroup() {
  if [[ "$2" != */"$1" ]]; then
    echo "bench_cluster_vs_ddp: $3 ran in cpu cgroup '$2', not in $1's" >&2
    exit 1
  fi
}

# Our ranks are started the same way (mpirun over the hosts' sshd); check once.
mapfile -t our_cgroups < <(mpirun "${mpi_args[@]}" -H "$(hosts_list "$WORKERS")" -np "$WORKERS" \
    sh -c 'echo "$OMPI_COMM_WORLD_RANK $(grep -E "^[0-9]+:([^:]*,)?cpu(,[^:]*)?:|^0::" /proc/self/cgroup | head -1 | cut -d: -f3)"' | sort -n)
for line in "${our_cgroups[@]}"; do
  read -r r cgroup <<< "$line"
  in_cgroup "${names[$r]}" "$cgroup" "trainer rank $r"
done
echo "every trainer rank runs in its host's cpu cgroup (each DDP rank is checked after its run)"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -a t_ring t_mpi t_ddp t_single
for ((i = 1; i <= REPS; i++)); do
  # Ten times the iterations: the CPU quota comes in 100 ms periods, and an
  # epoch of 150 iterations (~45 ms of CPU) measured 0.7 or 1.2 ms per
  # iteration depending on where in a period it began.
  read -r single_tp single_iter _ _ < <(ours ring 1 $((ITERATIONS * 10)))
  read -r ring_tp ring_iter ring_exchange ring_compute < <(ours ring "$WORKERS")
  read -r mpi_tp mpi_iter mpi_exchange _ < <(ours mpi "$WORKERS")
  ddp_tp=$(ddp)
  t_single+=("$single_iter"); t_ring+=("$ring_tp"); t_mpi+=("$mpi_tp"); t_ddp+=("$ddp_tp")
  printf 'rep %d: ring %.0f (%.2f ms/it: exchange %.2f, compute %.2f)  mpi %.0f (exchange %.2f ms/it)  ddp %.0f samples/s  1-host compute %.2f ms/it\n' \
    "$i" "$ring_tp" "$(echo "$ring_iter * 1000" | bc -l)" "$(echo "$ring_exchange * 1000" | bc -l)" \
    "$(echo "$ring_compute * 1000" | bc -l)" "$mpi_tp" "$(echo "$mpi_exchange * 1000" | bc -l)" "$ddp_tp" \
    "$(echo "$single_iter * 1000" | bc -l)"
done

ring=$(printf '%s\n' "${t_ring[@]}" | median)
mpi=$(printf '%s\n' "${t_mpi[@]}" | median)
ddp=$(printf '%s\n' "${t_ddp[@]}" | median)
compute=$(printf '%s\n' "${t_single[@]}" | median)
# Physical bound per iteration: compute at the share + 2(w-1)/w * W/B.
comm=$(echo "2 * ($WORKERS - 1) / $WORKERS * 104938 * 4 / ($BANDWIDTH_BITS / 8)" | bc -l)
bound=$(echo "$WORKERS * $BATCH / ($compute + $comm)" | bc -l)
printf '\n%d hosts, 1 Gbit/s, 0.4 core, batch %d, %d iterations, median of %d\n' "$WORKERS" "$BATCH" "$ITERATIONS" "$REPS"
printf 'physical bound: %.2f ms compute + %.2f ms communication per iteration = %.0f samples/s\n' \
  "$(echo "$compute * 1000" | bc -l)" "$(echo "$comm * 1000" | bc -l)" "$bound"
printf '%-10s %12s %10s %10s\n' peer samples/s "/ DDP" "/ bound"
for row in "ring $ring" "mpi $mpi" "ddp-gloo $ddp"; do
  set -- $row
  printf '%-10s %12.0f %9.2fx %9.0f%%\n' "$1" "$2" "$(echo "$2 / $ddp" | bc -l)" "$(echo "100 * $2 / $bound" | bc -l)"
done
