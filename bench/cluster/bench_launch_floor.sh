#!/usr/bin/env bash
# The floor under launching a job on many hosts of an emulated cluster: what
# the ssh starts and Open MPI's daemons alone cost, whatever dmlbench does
# around them. Brings up HOSTS hosts, uncapped (a launch runs with the
# hosts' quota lifted), and times, each REPS times (medians), wall clock and
# the CPU of everything involved (this machine's ssh clients and mpirun, the
# hosts' sshd, orted and `true`, all counted in one cpuacct cgroup):
#   ssh, new connection   one ssh `true` to every host at once, each with a
#                         key exchange of its own (ControlMaster=no)
#   ssh, ControlMaster    the same through the connections kept open, as the
#                         cluster's ssh options keep them (ControlPersist)
#   mpirun, 1 host        `mpirun true` on one host: mpirun, one ssh, one orted
#   mpirun, HOSTS hosts   `mpirun true`, a rank on every host
# and prints the least time a launch on HOSTS hosts can take on this
# machine's cores: the CPU of the HOSTS-host mpirun over the cores. Needs
# root and cgroup v1's cpuacct controller.
#   bench/cluster/bench_launch_floor.sh path/to/dmlbench
#   env: HOSTS (64), REPS (5), VARIANTS: Open MPI settings to try on the
#   HOSTS-host mpirun, ';' between variants (e.g. "--mca routed direct;
#   --mca plm_rsh_no_tree_spawn 1"), each timed as mpirun_all is, the
#   variants and mpirun_all in turn within each repetition
set -euo pipefail
DMLBENCH=$1
PYTHON=${PYTHON:-python3}
HOSTS=${HOSTS:-64}
REPS=${REPS:-5}
acct_root=/sys/fs/cgroup/cpuacct
if [[ ! -f $acct_root/cpuacct.usage ]]; then
  echo "$(basename "$0"): needs cgroup v1's cpuacct controller at $acct_root" >&2
  exit 2
fi
# This shell, and so the hosts' sshd and every process started below, in a
# cpuacct group of its own: its usage is the CPU of all of them.
# Groups left by runs that ended before their own cleanup, once empty.
rmdir "$acct_root"/launch-floor-* 2> /dev/null || true
acct="$acct_root/launch-floor-$$"
mkdir "$acct"
echo $$ > "$acct/cgroup.procs"
# shellcheck source=cluster_lib.sh
source "$(dirname "$0")/cluster_lib.sh"
release_acct() {
  cluster_cleanup
  echo $$ > "$acct_root/cgroup.procs"
  rmdir "$acct" 2>/dev/null || true
}

cluster_up fl "$HOSTS" 1gbit ""
trap release_acct EXIT
rsh_args=
for ((i = 0; i + 1 < ${#mpi_args[@]}; ++i)); do
  [[ ${mpi_args[i]} == plm_rsh_args ]] && rsh_args=${mpi_args[i + 1]}
done
read -r -a ssh_options <<< "$rsh_args"
all_hosts=$(hosts_list "$HOSTS")

ssh_all() {
  local address
  for address in "${addresses[@]}"; do ssh "${ssh_options[@]}" "$@" -- "$address" true & done
  wait
}
new_connections() { ssh_all -o ControlMaster=no -o ControlPath=none; }
control_master() { ssh_all; }
mpirun_one() { mpirun "${mpi_args[@]}" --host "${addresses[0]}" -np 1 true; }
mpirun_all() { mpirun "${mpi_args[@]}" "$@" --host "$all_hosts" -np "$HOSTS" true; }
IFS=';' read -r -a variants <<< "${VARIANTS:-}"

# Prints "wall_s cpu_s" of one run of "$@".
measure() {
  local t0 t1 u0 u1
  u0=$(cat "$acct/cpuacct.usage")
  t0=$(date +%s.%N)
  "$@" > /dev/null
  t1=$(date +%s.%N)
  u1=$(cat "$acct/cpuacct.usage")
  echo "$t0 $t1 $u0 $u1" | awk '{ printf "%.3f %.3f\n", $2 - $1, ($4 - $3) / 1e9 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

control_master  # opens the kept connections
echo "ssh options (mpirun's plm_rsh_args): $rsh_args"
printf '%d hosts, uncapped, %d cores; median of %d (wall, CPU of all processes involved)\n' "$HOSTS" "$(nproc)" "$REPS"
declare -A wall cpu
for what in new_connections control_master mpirun_one mpirun_all; do
  for ((r = 0; r < REPS; ++r)); do measure "$what"; done > "$work/$what.txt"
  wall[$what]=$(cut -d' ' -f1 "$work/$what.txt" | median)
  cpu[$what]=$(cut -d' ' -f2 "$work/$what.txt" | median)
  per=$HOSTS
  [[ $what == mpirun_one ]] && per=1
  awk -v w="${wall[$what]}" -v c="${cpu[$what]}" -v p="$per" -v what="$what" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
    'BEGIN { printf "%-16s wall %6.2f s  CPU %6.2f s (%5.1f ms a host)  load average %s\n", what, w, c, c * 1e3 / p, load }'
done
if ((${#variants[@]})); then
  for ((r = 0; r < REPS; ++r)); do
    measure mpirun_all >> "$work/variant-base.txt"
    for ((v = 0; v < ${#variants[@]}; ++v)); do
      read -r -a extra <<< "${variants[v]}"
      measure mpirun_all "${extra[@]}" >> "$work/variant-$v.txt"
    done
  done
  for v in base $(seq 0 $((${#variants[@]} - 1))); do
    label="as the cluster's"
    [[ $v != base ]] && label=${variants[v]}
    awk -v w="$(cut -d' ' -f1 "$work/variant-$v.txt" | median)" -v c="$(cut -d' ' -f2 "$work/variant-$v.txt" | median)" \
      -v label="$label" 'BEGIN { printf "mpirun_all, %-40s wall %6.2f s  CPU %6.2f s\n", label, w, c }'
  done
fi
awk -v c="${cpu[mpirun_all]}" -v n="$(nproc)" -v h="$HOSTS" \
  'BEGIN { printf "floor of a launch on %d hosts: %.2f s (its CPU over %d cores)\n", h, c / n, n }'
