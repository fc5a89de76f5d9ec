# Sourced by the benchmarks that run on an emulated cluster of their own
# (bench_cluster_bounds.sh, bench_overlap_cluster.sh, bench_poll_cluster.sh,
# bench_mpi_phases.sh): bring it up, read its inventory, probe its links,
# and take it down on exit whatever happens. The caller sets DMLBENCH (the
# dmlbench binary) and PYTHON first.
#
#   cluster_up PREFIX HOSTS BANDWIDTH CPU
#       `dmlbench cluster up` under a name made of PREFIX and this shell's
#       pid, its state in a fresh $work directory (CPU empty: uncapped), its
#       output in $work/cluster-up.txt. Sets name, work, state; the hosts'
#       inventory as the arrays addresses, names and mpi_args; exports the
#       environment every mpirun dmlbench starts gets. On exit the cluster
#       goes down and $work is removed, after the caller's
#       cluster_before_down, if it defines one.
#       PIN=off in the environment brings it up with --no-pin: every host
#       free to run on any CPU (default: host i on CPU i mod the CPUs).
#       SLURM=on brings it up with --slurm (a Slurm whose nodes are the
#       hosts; up's output, $work/cluster-up.txt, ends with its SLURM_CONF).
#   inventory EXPR      runs Python with the inventory loaded as `inv`
#   inventory_lines EXPR  one line per item of the iterable EXPR
#   hosts_list N        the first N hosts' addresses, comma-separated
#   cluster_probe       `dmlbench cluster probe` of the links (the hosts'
#                       quota is lifted while it measures): sets alpha_us
#                       and bandwidth_mb, or fails naming the output
#   cluster_upload FILE [NAME]
#                       copies FILE into every host's own work directory (as
#                       NAME; default its own name), as `dmlbench run`
#                       provisions the trainer, and prints the path the hosts
#                       see it at. Whatever a host starts by path must be
#                       uploaded: each host has its own /tmp, /dev/shm and
#                       home (root's), so a checkout or build there does not
#                       exist on the hosts.
#   hosts_see_dir DIR WHAT
#                       fails at once, saying why, unless the hosts see DIR
#                       as this machine does (not under /tmp, /dev/shm or
#                       root's home): for directories the hosts write into,
#                       such as a timeline directory. Usable before cluster_up.

cluster_cleanup() {
  if declare -F cluster_before_down >/dev/null; then cluster_before_down; fi
  "$DMLBENCH" cluster --name "$name" --state-dir "$state" down >/dev/null 2>&1 || true
  rm -rf "$work"
}

inventory() {
  "$PYTHON" -c "import sys, tomllib; inv = tomllib.load(open(sys.argv[1], 'rb')); $1" "$state/inventory.toml"
}

# One line per item of the Python iterable EXPR (none when it is empty).
inventory_lines() { inventory "sys.stdout.write(''.join(str(x) + '\\n' for x in $1))"; }

hosts_list() { local IFS=,; echo "${addresses[*]:0:$1}"; }

cluster_up() {
  local prefix=$1 hosts=$2 bandwidth=$3 cpu=$4
  name="$prefix$(( $$ % 10000 ))"
  work=$(mktemp -d)
  state="$work/cluster"
  trap cluster_cleanup EXIT
  local share=()
  [ -n "$cpu" ] && share=(--cpu "$cpu")
  [ "${PIN:-on}" = off ] && share+=(--no-pin)
  [ "${SLURM:-off}" = on ] && share+=(--slurm)
  "$DMLBENCH" cluster --name "$name" --state-dir "$state" up --hosts "$hosts" --bandwidth "$bandwidth" \
      "${share[@]}" > "$work/cluster-up.txt"
  mapfile -t addresses < <(inventory_lines '(h["address"] for h in inv["host"])')
  mapfile -t names < <(inventory_lines '(h["name"] for h in inv["host"])')
  mapfile -t mpi_args < <(inventory_lines 'inv.get("mpi_args", [])')
  hosts_work_dir=$(inventory 'print(inv["work_dir"])')
  hosts_home=$(inventory 'print(inv["emulated_cluster"]["host_home"])')
  # As for every mpirun dmlbench starts (kMpirunEnvironment, orchestrator/launch/launcher.h).
  export OMPI_MCA_rtc_hwloc_vmhole=none
}

cluster_probe() {
  local probe
  probe=$("$DMLBENCH" --db "$work/probe.db" cluster --name "$name" --state-dir "$state" probe --seconds-per-size 0.2)
  read -r alpha_us bandwidth_mb < <(sed -nE 's/.*alpha ([0-9.]+) us +B ([0-9.]+) MB\/s.*/\1 \2/p' <<< "$probe")
  if [[ -z ${bandwidth_mb:-} ]]; then
    echo "$(basename "$0"): cannot read alpha and B from the probe's output: $probe" >&2
    exit 1
  fi
}

cluster_upload() {
  local file=$1 as=${2:-$(basename "$1")} host dir
  if [[ $hosts_work_dir != "$hosts_home"/* ]]; then
    echo "$(basename "$0"): the hosts' work directory $hosts_work_dir is not in their home $hosts_home" >&2
    exit 1
  fi
  for host in "${names[@]}"; do
    # The host's home as this machine sees it (ClusterState::host_dir).
    dir="$state/$host/home/${hosts_work_dir#"$hosts_home"/}"
    if ! { mkdir -p "$dir" && cp "$file" "$dir/$as.tmp" && mv "$dir/$as.tmp" "$dir/$as"; }; then
      echo "$(basename "$0"): cannot upload $file to host $host" >&2
      exit 1
    fi
  done
  echo "$hosts_work_dir/$as"
}

hosts_see_dir() {
  local dir home
  dir=$(realpath -m "$1")
  home=$(getent passwd root | cut -d: -f6)
  case "$dir/" in
    /tmp/* | /dev/shm/* | "${home:-/root}"/*)
      echo "$(basename "$0"): $2 $1 lies under /tmp, /dev/shm or ${home:-/root}, of which every emulated host" \
           "has its own: what the hosts write there never reaches this machine; give a directory elsewhere" >&2
      exit 2 ;;
  esac
}
