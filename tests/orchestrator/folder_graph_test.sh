#!/usr/bin/env bash
# scripts/check-layers on a made-up tree with a folder cycle (it must fail and
# name the folders), then on this repository (it must pass).
set -euo pipefail
source_dir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/orchestrator/a" "$tmp/orchestrator/b" "$tmp/orchestrator/c"
echo '#include "orchestrator/b/b.h"' > "$tmp/orchestrator/a/a.h"
echo '#include "orchestrator/c/c.h"' > "$tmp/orchestrator/b/b.h"
echo '#include "orchestrator/a/a.h"' > "$tmp/orchestrator/c/c.cc"
if "$source_dir/scripts/check-layers" "$tmp" >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: a cycle a -> b -> c -> a was accepted"; cat "$tmp/out"; exit 1
fi
for folder in orchestrator/a orchestrator/b orchestrator/c; do
  grep -q "$folder" "$tmp/err" || { echo "FAIL: the cycle message does not name $folder:"; cat "$tmp/err"; exit 1; }
done
rm "$tmp/orchestrator/c/c.cc"
# The last file read includes a header of its own folder only.
echo '#include "orchestrator/c/c.h"' > "$tmp/orchestrator/c/z.h"
"$source_dir/scripts/check-layers" "$tmp" >/dev/null || { echo "FAIL: a tree without a cycle was refused"; exit 1; }
"$source_dir/scripts/check-layers" "$source_dir"
