#!/usr/bin/env bash
# What a change of network profile costs the cluster launcher's link shaping,
# the two ways it can be done: tc's delete and add of each end's root qdisc
# (every change before, and still every change to or from a delay), and one
# `qdisc replace` of a token bucket in place (a rate to another rate). HOSTS
# veth pairs, one end in a namespace of its own, no traffic, no bridge; the
# hosts are reshaped in parallel as ReshapeCluster does, the two ways in turn,
# between 100 Mbit/s and 1 Gbit/s with the launcher's burst and limit.
# Prints the median seconds of one cluster-wide reshape each way. Needs root.
#   bench/cluster/bench_link_reshape.sh      env: HOSTS (11), REPS (10)
set -euo pipefail
HOSTS=${HOSTS:-11}
REPS=${REPS:-10}
prefix=dmlbrs$$
cleanup() {
  for ((i = 1; i <= HOSTS; i++)); do
    ip link del "$prefix-$i" 2>/dev/null || true
    ip netns del "$prefix-h$i" 2>/dev/null || true
  done
}
trap cleanup EXIT
for ((i = 1; i <= HOSTS; i++)); do
  ip netns add "$prefix-h$i"
  ip link add "$prefix-$i" type veth peer name eth0 netns "$prefix-h$i"
  ip link set "$prefix-$i" up
  ip -n "$prefix-h$i" link set eth0 up
done

tbf() {  # rate in bit/s: the launcher's burst (1 ms, at least 16 KiB) and limit (200 ms, at least 16 MiB, + burst)
  awk -v r="$1" 'BEGIN { b = r / 8 / 1000; if (b < 16384) b = 16384; l = r / 8 * 0.2; if (l < 16777216) l = 16777216;
                         printf "tbf rate %dbit burst %d limit %d", r, b, l + b }'
}
shape_host() {  # host index, way, rate
  local shape
  shape=$(tbf "$3")
  if [[ $2 == replace ]]; then
    tc qdisc replace dev "$prefix-$1" root handle 10: $shape
    tc -n "$prefix-h$1" qdisc replace dev eth0 root handle 10: $shape
  else
    tc qdisc del dev "$prefix-$1" root 2>/dev/null || true
    tc qdisc add dev "$prefix-$1" root handle 10: $shape
    tc -n "$prefix-h$1" qdisc del dev eth0 root 2>/dev/null || true
    tc -n "$prefix-h$1" qdisc add dev eth0 root handle 10: $shape
  fi
}
reshape() {  # way, rate: seconds for every host
  local start
  start=$(date +%s.%N)
  for ((i = 1; i <= HOSTS; i++)); do shape_host "$i" "$1" "$2" & done
  wait
  echo "$(date +%s.%N) - $start" | bc -l
}
reshape delete-add 1000000000 > /dev/null
: > "/tmp/$prefix-delete-add"
: > "/tmp/$prefix-replace"
for ((rep = 1; rep <= REPS; rep++)); do
  rate=$((rep % 2 ? 100000000 : 1000000000))
  for way in delete-add replace; do reshape "$way" "$rate" >> "/tmp/$prefix-$way"; done
done
for way in delete-add replace; do
  printf '%-10s median %.3f s per reshape of %d hosts (%d reshapes)\n' "$way" \
    "$(sort -g "/tmp/$prefix-$way" | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')" \
    "$HOSTS" "$REPS"
  rm -f "/tmp/$prefix-$way"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
