#!/usr/bin/env bash
# The built trainer holds neither the source nor the build directory's path
# (debug information, __FILE__, RUNPATH): what would make its sha256, and so
# every run key, depend on where the project was built.
#   trainer_paths_test.sh TRAINER SOURCE_DIR BUILD_DIR [release|sanitized]
# A sanitized build is skipped (exit 77): AddressSanitizer's descriptors of
# instrumented globals keep their header's full path (GCC 12 does not apply
# -ffile-prefix-map to them), and no run key comes from such a build.
set -euo pipefail
trainer=$1 source_dir=$2 build_dir=$3 kind=${4:-release}
if [[ $kind == sanitized ]]; then
  echo "sanitized build: AddressSanitizer keeps header paths; skipped"
  exit 77
fi
status=0
for dir in "$source_dir" "$build_dir"; do
  count=$({ grep -a -o -F -- "$dir/" "$trainer" || true; } | wc -l)
  if [[ $count != 0 ]]; then
    echo "$trainer holds $dir/ $count times, e.g.:"
    strings -a "$trainer" | grep -F -- "$dir/" | head -n 3
    status=1
  fi
done
[[ $status == 0 ]] && echo "no path of the source or build directory in $trainer"
exit $status
