#!/usr/bin/env bash
# The configure step names the Debian package of every missing dependency
# (cmake/Dependencies.cmake), instead of failing half-way through the build.
# Configures this source tree into scratch build directories twice:
#   1. with Eigen hidden (CMAKE_DISABLE_FIND_PACKAGE_Eigen3): configure fails
#      and names libeigen3-dev, and only it;
#   2. with every package hidden and the program directories ignored
#      (CMAKE_IGNORE_PATH): configure fails and names every package.
#   missing_dependency_test.sh SOURCE_DIR CMAKE GENERATOR MAKE_PROGRAM C_COMPILER CXX_COMPILER
# (the compilers and the build tool are given so that hiding /usr/bin does
# not hide them).
set -euo pipefail
source_dir=$1 cmake=$2 generator=$3 make_program=$4 cc=$5 cxx=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# configure NAME ARGS...: expects failure; the output is in $work/NAME.log.
configure() {
  local name=$1
  shift
  if "$cmake" -S "$source_dir" -B "$work/$name" -G "$generator" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
       -DCMAKE_MAKE_PROGRAM="$make_program" "$@" >"$work/$name.log" 2>&1; then
    echo "configure succeeded with $*"
    exit 1
  fi
}
# The packages named on the message's list lines ("  <package>: <what>").
named() { sed -nE 's/^ +([a-z0-9][a-z0-9.+-]+): .*/\1/p' "$work/$1.log" | sort | tr '\n' ' '; }

configure one -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON
if [[ $(named one) != "libeigen3-dev " ]]; then
  echo "with Eigen hidden, expected exactly libeigen3-dev to be named, got: $(named one)"
  cat "$work/one.log"
  exit 1
fi
grep -q "missing Debian packages: libeigen3-dev" "$work/one.log" || { cat "$work/one.log"; exit 1; }
grep -q "Install them with \`apt-get install libeigen3-dev\`" "$work/one.log" || { cat "$work/one.log"; exit 1; }

hide=()
for package in MPI ZLIB OpenSSL SQLite3 SQLiteCpp tomlplusplus libssh CLI11 nlohmann_json GTest Eigen3 PkgConfig; do
  hide+=("-DCMAKE_DISABLE_FIND_PACKAGE_$package=ON")
done
configure all "${hide[@]}" "-DCMAKE_IGNORE_PATH=/usr/bin;/usr/sbin;/bin;/sbin;/usr/local/bin;/usr/local/sbin" \
  -DDMLBENCH_DATASET_DIR="$work/no-dataset"
expected="dataset-fashion-mnist gnuplot-nox iproute2 libcli11-dev libeigen3-dev libgtest-dev libopenblas-dev \
libopenmpi-dev libsqlite3-dev libsqlitecpp-dev libssh-dev libssl-dev libtomlplusplus-dev nlohmann-json3-dev \
openmpi-bin openssh-client openssh-server pkg-config sqlite3 zlib1g-dev "
if [[ $(named all) != "$expected" ]]; then
  echo "with everything hidden, expected: $expected"
  echo "got:                              $(named all)"
  cat "$work/all.log"
  exit 1
fi
echo "missing dependencies are named by their Debian packages"
