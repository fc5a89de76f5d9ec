#!/usr/bin/env bash
# The cluster benchmarks from a checkout and a build under /tmp, of which
# every emulated host has its own (so are /dev/shm and root's home). Runs
# bench/cluster/bench_cluster_bounds.sh from copies under /tmp: one ring run
# on 2 hosts must end in its table, the trainer uploaded to the hosts
# (without the upload mpirun cannot find it there: "could not access or
# execute an executable"); and a TIMELINE_DIR under /tmp must be refused at
# start, naming it, before a cluster is made.
#   cluster_bench_under_tmp_test.sh SOURCE_DIR DMLBENCH TRAINER LINKPROBE
set -euo pipefail
source_dir=$1 dmlbench=$2 trainer=$3 linkprobe=$4
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: the emulated cluster needs root"
  exit 77
fi
tmp=$(mktemp -d /tmp/dmlbench-bench-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# The build's layout, so that dmlbench finds the link probe beside the trainer.
mkdir -p "$tmp/src" "$tmp/build/orchestrator" "$tmp/build/trainer"
cp -r "$source_dir/bench" "$tmp/src/bench"
cp "$dmlbench" "$tmp/build/orchestrator/dmlbench"
cp "$trainer" "$linkprobe" "$tmp/build/trainer/"
bounds=("$tmp/src/bench/cluster/bench_cluster_bounds.sh" "$tmp/build/orchestrator/dmlbench"
        "$tmp/build/trainer/dmlbench-trainer")
export HOSTS=2 WORKERS=2 CPU=0.4 NETWORK=1gbit CONFIGS=ring OVERLAP=off REPS=1 EPOCH_S=0.1

# A timeline directory the hosts would write into their own /tmp: refused
# at once (exit status 2), with this message alone.
home=$(getent passwd root | cut -d: -f6)
expected="bench_cluster_bounds.sh: TIMELINE_DIR $tmp/timelines lies under /tmp, /dev/shm or $home, of which\
 every emulated host has its own: what the hosts write there never reaches this machine; give a directory elsewhere"
status=0
out=$(TIMELINE_DIR="$tmp/timelines" "${bounds[@]}" 2>&1) || status=$?
if [[ $status -ne 2 || $out != "$expected" ]]; then
  echo "FAIL: expected exit status 2 and"; echo "$expected"; echo "got $status and"; echo "$out"; exit 1
fi

# One ring run, the trainer started from the hosts' own copies.
if ! out=$("${bounds[@]}" 2>&1); then
  echo "FAIL: bench_cluster_bounds.sh from under /tmp failed:"; echo "$out"; exit 1
fi
if ! grep -qE '^ring +' <<< "$out" || grep -q 'could not access or execute' <<< "$out"; then
  echo "FAIL: no table row for ring:"; echo "$out"; exit 1
fi
echo "$out" | tail -n 4
