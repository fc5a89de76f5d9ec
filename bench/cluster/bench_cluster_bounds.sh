#!/usr/bin/env bash
# Every gradient exchange against its own lower bound, and against PyTorch
# DistributedDataParallel (gloo), on one emulated cluster in one run.
#
# Runs ring, mpi, p2p and ps (k = 1, 2, 4 servers), each with overlap off and
# on, and DDP, REPS times each (the configurations interleaved within each
# repetition), 4 workers, one rank per host, one thread per rank, the
# 784-128-32-10 MLP at local batch 100, synthetic data. Prints per
# configuration the median samples/s, the median lower bound on the
# iteration time, measured/bound (the throughput as a fraction of what the
# bound allows; median and largest over the repetitions), the ratio to DDP,
# and the share of quota periods in which the most throttled host ran out
# of its CPU quota (near 100 % the quota binds; at a few % it does not).
# A run that beats its own bound makes the script fail: the bound is wrong.
#
# The bound (bench/BOUNDS.md has the derivation, bench/cluster/cluster_bounds.py the
# arithmetic), per iteration, in seconds, from the run's own last epoch:
#   max( schedule, link rate, cpu quota )
#   schedule   = max over workers of  fwd + bwd + window          (overlap off)
#                                     fwd + max(bwd + alpha, window) (on)
#                fwd, bwd: the worker's forward and backward time per
#                iteration as measured in this run (the CPU it really got)
#   window     = max(n * alpha, X/B - beta): n dependent message latencies
#                (ring, mpi 2(w-1); p2p, ps 2), X bytes through the busiest
#                link in each direction (ring, mpi, p2p 2(w-1)/w * W per
#                worker; ps(k) max(W, w*W/k) at the busiest end), less what
#                the link's token bucket saved while it was idle
#   link rate  = X/B - beta/I        (I iterations: one burst per epoch)
#   cpu quota  = max over ranks of (cpu_s/q - period)/I: no host can use
#                more than q cores (cpu_s: the rank's CPU time in the epoch)
#   W = parameter_bytes of run_start (419,752 B), w = 4 workers.
#   /whole (ps without parts or overlap only): the run against the bound
#   with one more term, what any schedule of whole shards allows,
#   (w+1) W/(k B) + fwd + bwd less two bursts (BOUNDS.md): no whole
#   exchange passes w/(w+1) of the link's part of the bound.
#   B [bytes/s]: the payload the links' token bucket passes at its rate,
#   1,448 bytes of TCP payload per 1,514-byte frame (bench/BOUNDS.md; a
#   stream measures it: bench/cluster/bench_link_stream.sh). alpha [s]: `dmlbench
#   cluster probe` of this cluster, run with the quota lifted. beta [s]: the
#   links' tbf burst (as tc reports it) divided by the configured rate.
#
# Sizing: ps(4) needs 4 workers + 4 servers = 8 hosts, and `cluster up`
# refuses shares summing above 0.9 x the cores (1.8 of this machine's 2), so
# the default is one cluster of 8 hosts at 0.2 core each and every
# configuration (DDP too) runs on it: one share for all, as the studies run.
# HOSTS=4 CPU=0.4 gives the 4-host 0.4-core cluster (ps is then skipped).
#
# Environment (defaults in brackets):
#   NETWORK   link rate, each direction [1gbit]; the cluster is brought up
#             at this rate (run once per rate: 1gbit, 100mbit)
#   CPU [0.2] HOSTS [8]    share per host in cores, hosts
#   WORKERS   [4] workers, one per host (host i runs on CPU i mod the
#             machine's cores: with 2 workers on 2 cores none shares one)
#   PIN       [on] off: `cluster up --no-pin`, every host free to run on
#             any CPU
#   CONFIGS   [ring mpi p2p ps1 ps2 ps4 ddp]; NAME@BYTES runs NAME with
#             --partition-bytes BYTES (e.g. ps1@16384), beside NAME if both;
#             ps1+turn runs ps with 1 server and --pulls-in-turn (overlap off)
#   OVERLAP   [off on]
#   REPS      [5]
#   KEEP      a file to copy every run's result to (JSON Lines, with the
#             bound's terms and per-rank figures)
#   EPOCH_S   [1.0] aimed epoch length, sets each configuration's iterations
#             (at least 10); the first of the two epochs warms up
#   TIMELINE_DIR  when set, every run of ours also writes its Chrome trace
#             (trainer --timeline) there, as ARCH-kSERVERS-OVERLAP-pPARTITION-
#             (once|turn)-repI.json; a folder the hosts see (not under /tmp,
#             /dev/shm or root's home: refused at start)
# Needs root. Installs Debian's python3-torch if it is missing (the DDP peer
# only). The trainer and bench/cluster/ddp_peer.py are uploaded to every host
# (each has its own /tmp, /dev/shm and root's home), so the tree and the
# build may lie anywhere.
#   bench/cluster/bench_cluster_bounds.sh [path/to/dmlbench [path/to/dmlbench-trainer]]
set -euo pipefail
DMLBENCH=$(realpath "${1:-build/orchestrator/dmlbench}")
TRAINER=$(realpath "${2:-build/trainer/dmlbench-trainer}")
NETWORK=${NETWORK:-1gbit}
CPU=${CPU:-0.2}
HOSTS=${HOSTS:-8}
CONFIGS=${CONFIGS:-ring mpi p2p ps1 ps2 ps4 ddp}
OVERLAP=${OVERLAP:-off on}
REPS=${REPS:-5}
EPOCH_S=${EPOCH_S:-1.0}
WORKERS=${WORKERS:-4}
BATCH=100
PYTHON=/usr/bin/python3
HERE=$(realpath "$(dirname "$0")")
PEER=$HERE/ddp_peer.py
BOUNDS=$HERE/cluster_bounds.py
"$PYTHON" "$BOUNDS" self-test >/dev/null  # the arithmetic, against hand-computed figures

if [[ " $CONFIGS " == *" ddp "* ]] && ! "$PYTHON" -c 'import torch' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch >/dev/null
fi

source "$HERE/cluster_lib.sh"
[[ -z ${TIMELINE_DIR:-} ]] || hosts_see_dir "$TIMELINE_DIR" TIMELINE_DIR
cluster_up cb "$HOSTS" "$NETWORK" "$CPU"
cat "$work/cluster-up.txt"
# What the hosts start, from their own copies.
TRAINER=$(cluster_upload "$TRAINER")
PEER=$(cluster_upload "$PEER")
if ((WORKERS > $(nproc))) && [ "${PIN:-on}" != off ]; then
  echo "$WORKERS workers on $(nproc) cores: host i runs on CPU i mod $(nproc), so workers share cores and" \
       "compute at once after each exchange; the slowest one's compute sets each iteration, the bound" \
       "takes each worker's mean (bench/README.md)"
fi
identity=$(inventory 'print(inv["host"][0]["identity_file"])')
known_hosts=$(inventory 'print(inv["known_hosts"])')
ssh_to() {
  local host=$1; shift
  ssh -F none -i "$identity" -o UserKnownHostsFile="$known_hosts" -o StrictHostKeyChecking=yes \
      -o BatchMode=yes -o LogLevel=ERROR "root@$host" "$@"
}

# in_cgroup HOST CGROUP WHO: fails the benchmark unless CGROUP is HOST's.
in_cgroup() {
  if [[ "$2" != */"$1" ]]; then
    echo "bench_cluster_bounds: $3 ran in cpu cgroup '$2', not in $1's" >&2
    exit 1
  fi
}
# Our ranks are started the same way (mpirun over the hosts' sshd); check once.
mapfile -t our_cgroups < <(mpirun "${mpi_args[@]}" -H "$(hosts_list "$HOSTS")" -np "$HOSTS" \
    sh -c 'echo "$OMPI_COMM_WORLD_RANK $(grep -E "^[0-9]+:([^:]*,)?cpu(,[^:]*)?:|^0::" /proc/self/cgroup | head -1 | cut -d: -f3)"' | sort -n)
for line in "${our_cgroups[@]}"; do
  read -r r cgroup <<< "$line"
  in_cgroup "${names[$r]}" "$cgroup" "trainer rank $r"
done

# The hosts' quota is lifted while a run starts (Open MPI's daemons, the
# trainer's start and its synthetic data would take seconds at 0.2 core) and
# applies again from the trainer's first event on, as dmlbench does
# (QuotaLift, orchestrator/launch/cluster/cluster.h); the first epoch, which
# warms up, is never measured. A run that kept the lift would beat its CPU
# quota term, and the table would say so.
quota_files=() quotas=()
for host in "${names[@]}"; do
  if [[ -f /sys/fs/cgroup/cpu/$host/cpu.cfs_quota_us ]]; then
    quota_files+=("/sys/fs/cgroup/cpu/$host/cpu.cfs_quota_us"); unlimited=-1
  elif [[ -f /sys/fs/cgroup/$host/cpu.max ]]; then
    quota_files+=("/sys/fs/cgroup/$host/cpu.max"); unlimited=max
  else
    echo "bench_cluster_bounds: no cpu cgroup of host $host under /sys/fs/cgroup" >&2
    exit 1
  fi
  quotas+=("$(cat "${quota_files[-1]}")")
done
lift_quota() { local f; for f in "${quota_files[@]}"; do echo "$unlimited" > "$f"; done; }
restore_quota() { local i; for i in "${!quota_files[@]}"; do echo "${quotas[$i]}" > "${quota_files[$i]}"; done; }

# The links: alpha as the probe measures it (quota lifted), beta from the
# token bucket tc reports on host 0's upload, and B the payload the bucket
# passes at its rate: tbf counts each frame whole, 1,448 bytes of TCP
# payload in 1,514 (Ethernet, IP, TCP with timestamps), 119.55 MB/s at
# 1 Gbit/s; a stream that never lets the link idle carries 119.60
# (bench/cluster/bench_link_stream.sh). The probe's ping-pong reads more (120.5):
# each of its messages starts with the bucket's burst in hand, which the
# bound counts apart (beta); and on a busy machine it read less (103.7),
# which would make a bound the runs beat. Its B is printed beside.
cluster_probe
qdisc=$(ip netns exec "${names[0]}" tc qdisc show dev eth0 | grep -m1 ' tbf ')
read -r burst_s payload_bytes_per_s < <("$PYTHON" "$BOUNDS" link "$qdisc")
[[ -n ${payload_bytes_per_s:-} ]] || exit 1  # the script said why
alpha_s=$(awk -v a="$alpha_us" 'BEGIN { printf "%.9g", a * 1e-6 }')
bandwidth=$payload_bytes_per_s
printf '%d hosts, %s links (tbf both ways), %s core per host; probe (quota lifted): alpha %s us, B %s MB/s; the bound: B %s MB/s (1448 of 1514 bytes at the rate); bucket %s ms at the rate\n' \
  "$HOSTS" "$NETWORK" "$CPU" "$alpha_us" "$bandwidth_mb" "$(awk -v p="$payload_bytes_per_s" 'BEGIN { printf "%.3f", p / 1e6 }')" \
  "$(awk -v b="$burst_s" 'BEGIN { printf "%.3f", b * 1e3 }')"
awk -v b="$bandwidth_mb" -v p="$payload_bytes_per_s" 'BEGIN { if (b * 1e6 < 0.97 * p)
  printf "the probe read B well below the payload the links pass at their rate: the machine was busy\n" }'

# iterations ARCH SERVERS: per epoch, so that an epoch lasts about EPOCH_S
# (guessed from the bytes of a push-then-pull schedule and 0.5 ms of CPU).
iterations() {
  "$PYTHON" -c '
import sys
arch, k, w, W, B, q, epoch = sys.argv[1], int(sys.argv[2]), int(sys.argv[6]), 419752, float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
link = 2 * max(W, w * W / k) if arch == "ps" else 2 * (w - 1) / w * W
guess = link / B + 5e-4 / (q if 0 < q < 1 else 1)
print(max(10, round(epoch / guess)))' "$1" "$2" "$bandwidth" "$CPU" "$EPOCH_S" "$WORKERS"
}

# ours ARCH SERVERS OVERLAP PARTITION OUT [TURN [TIMELINE]]: one run; its
# events go to OUT. TURN = turn: the server's pulls in turn; TIMELINE: a
# file for its trace.
ours() {
  local architecture=$1 servers=$2 overlap=$3 partition=$4 out=$5 turn=${6:-} timeline=${7:-}
  local ranks=$(($WORKERS + $2)) n pid args=()
  n=$(iterations "$architecture" "$servers")
  args=(--architecture "$architecture")
  if ((servers)); then args+=(--servers "$servers"); fi
  if ((partition)); then args+=(--partition-bytes "$partition"); fi
  if [[ $overlap == on ]]; then args+=(--overlap); fi
  if [[ $turn == turn ]]; then args+=(--pulls-in-turn); fi
  if [[ -n $timeline ]]; then args+=(--timeline "$timeline"); fi
  lift_quota
  mpirun "${mpi_args[@]}" -H "$(hosts_list "$ranks")" -np "$ranks" "$TRAINER" "${args[@]}" \
      --synthetic $((n * BATCH * WORKERS)) --epochs 2 --batch-size "$BATCH" --events - --no-evaluate --quiet > "$out" &
  pid=$!
  until grep -q '"run_start"' "$out" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
  restore_quota
  wait "$pid"
}

ddp() {
  local port=$((29500 + RANDOM % 1000)) pids=() r n
  n=$(iterations ring 0)
  for ((r = WORKERS - 1; r >= 0; r--)); do
    ssh_to "${addresses[$r]}" "GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 $PYTHON $PEER --rank $r \
        --world-size $WORKERS --master ${addresses[0]}:$port --iterations $n \
        --batch-size $BATCH" > "$work/ddp.$r" &
    pids+=($!)
  done
  wait "${pids[@]}"
  # Every DDP rank must have run under its own host's CPU quota, as ours do.
  for ((r = 0; r < WORKERS; r++)); do
    in_cgroup "${names[$r]}" "$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["cpu_cgroup"])' "$work/ddp.$r")" "DDP rank $r"
  done
}

runs=()
for entry in $CONFIGS; do
  config=${entry%@*} partition=0
  [[ $entry == *@* ]] && partition=${entry#*@}
  case $config in
    ring|mpi|p2p) for o in $OVERLAP; do runs+=("$config 0 $o $partition"); done ;;
    ps1+turn)
      if ((WORKERS + 1 > HOSTS)); then echo "skipping $config: it needs $((WORKERS + 1)) hosts"; continue; fi
      runs+=("ps 1 off $partition turn") ;;
    ps[0-9]*)
      k=${config#ps}
      if ((WORKERS + k > HOSTS)); then
        echo "skipping $config: it needs $((WORKERS + k)) hosts, the cluster has $HOSTS"
        continue
      fi
      for o in $OVERLAP; do runs+=("ps $k $o $partition"); done ;;
    ddp) runs+=("ddp 0 on 0") ;;
    *) echo "bench_cluster_bounds: unknown configuration '$config' in CONFIGS" >&2; exit 2 ;;
  esac
done

results="$work/results.jsonl"
[[ -z ${TIMELINE_DIR:-} ]] || mkdir -p "$TIMELINE_DIR"
for ((i = 1; i <= REPS; i++)); do
  for run in "${runs[@]}"; do
    read -r architecture servers overlap partition turn <<< "$run"
    if [[ $architecture == ddp ]]; then
      ddp
      "$PYTHON" "$BOUNDS" ddp "$work/ddp.0" --label ddp >> "$results"
    else
      timeline=
      if [[ -n ${TIMELINE_DIR:-} ]]; then
        timeline=$TIMELINE_DIR/$architecture-k$servers-$overlap-p$partition-${turn:-once}-rep$i.json
      fi
      if ! ours "$architecture" "$servers" "$overlap" "$partition" "$work/events" "${turn:-once}" "$timeline"; then
        echo "rep $i: $architecture $servers $overlap $partition failed; its events:" >&2
        cat "$work/events" >&2
        continue
      fi
      "$PYTHON" "$BOUNDS" bound "$work/events" --bandwidth-bytes-per-s "$bandwidth" --alpha-s "$alpha_s" \
          --burst-s "$burst_s" --cpu "$CPU" >> "$results"
    fi
    tail -1 "$results" | "$PYTHON" "$BOUNDS" line --prefix "rep $i: "
  done
done

if [[ -n ${KEEP:-} ]]; then cp "$results" "$KEEP"; fi
printf '\n%d workers, batch %d, %d hosts at %s core, %s links; medians of %d runs\n' \
  "$WORKERS" "$BATCH" "$HOSTS" "$CPU" "$NETWORK" "$REPS"
"$PYTHON" "$BOUNDS" table "$results"
