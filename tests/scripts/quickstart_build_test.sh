#!/usr/bin/env bash
# scripts/quickstart builds the two programs it runs (dmlbench and the
# trainer) and nothing else before its runs; tests and benchmarks are built
# by scripts/test. cmake and dmlbench are replaced by recorders (a cmake
# first on PATH, a dmlbench in the build directory), so the test checks what
# the script asks for without building; the package check is the real one.
#   quickstart_build_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bin" "$work/build/orchestrator"
cat > "$work/bin/cmake" <<SCRIPT
#!/usr/bin/env bash
echo "cmake \$*" >> "$work/calls"
SCRIPT
cat > "$work/build/orchestrator/dmlbench" <<SCRIPT
#!/usr/bin/env bash
echo "dmlbench \$*" >> "$work/calls"
SCRIPT
chmod +x "$work/bin/cmake" "$work/build/orchestrator/dmlbench"

PATH="$work/bin:$PATH" DMLBENCH_BUILD_DIR="$work/build" "$source_dir/scripts/quickstart" --db "$work/r.db" \
  >"$work/out" 2>&1 || { cat "$work/out"; exit 1; }
expected="cmake -S . -B $work/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build $work/build -j$(nproc) --target dmlbench dmlbench-trainer
dmlbench run experiments/quickstart.toml --db $work/r.db"
if [[ $(cat "$work/calls") != "$expected" ]]; then
  echo "expected:"
  echo "$expected"
  echo "got:"
  cat "$work/calls"
  exit 1
fi
echo "quickstart builds dmlbench and the trainer only, then runs"
