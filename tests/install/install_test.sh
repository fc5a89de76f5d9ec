#!/usr/bin/env bash
# Installs into a fresh prefix, then runs the installed dmlbench on a tiny
# matrix into a new database, and regenerates the report with the installed
# dmlbench and report definition, with the source and build trees hidden (a
# private mount namespace lays an empty tmpfs over both). The database must
# come out at the schema version of the installed migrations.
# The installed trainer must be the built one byte for byte: its sha256 is
# part of every run key, so runs finished with one are finished with the other.
#   install_test.sh SOURCE_DIR BUILD_DIR CMAKE TRAINER
set -euo pipefail
source_dir=$1 build_dir=$2 cmake=$3 trainer=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }
for f in bin/dmlbench bin/dmlbench-trainer bin/dmlbench-linkprobe; do
  [[ -x $work/prefix/$f ]] || { echo "not installed or not executable: $f"; exit 1; }
done
for f in share/dmlbench/experiments/quickstart.toml share/dmlbench/reports/report.toml \
         share/dmlbench/reports/sql/views.sql share/dmlbench/reports/figures/throughput.gp \
         share/dmlbench/schemas/database.md share/dmlbench/schemas/migrations/001_initial.sql; do
  [[ -s $work/prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done
built=$(sha256sum <"$trainer" | cut -d' ' -f1)
installed=$(sha256sum <"$work/prefix/bin/dmlbench-trainer" | cut -d' ' -f1)
if [[ $built != "$installed" ]]; then
  echo "the installed trainer differs from the built one (sha256 $installed, built $built):"
  echo "every run finished with one would be pending with the other"
  exit 1
fi
migrations=$(ls "$work/prefix/share/dmlbench/schemas/migrations" | wc -l)

mkdir "$work/elsewhere"
cat > "$work/elsewhere/tiny.toml" <<'TOML'
[experiment]
name = "install-test"
[defaults]
epochs = 1
batch_size = 20
hidden = [16]
max_iterations_per_epoch = 3
dataset = "synthetic"
[matrix]
architecture = ["ring"]
workers = [1, 2]
[execution]
provider = "local"
timeout_s = 120
attempts = 1
TOML

# What a user of the installed tree does, in $work/elsewhere.
cat > "$work/use_installed.sh" <<SCRIPT
set -euo pipefail
cd "$work/elsewhere"
"$work/prefix/bin/dmlbench" --db results.db run tiny.toml >run.log 2>&1 || { cat run.log; exit 1; }
finished=\$("$work/prefix/bin/dmlbench" --db results.db query --csv \\
  "SELECT count(*) AS n FROM attempts WHERE status = 'ok'" | tail -1)
[[ \$finished == 2 ]] || { echo "expected 2 finished runs, got \$finished"; cat run.log; exit 1; }
version=\$(sqlite3 results.db "PRAGMA user_version")
[[ \$version == $migrations ]] || { echo "schema version \$version, expected $migrations"; exit 1; }
"$work/prefix/bin/dmlbench" --db results.db report report >/dev/null
# The definition is the installed one, found beside the program: its help
# names no path of the source tree.
if "$work/prefix/bin/dmlbench" report --help | grep -qF "$source_dir"; then
  echo "report --help names the source tree:"; "$work/prefix/bin/dmlbench" report --help; exit 1
fi
[[ -s report/tables/configurations.csv && -s report/figures/throughput.svg ]] || { echo "no report"; exit 1; }
SCRIPT

if [[ $(id -u) != 0 ]]; then
  # Without root there is no mount namespace: check what can be checked,
  # then report the test as skipped (exit 77).
  bash "$work/use_installed.sh"
  echo "install test: ran with the source tree visible (hiding it needs root): skipped"
  exit 77
fi
export source_dir build_dir work
unshare --mount --propagation private bash -c '
set -euo pipefail
mount -t tmpfs dmlbench-hidden "$build_dir"   # first: it may lie inside the source tree
mount -t tmpfs dmlbench-hidden "$source_dir"
[[ -z $(ls -A "$source_dir") ]] || { echo "the source tree is still visible"; exit 1; }
bash "$work/use_installed.sh"
'
echo "install test passed"
